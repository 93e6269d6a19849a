/**
 * `deliver --once --max-seconds N` through the real CLI runner, against real dynalite and a real
 * local Slack receiver: the budget bounds when sends may start (a send in flight keeps its
 * timeout), a small budget delivers what it can start, and a pass that stops early says how many
 * deliveries are left for the next run.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { deliveryWorld, TEST_ENV } from '../deliver/seed.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const db = useDynalite();
let slack: Receiver;
beforeAll(async () => {
  slack = await startReceiver({ status: 200, body: 'ok' });
});
afterAll(async () => {
  await slack.close();
});

describe('deliver --once --max-seconds', () => {
  it('7 pending Slack deliveries, 5 s: sends what it can start at the pace, says how many are left', async () => {
    const config = {
      sources: { tenantEvents: { lookback: 'P7D' } },
      destinations: { soc: { type: 'slack', url: slack.url } },
      routes: [{ name: 'all', match: {}, to: ['soc'] }],
      // Below the threshold: seven messages, one a second.
      digest: { threshold: 10, maxItems: 20 },
    };
    const dir = await mkdtemp(join(tmpdir(), 'ea-deliver-'));
    const file = join(dir, 'alerts.config.json');
    await writeFile(file, JSON.stringify(config));
    const world = await deliveryWorld(db, config);
    await world.seed('soc', 7);
    const env = {
      ...TEST_ENV,
      ALERTS_CONFIG: file,
      TABLE_NAME: world.table,
      DYNAMODB_ENDPOINT: db.endpoint,
    };

    // The runs' clock: the pace's second between messages is taken on it, not waited out, and
    // the budget and the time taken are on the same timeline.
    const clock = skipClock();
    const io = captureIo(env);
    io.clock = clock;
    const started = clock.now();
    expect(await runCli(['deliver', '--once', '--max-seconds', '5'], io)).toBe(0);
    const took = clock.now() - started;
    // Before: "budget, 0 sent" (a send had to fit its 10 s timeout and the pace inside the 5 s).
    const sent = slack.requests.length;
    expect(sent).toBeGreaterThanOrEqual(4);
    expect(sent).toBeLessThanOrEqual(6);
    expect(took).toBeLessThan(7_500);
    expect(io.out).toMatch(new RegExp(`soc: budget, ${sent} sent in ${sent} messages`));
    expect(io.out).toContain(`${7 - sent} left for the next run`);
    expect(io.err).toBe('');

    // The next run delivers the rest and stops because it is done.
    const next = captureIo(env);
    next.clock = clock;
    expect(await runCli(['deliver', '--once', '--max-seconds', '30'], next)).toBe(0);
    expect(next.out).toMatch(new RegExp(`soc: done, ${7 - sent} sent`));
    expect(next.out).not.toContain('left for the next run');
    expect(slack.requests).toHaveLength(7);
    const records = await world.runtime.deliveries.list({ status: 'sent' });
    expect(records).toHaveLength(7);
  }, 30_000);
});
