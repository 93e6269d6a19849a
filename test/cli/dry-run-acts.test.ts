/**
 * `npm start -- --dry-run` acts on nothing outside (section 1), through its real doors: the built
 * CLI as a process, with a config whose webhook is a receiver here and whose identity provider is
 * the stand-in here, and its own emulator as the upstream. Its API refuses an account action, an
 * event action and an asset toggle (409 `dry_run`), and neither the emulator's request log nor the
 * stand-in saw a call, nor does the audit show one; a read still works. Beside it, in the same
 * folder, `events ignore` exits 2 saying so, and `poll events --once`
 * runs as a dry run on its table: new events are shown as not sent, and the receiver hears nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalDeployment } from '../../lib/cli/local.ts';
import { systemClock } from '../../lib/clock.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { BIN, cleanEnv, runCliProcess } from '../helpers/cli-process.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const LOGIN = 'kim@acme.test';
let folder: string;
let start: ChildProcess | undefined;
let out = '';
let idp: IdentityProviders;
let hook: Receiver;
let local: Required<Pick<LocalDeployment, 'dynamodb' | 'tableName' | 'upstream' | 'api'>> & LocalDeployment;

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 50));
  return check();
}

beforeAll(async () => {
  [idp, hook] = await Promise.all([
    identityProviders({ entra: { users: [{ userPrincipalName: LOGIN }] } }),
    startReceiver(),
  ]);
  folder = await mkdtemp(join(tmpdir(), 'ea-dry-run-acts-'));
  await mkdir(join(folder, '.data'));
  await writeFile(
    join(folder, 'alerts.config.json'),
    JSON.stringify({
      sources: { tenantEvents: { enabled: true } },
      destinations: { hook: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', match: {}, to: ['hook'] }],
      identity: { providers: idp.providers({ entra: ['acme.test'] }) },
    }),
  );
  await writeFile(join(folder, 'secrets.json'), JSON.stringify(idp.secrets));
  start = spawn(process.execPath, [BIN, 'start', '--dry-run'], {
    cwd: folder,
    env: cleanEnv({ PORT: '0', LOG_LEVEL: 'warn', SECRETS_FILE: 'secrets.json' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout?.on('data', (d) => {
    out += d;
  });
  start.stderr?.on('data', (d) => {
    out += d;
  });
  expect(await until(() => /Ctrl-C stops it/.test(out), 8_000), out).toBe(true);
  local = JSON.parse(readFileSync(join(folder, '.data', 'local.json'), 'utf8')) as typeof local;
  // A stored verdict, as a credentials poll leaves one, so the login counts as leaked.
  const dynamo = createDynamoClient({ endpoint: local.dynamodb });
  try {
    await new IdentityStore({ client: dynamo, tableName: local.tableName, clock: systemClock }).keepVerdicts(
      [
        {
          key: 'cred-1',
          scope: 'top',
          login: LOGIN,
          verdict: { provider: 'corp', verdict: 'at_risk', leakDate: '2026-01-02' },
        },
      ],
      true,
    );
  } finally {
    dynamo.destroy();
  }
}, 15_000);

afterAll(async () => {
  if (start && start.exitCode === null) {
    const exited = new Promise((resolve) => start?.once('exit', resolve));
    start.kill('SIGINT');
    await exited;
  }
  await Promise.all([idp?.close(), hook?.close()]);
});

const api = (path: string, body?: unknown) =>
  fetch(`${local.api.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      Authorization: `Bearer ${local.api.token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const upstreamActs = async () => {
  const log = (await (await fetch(`${local.upstream.url}/_emulator/requests`)).json()) as {
    requests: { endpoint: string }[];
  };
  return log.requests.filter((r) => r.endpoint === 'eventActions' || r.endpoint === 'assetToggle');
};

describe('npm start -- --dry-run', () => {
  it('says so in the folder, and its API refuses what would act outside: 409 dry_run, no call, no audit', async () => {
    const refused = await Promise.all([
      api('/identity/actions', { action: 'revokeSessions', logins: [LOGIN] }),
      api('/events/actions', { action: 'ignore', uids: ['leak/acme/1'] }),
      api('/assets/1/toggle', { is_disabled: true }),
    ]);
    for (const res of refused) {
      const body = (await res.json()) as { error?: { code: string } };
      expect([res.status, body.error?.code], JSON.stringify(body)).toEqual([409, 'dry_run']);
    }
    expect(idp.requests).toEqual([]);
    expect(await upstreamActs()).toEqual([]);
    const audit = await api('/audit');
    expect(audit.status).toBe(200);
    expect(((await audit.json()) as { items: unknown[] }).items).toEqual([]);
    // A read works as usual, and says it is a dry run; so does the folder's record.
    const who = await api('/whoami');
    expect(await who.json()).toMatchObject({ dryRun: true });
    expect(local).toMatchObject({ dryRun: true, tableName: expect.stringMatching(/-dry-run$/) });
  });

  it('beside it: an acting command exits 2 saying so; poll runs as a dry run on its table', async () => {
    const ignoring = runCliProcess(['events', 'ignore', 'leak/acme/1'], { cwd: folder });
    // Its first events cycle shown (as it would send it): the stream is free, and the next is 30 s away.
    expect(await until(() => /dry run: would send this/.test(out), 8_000), out).toBe(true);
    await fetch(`${local.upstream.url}/_emulator/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ count: 2 }),
    });
    const poll = await runCliProcess(['poll', 'events', '--once', '--max-seconds', '20'], { cwd: folder });
    // Every other refusing command: dry-run-beside.test.ts, in one process.
    const ignore = await ignoring;
    expect(ignore.code, ignore.err).toBe(2);
    expect(ignore.err).toContain(
      `a dry run (npm start -- --dry-run, pid ${start?.pid}) holds .data/ here: events ignore would act outside, so nothing was done`,
    );
    expect(poll.code, poll.err).toBe(0);
    expect(poll.err).toContain('poll events runs as a dry run on its table');
    expect(poll.err).toContain(`DynamoDB at ${local.dynamodb}`);
    expect(poll.out).toContain(
      '── hook (webhook, dry run: would send this; as hook would receive it: exposure-alerts preview .data/dry-run/hook-',
    );
    expect(hook.requests).toEqual([]);
    expect(idp.requests).toEqual([]);
    expect(await upstreamActs()).toEqual([]);
  }, 15_000);
});
