/**
 * Mattermost through the CLI, against the emulator, dynalite and the webhook stand-in over HTTP.
 * The installed command in a process of its own, killed (SIGKILL) the moment the stand-in has taken
 * its third post and before it answers: the next run posts every event, that one at most twice.
 * Then, in process: `destinations test` posts the marked test message and says how it went,
 * `preview` names the destination and shows the post with no secret and no password, and
 * `config validate` accepts the kind, its render check included.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/cli/run.ts';
import { checkRendering } from '../../../lib/render/check.ts';
import { TEST_MARK } from '../../../lib/render/notice.ts';
import { ScanCommand, UpdateItemCommand } from '../../../lib/state/sdk.ts';
import { BIN, cleanEnv, runCliProcess } from '../../helpers/cli-process.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { captureIo } from '../../helpers/io.ts';
import { MATTERMOST_HOOK, type MattermostStandIn, startMattermost } from '../../helpers/mattermost.ts';
import { configFrom } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let mattermost: MattermostStandIn;
let dir: string;
const config = {
  sources: { tenantEvents: { lookback: 'P30D' } },
  destinations: {
    chat: { type: 'mattermost', url: { secret: 'mattermostUrl' }, channel: 'security-alerts' },
  },
  routes: [{ name: 'all', to: ['chat'] }],
  digest: { threshold: 1000, maxItems: 20 },
  passwords: 'masked',
  upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
};

beforeAll(async () => {
  mattermost = await startMattermost();
  dir = await mkdtemp(join(tmpdir(), 'ea-mattermost-'));
  await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ mattermostUrl: mattermost.url }));
});
afterAll(() => mattermost.close());

const uids = () => emu.running.emulator.dataset.tenant('acme').events.map((e) => e.item.metadata.uid);
const uidOf = (text = '') =>
  (/^\*\*Item\*\* `([^`]*)`/m.exec(text)?.[1] ?? '').replace(/‹/g, '<').replace(/›/g, '>');

/** Every lease in the table lapsed, as a minute after a run died: what the next run finds. */
async function aMinuteLater(table: string) {
  const items = (await db.client.send(new ScanCommand({ TableName: table }))).Items ?? [];
  for (const item of items.filter((i) => i.leaseOwner))
    await db.client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: item.pk as never, sk: item.sk as never },
        UpdateExpression: 'SET leaseExpires = :past',
        ExpressionAttributeValues: { ':past': { N: '0' } },
      }),
    );
}

describe('the CLI with a Mattermost destination', () => {
  it('killed between a post and its record: the next run posts every event, that one at most twice', async () => {
    const table = await db.table();
    const env = cleanEnv({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: table,
      ALERTS_CONFIG: join(dir, 'alerts.config.json'),
      SECRETS_FILE: join(dir, 'secrets.json'),
      NO_COLOR: '1',
    });
    const child = spawn(process.execPath, [BIN, 'poll', 'events', '--once'], {
      env,
      cwd: dir,
      stdio: 'pipe',
    });
    let said = '';
    child.stdout.on('data', (d) => {
      said += d;
    });
    child.stderr.on('data', (d) => {
      said += d;
    });
    mattermost.onPost = () => {
      if (mattermost.posted.length !== 3) return undefined;
      child.kill('SIGKILL');
      return 'hang';
    };
    const signal = await new Promise((done) => child.on('close', (_code, sig) => done(sig)));
    mattermost.onPost = undefined;
    expect(signal, said).toBe('SIGKILL');
    expect(mattermost.posted).toHaveLength(3);

    await aMinuteLater(table);
    const next = await runCliProcess(['deliver', '--once'], {
      cwd: dir,
      env: { ...env, PATH: process.env.PATH },
    });
    expect(next.code, next.err).toBe(0);
    const posted = mattermost.posted.map((p) => uidOf(p.text));
    expect(new Set(posted)).toEqual(new Set(uids()));
    expect(posted.length).toBeGreaterThanOrEqual(uids().length);
    expect(posted.length).toBeLessThanOrEqual(uids().length + 1);
    expect(mattermost.flagged).toEqual([]);
    expect(said + next.out + next.err).not.toContain(MATTERMOST_HOOK);
  });
});

describe('destinations test, preview and config validate', () => {
  const env = () => ({
    ALERTS_CONFIG: join(dir, 'alerts.config.json'),
    SECRETS_FILE: join(dir, 'secrets.json'),
  });

  it('destinations test: the marked test message posted, said ok, no secret printed', async () => {
    const before = mattermost.posted.length;
    const io = captureIo(env());
    expect(await runCli(['destinations', 'test'], io)).toBe(0);
    expect(io.out).toContain('chat (mattermost): ok (HTTP 200)');
    const post = mattermost.posted[before];
    expect(post?.text?.split('\n')[0]).toBe(`#### \`${TEST_MARK}\``);
    expect(post?.channel).toBe('security-alerts');
    expect(mattermost.flagged).toEqual([]);
    expect(io.out + io.err).not.toContain(MATTERMOST_HOOK);
  });

  it('destinations test to a deleted hook: said as the server said it, exit 1', async () => {
    await writeFile(
      join(dir, 'deleted.json'),
      JSON.stringify({ mattermostUrl: mattermost.url.replace(MATTERMOST_HOOK, 'deletedhook') }),
    );
    const io = captureIo({ ...env(), SECRETS_FILE: join(dir, 'deleted.json') });
    expect(await runCli(['destinations', 'test', 'chat'], io)).toBe(1);
    expect(io.out).toContain(
      'chat (mattermost): FAILED, HTTP 400 Invalid webhook. (web.incoming_webhook.invalid.app_error)',
    );
    expect(io.out + io.err).not.toContain('deletedhook');
  });

  it('preview: the destination named without its URL, the post shown, no password', async () => {
    const credential = {
      id: 4242,
      identity_name: '<!channel> jane.doe@mail.example.com',
      domain: 'mail.example.com',
      hash: 'Correct-Horse-9',
      hash_type: 'plaintext',
      imported_at: '2026-11-20T08:00:00+00:00',
      source_id: 'combo-1',
      source: { id: 'combo-1', name: 'Combo list @all', breached_at: null, leaked_at: null },
    };
    await writeFile(join(dir, 'cred.json'), JSON.stringify(credential));
    const io = captureIo(env());
    expect(await runCli(['preview', join(dir, 'cred.json')], io)).toBe(0);
    expect(io.out).toContain(
      'POST to the Mattermost incoming webhook (its URL is a secret, not shown), to security-alerts',
    );
    expect(io.out).toContain('`‹!channel› jane.doe@mail.example.com` (`plaintext`)');
    expect(io.out).toContain('"channel": "security-alerts"');
    expect(io.out).not.toContain('Correct-Horse-9');
    expect(io.out).not.toContain('C*************9');
    expect(io.out + io.err).not.toContain(MATTERMOST_HOOK);
  });

  it('config validate: accepted, its render check passing; a channel by display name refused, by path', async () => {
    const io = captureIo(env());
    expect(await runCli(['config', 'validate'], io), io.err).toBe(0);
    expect(io.out).toBe('config OK: 1 route, 1 destination\n');
    const checked = await checkRendering(configFrom(config), {
      appUrl: 'https://app.example.test',
      now: new Date(),
    });
    expect(checked).toEqual([]);
    const bad = structuredClone(config);
    (bad.destinations.chat as Record<string, unknown>).channel = 'Security Alerts';
    await writeFile(join(dir, 'bad.json'), JSON.stringify(bad));
    const refused = captureIo(env());
    expect(await runCli(['config', 'validate', join(dir, 'bad.json')], refused)).toBe(2);
    expect(refused.err).toContain('destinations.chat.channel');
    expect(refused.err).toContain("expected a channel's name as in its URL (town-square) or @username");
  });
});
