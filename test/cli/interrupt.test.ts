/**
 * Ctrl-C and SIGTERM on the one-shot commands, through the real CLI in a process of its own,
 * against a slow emulator (its latency knob), dynalite and real receivers over HTTP: the first
 * signal stops at the next safe point (the page read is recorded, the send started is recorded),
 * says so in one line and exits 130 (143 for SIGTERM); the next run goes on from there, and every
 * event arrives exactly once across the runs. A second signal stops at once.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../lib/emulator/index.ts';
import { spawnCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { startPagerDutyReceiver, TEST_ROUTING_KEY } from '../helpers/pagerduty-receiver.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator({ eventsPerTenant: 60, lateMatchesPerTenant: 0 });
const db = useDynalite();
let dir: string;
let hook: Receiver;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-interrupt-'));
  hook = await startReceiver();
});
afterAll(() => hook.close());

/** The CLI in its own folder, with only the environment given (and the basics a process needs). */
const spawnCli = (argv: string[], env: Record<string, string>) =>
  spawnCliProcess(argv, { cwd: dir, env: { LOG_LEVEL: '', ...env } });

async function configFile(name: string, destination: Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    JSON.stringify({
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: { out: destination },
      routes: [{ name: 'all', to: ['out'] }],
      digest: { threshold: 1000, maxItems: 20 },
      upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
    }),
  );
  return file;
}

const searches = () => emu.running.emulator.control.calls().filter((c) => c.path.includes('_search')).length;
const received = () =>
  hook.requests.flatMap((r) =>
    (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
  );

describe('poll events --once, stopped', () => {
  it('SIGINT: stops after the page in hand, one line, exit 130; the next run goes on, each event once', async () => {
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: await configFile('hook.json', { type: 'webhook', url: hook.url }),
    };
    const control = emu.running.emulator.control;
    control.clearLog();
    control.latencyMs = 250; // 6 pages of 10: about 1.5 s, if nothing stops it
    hook.requests.length = 0;
    const first = spawnCli(['poll', 'events', '--once'], env);
    await first.waitFor(() => searches() >= 2, 15_000);
    const asked = Date.now();
    first.child.kill('SIGINT');
    const code = await first.exited;
    control.latencyMs = 0;
    expect(code, first.err()).toBe(130);
    // At the next safe point: the page in flight, not the rest of the walk.
    expect(Date.now() - asked).toBeLessThan(3_000);
    expect(searches()).toBeLessThan(6);
    expect(first.err().trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^exposure-alerts: stopped by SIGINT: the pages read are recorded, .* resumes each stream from its cursor$/,
      ),
    ]);
    expect(first.out()).toMatch(
      /tenant: budget, [1-5] pages?, .*\(stopped on request; resumes from its cursor\)/,
    );
    const early = received().length;
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(60);

    const second = spawnCli(['poll', 'events', '--once'], env);
    expect(await second.exited, second.err()).toBe(0);
    const uids = received();
    expect(new Set(uids).size).toBe(uids.length); // nothing twice
    const all = emu.running.emulator.dataset.tenant('acme').events.map((e) => e.item.metadata.uid);
    expect(new Set(uids)).toEqual(new Set(all)); // nothing lost
  }, 30_000);

  it('a second SIGINT stops at once, exit 130', async () => {
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: await configFile('hook.json', { type: 'webhook', url: hook.url }),
    };
    const control = emu.running.emulator.control;
    control.clearLog();
    control.latencyMs = 5_000; // the first page would take 5 s
    try {
      const run = spawnCli(['poll', 'events', '--once'], env);
      await run.waitFor(() => run.out().includes('poll events:'), 15_000);
      await new Promise((r) => setTimeout(r, 300));
      run.child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 100));
      const asked = Date.now();
      run.child.kill('SIGINT');
      expect(await run.exited).toBe(130);
      expect(Date.now() - asked).toBeLessThan(2_000);
    } finally {
      control.latencyMs = 0;
    }
  }, 20_000);
});

describe('deliver --once, stopped', () => {
  it('SIGINT in the poll’s pass, then SIGTERM in deliver: each at a send’s end, and every event is paged once', async () => {
    // Six events and PagerDuty's pace (one event every 500 ms): a pass of about 3 s.
    const small = await startEmulator({
      seed: 3,
      rateLimits: 'off',
      eventsPerTenant: 6,
      lateMatchesPerTenant: 0,
    });
    const pd = await startPagerDutyReceiver();
    try {
      const secrets = join(dir, 'secrets.json');
      await writeFile(secrets, JSON.stringify({ pdKey: TEST_ROUTING_KEY }));
      const env = {
        EXPOSURE_API_URL: small.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        DYNAMODB_ENDPOINT: db.endpoint,
        TABLE_NAME: await db.table(),
        SECRETS_FILE: secrets,
        ALERTS_CONFIG: await configFile('pd.json', {
          type: 'pagerduty',
          routingKey: { secret: 'pdKey' },
          url: pd.url,
        }),
      };
      const poll = spawnCli(['poll', 'events', '--once'], env);
      await poll.waitFor(() => pd.alerts.length >= 2, 15_000);
      poll.child.kill('SIGINT');
      expect(await poll.exited, poll.err()).toBe(130);
      expect(poll.err()).toMatch(/^exposure-alerts: stopped by SIGINT: /);
      const afterPoll = pd.alerts.length;
      expect(afterPoll).toBeLessThan(6);

      const deliver = spawnCli(['deliver', '--once'], env);
      await deliver.waitFor(() => pd.alerts.length >= afterPoll + 1, 15_000);
      deliver.child.kill('SIGTERM');
      expect(await deliver.exited, deliver.err()).toBe(143);
      expect(deliver.err().trimEnd().split('\n')).toEqual([
        'exposure-alerts: stopped by SIGTERM: every send started was recorded; what is left goes out on the next delivery pass',
      ]);
      expect(pd.alerts.length).toBeLessThan(6);

      const rest = spawnCli(['deliver', '--once'], env);
      expect(await rest.exited, rest.err()).toBe(0);
      // Each event paged once: no incident was triggered twice, none is missing.
      const uids = small.emulator.dataset.tenant('acme').events.map((e) => `event:${e.item.metadata.uid}`);
      expect(pd.alerts.map((a) => a.dedupKey).sort()).toEqual(uids.sort());
      expect(pd.alerts.every((a) => a.joined === 0)).toBe(true);
    } finally {
      await pd.close();
      await small.close();
    }
  }, 30_000);
});
