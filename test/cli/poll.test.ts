/**
 * `poll events --once` end to end through the real CLI, against the emulator and dynalite over HTTP
 * and a real receiver: old content matched late arrives once, and a failed token exchange costs no
 * alert.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import type { Clock } from '../../lib/clock.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const DAY = 86_400_000;
const emu = useEmulator({ eventsPerTenant: 30, credentials: 10 });
const db = useDynalite();
let hook: Receiver;
let dir: string;

beforeAll(async () => {
  hook = await startReceiver();
  dir = await mkdtemp(join(tmpdir(), 'ea-poll-'));
});
afterAll(() => hook.close());
beforeEach(() => {
  hook.requests.length = 0;
  emu.running.emulator.control.clearFaults();
});

async function setup(
  lookback: string,
  auth: Record<string, string>,
  destination: Record<string, unknown> = { type: 'webhook', url: hook.url },
  argv = ['poll', 'events', '--once'],
  clock?: Clock,
) {
  const config = join(dir, `${lookback}-${destination.type}.json`);
  await writeFile(
    config,
    JSON.stringify({
      sources: { tenantEvents: { lookback } },
      destinations: { siem: destination },
      routes: [{ name: 'all', to: ['siem'] }],
      digest: { threshold: 1000, maxItems: 20 },
      // The emulator here has no rate limits: the shared governor need not pace these tests.
      upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
    }),
  );
  const env = {
    EXPOSURE_API_URL: emu.url,
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: await db.table(),
    ALERTS_CONFIG: config,
    ...auth,
  };
  return async () => {
    const io = captureIo(env);
    if (clock) io.clock = clock;
    const code = await runCli(argv, io);
    return { code, err: io.err, out: io.out };
  };
}

const received = () =>
  hook.requests.flatMap((r) =>
    (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
  );

describe('poll events --once', () => {
  it('an event with content 10 days old, matched after the walk began, arrives exactly once', async () => {
    const poll = await setup('PT24H', { EXPOSURE_API_TOKEN: 'emu-acme-token' });
    expect((await poll()).code).toBe(0);
    hook.requests.length = 0;
    const [late] = emu.running.emulator.appendEvents(1001, 1, new Date(), {
      createdAt: new Date(Date.now() - 10 * DAY),
    });
    expect((await poll()).code).toBe(0);
    expect((await poll()).code).toBe(0);
    expect(received()).toEqual([late?.item.metadata.uid]);
  });

  it('after a failed token exchange, nothing matched in between is lost', async () => {
    const poll = await setup('PT1H', { EXPOSURE_API_KEY: 'emu-acme-key' });
    expect((await poll()).code).toBe(0);
    hook.requests.length = 0;
    const control = emu.running.emulator.control;
    control.addFault({ endpoint: 'generateToken', status: 400 });
    const failed = await poll();
    expect(failed.code).toBe(1);
    expect(failed.err.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^exposure-alerts: tenant: token exchange failed with HTTP 400/),
    ]);
    // Matched since, about content older than the lookback: a restart from now minus the lookback
    // would never see them.
    const between = emu.running.emulator.appendEvents(1001, 3, new Date(), {
      createdAt: new Date(Date.now() - 3 * 3_600_000),
    });
    control.clearLog();
    expect((await poll()).code).toBe(0);
    const first = control.calls('tenantEvents')[0]?.input as { from?: string };
    expect(first.from).toEqual(expect.any(String));
    expect(received().sort()).toEqual(between.map((e) => e.item.metadata.uid).sort());
  });
});

describe('poll --max-seconds', () => {
  it('a small budget still polls and delivers what it can start, and says what is left', async () => {
    const clock = skipClock();
    const poll = await setup(
      'P7D',
      { EXPOSURE_API_TOKEN: 'emu-acme-token' },
      { type: 'slack', url: hook.url },
      ['poll', 'events', '--once', '--max-seconds', '5'],
      // The run's clock: Slack's second between messages taken on it, not waited out, and the
      // budget and the time taken read on the same timeline.
      clock,
    );
    hook.fallback = { status: 200, body: 'ok' };
    const started = clock.now();
    const run = await poll();
    expect(run.code).toBe(0);
    // Sends start within the budget; the last one may finish after it.
    expect(clock.now() - started).toBeLessThan(5_000 + 10_000);
    // Every event its own Slack message at one a second: more than the budget can send.
    expect(hook.requests.length).toBeGreaterThanOrEqual(2);
    expect(run.out).toMatch(/siem: budget, \d+ sent in \d+ messages, \d+ left for the next run/);
    expect(run.out).toMatch(/tenant: (done|budget), [2-9]\d* pages/);
  }, 30_000);
});
