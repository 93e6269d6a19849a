/**
 * `identity revoke-sessions` in the folder of a running `npm start`, with nothing configured: the
 * command finds the local deployment (its table, its emulator standing in for the demo config's
 * identity providers, their local secrets), and acts on an at-risk demo login that npm start's
 * own credentials poll looked up; npm start's API acts at once with the same providers. Both are
 * real processes of the built CLI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { unmarshall } from '../../lib/state/marshall.ts';
import { ScanCommand } from '../../lib/state/sdk.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { BIN, cleanEnv, runCliProcess } from '../helpers/cli-process.ts';

const SOAR = randomBytes(24).toString('base64url');
let start: ChildProcess | undefined;
afterAll(async () => {
  if (start && start.exitCode === null) {
    const exited = new Promise((resolve) => start?.once('exit', resolve));
    start.kill('SIGINT');
    await exited;
  }
});

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 100));
  return check();
}

describe('identity <action> beside npm start', () => {
  it('acts on an at-risk demo login through the local deployment’s providers', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'ea-identity-act-local-'));
    await mkdir(join(folder, '.data'));
    // An API client granted identity:act by name (npm start's own demo token is a bare digest).
    const secrets = join(folder, 'secrets.json');
    await writeFile(
      secrets,
      JSON.stringify({ apiClients: { soar: { digest: sha256Hex(SOAR), scopes: ['identity:act'] } } }),
    );
    start = spawn(process.execPath, [BIN, 'start'], {
      cwd: folder,
      env: cleanEnv({ PORT: '0', LOG_LEVEL: 'warn', SECRETS_FILE: secrets }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    start.stdout?.on('data', (d) => {
      out += d;
    });
    start.stderr?.on('data', (d) => {
      out += d;
    });
    // The first credentials cycle runs at once, its logins looked up in the demo providers.
    expect(await until(() => /leaked logins/.test(out), 20_000), out).toBe(true);
    const local = JSON.parse(readFileSync(join(folder, '.data', 'local.json'), 'utf8')) as {
      dynamodb: string;
      tableName: string;
      api: { url: string };
    };
    const dynamo = createDynamoClient({ endpoint: local.dynamodb });
    let login: string | undefined;
    try {
      // Which demo login is at risk: the index of leaked logins the poll wrote (a Scan, fine here).
      const scan = await dynamo.send(new ScanCommand({ TableName: local.tableName }));
      login = (scan.Items ?? [])
        .map((item) => unmarshall(item) as { pk: string; verdict?: string })
        .filter((i) => i.pk.startsWith('idlog#top#') && i.verdict?.includes('"at_risk"'))
        .map((i) => decodeURIComponent(i.pk.split('#')[2] ?? ''))[0];
    } finally {
      dynamo.destroy();
    }
    expect(login, 'an at-risk demo login').toBeDefined();
    const run = await runCliProcess(['identity', 'revoke-sessions', login as string, '--reason', 'demo'], {
      cwd: folder,
    });
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain(`${login}  sessions revoked\n`);
    expect(run.out).toMatch(/1 of 1 account done/);
    // npm start's API acts at once too, with the run's providers.
    const res = await fetch(`${local.api.url}/identity/actions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SOAR}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: 'requirePasswordChange', logins: [login] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown }).results).toEqual([{ login, ok: true }]);
    // A login the demo never leaked: refused, named.
    const stranger = await runCliProcess(['identity', 'disable', 'stranger@acme.test'], { cwd: folder });
    expect(stranger.code).toBe(2);
    expect(stranger.err).toContain('never leaked at the top level');
  }, 40_000);
});
