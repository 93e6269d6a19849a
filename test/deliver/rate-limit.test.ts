/**
 * A 429 pauses its destination, for every run, until its Retry-After (or the backoff) has passed:
 * the rest of the pass's messages to it wait, the 429 costs no attempt, and only a delivery still
 * refused 429 a day after its first 429 goes dead. Slack, e-mail, webhooks, Teams and PagerDuty (which
 * sends no Retry-After: the backoff case is its own) alike; real dynalite,
 * real local receivers, a fake clock whose sleeps (the pace between sends) move it on at once.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import { MAX_ATTEMPTS, RATE_LIMIT_GIVE_UP_MS } from '../../lib/deliver/retry.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { TEST_ROUTING_KEY } from '../helpers/pagerduty-receiver.ts';
import { type Reply, useReceivers } from '../helpers/receiver.ts';
import { deliveryWorld } from './seed.ts';

const db = useDynalite();
const receiver = useReceivers();

const HOUR = 3_600_000;

/** fakeClock, but a sleep moves `now` on by its wait instead of waiting it out. */
function steppingClock(): Clock & { advance(ms: number): void } {
  const clock = fakeClock();
  return {
    ...clock,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      clock.advance(Math.max(0, ms));
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

const destinationOf = {
  slack: (url: string) => ({ type: 'slack', url }),
  email: (url: string) => ({
    type: 'email',
    provider: 'generic',
    url,
    from: 'alerts@example.com',
    to: ['soc@example.com'],
  }),
  webhook: (url: string) => ({ type: 'webhook', url }),
  teams: (url: string) => ({ type: 'teams', url }),
  pagerduty: (url: string) => ({ type: 'pagerduty', url, routingKey: TEST_ROUTING_KEY }),
};

/** Five deliveries that go as five messages: below the digest threshold, and one per webhook item. */
async function setup(type: keyof typeof destinationOf, fallback: Reply = { status: 200, body: 'ok' }) {
  const clock = steppingClock();
  const hook = await receiver(fallback);
  const world = await deliveryWorld(
    db,
    {
      destinations: { d: destinationOf[type](hook.url) },
      routes: [{ name: 'all', match: {}, to: ['d'] }],
      digest: { threshold: 100, maxItems: 20 },
    },
    { clock },
  );
  world.runtime.deliver.random = () => 0.5;
  await world.seed('d', 5);
  // A webhook takes every due item in one body; make it one message per item like the others.
  if (type === 'webhook') {
    const render = world.runtime.deliver.render;
    world.runtime.deliver.render = async (destination, alerts, now) =>
      (await Promise.all(alerts.map((a) => render(destination, [a], now)))).flat();
  }
  return { clock, hook, world };
}

describe.each(['slack', 'email', 'webhook', 'teams', 'pagerduty'] as const)('%s answered 429', (type) => {
  it('Retry-After: 30 pauses the destination for every run, costs no attempt, then all go', async () => {
    const { clock, hook, world } = await setup(type);
    hook.script({ status: 429, headers: { 'Retry-After': '30' }, body: 'rate_limited' });
    const start = clock.now();
    const first = await world.pass();
    // The 429 stopped the pass for this destination: one request, not five.
    expect(hook.requests).toHaveLength(1);
    expect(first.destinations[0]?.status).toBe('paused');
    expect(first.sent).toBe(0);
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['d'] });
    expect(pending).toHaveLength(5);
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    const refused = pending.filter((r) => r.lastError);
    expect(refused).toHaveLength(1);
    expect(Date.parse(refused[0]?.nextAttemptAt ?? '') - start).toBe(30_000);
    // Stored with the record: the day of 429s is counted from here, across runs.
    expect(refused[0]?.rateLimitedSince).toBe(new Date(start).toISOString());

    // Another run, 10 s later, sees the pause in the table: it sends nothing.
    clock.advance(10_000);
    const other = await world.another();
    const during = await world.pass(60);
    expect(during.destinations[0]?.status).toBe('paused');
    const { runDeliveryPass } = await import('../../lib/deliver/pass.ts');
    const fromOther = await runDeliveryPass(other.deliver, { deadline: clock.now() + 60_000 });
    expect(fromOther.destinations[0]?.status).toBe('paused');
    expect(hook.requests).toHaveLength(1);

    clock.advance(20_000);
    const after = await world.pass(60);
    expect(after.sent).toBe(5);
    const sent = await world.runtime.deliveries.list({ status: 'sent' });
    expect(sent).toHaveLength(5);
    // The message refused with 429 counts one attempt: the one that got through.
    expect(sent.every((r) => r.attempts === 1)).toBe(true);
    expect(hook.requests).toHaveLength(6);
  }, 30_000);

  it('without Retry-After: paused for the backoff, which grows while the 429s go on', async () => {
    const { clock, hook, world } = await setup(type, { status: 429, body: 'slow down' });
    const pauses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = hook.requests.length;
      const summary = await world.pass();
      expect(summary.destinations[0]?.status).toBe('paused');
      expect(hook.requests.length - before).toBe(1);
      const state = await world.runtime.destinationState.peek('d');
      pauses.push((state.pause?.until ?? 0) - clock.now());
      clock.advance(pauses[pauses.length - 1] as number);
    }
    // Jitter fixed at 0.5: 3/4 of 1, 2, 4, 8 s.
    expect(pauses).toEqual([750, 1_500, 3_000, 6_000]);
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['d'] });
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
  }, 30_000);

  it('sustained 429s: pending while under a day since its first 429, then dead and counted', async () => {
    const { clock, hook, world } = await setup(type, {
      status: 429,
      headers: { 'Retry-After': '3600' },
      body: 'rate_limited',
    });
    const firstAt = clock.now();
    // One pass every two hours (each ends the hour's pause), more than MAX_ATTEMPTS passes: 429s
    // alone never use the attempts up.
    for (let hour = 0; hour < 24; hour += 2) {
      await world.pass();
      clock.advance(2 * HOUR);
    }
    expect(hook.requests.length).toBeGreaterThan(MAX_ATTEMPTS);
    expect(await world.runtime.deliveries.list({ status: 'dead', destinations: ['d'] })).toHaveLength(0);
    // Day one, every message was tried (they take turns: a 429 moves its records to the back).
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['d'] });
    expect(pending).toHaveLength(5);
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    expect(clock.now() - firstAt).toBeGreaterThanOrEqual(RATE_LIMIT_GIVE_UP_MS);
    // Each message's next 429 comes more than a day after its first: it goes dead then.
    for (let i = 0; i < 8; i++) {
      await world.pass();
      clock.advance(2 * HOUR);
    }
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['d'] });
    expect(dead).toHaveLength(5);
    expect(dead[0]?.lastError).toMatch(/429/);
    expect(dead[0]?.lastError).toMatch(/24 h/);
    expect(world.metrics.get('DeliveriesDead')).toBe(5);
    // Re-queued by an operator, a dead delivery gets a new day: its next 429 does not kill it.
    expect(await world.runtime.deliveries.requeue(dead[0]?.id ?? '')).toBe(true);
    clock.advance(HOUR);
    await world.pass();
    const again = await world.runtime.deliveries.getMany([dead[0]?.id ?? '']);
    expect(again.get(dead[0]?.id ?? '')?.status).toBe('pending');
  }, 60_000);
});

describe('5xx with Retry-After pauses the destination too', () => {
  it('503 Retry-After: 60 stops the rest of the pass and counts an attempt', async () => {
    const { clock, hook, world } = await setup('slack');
    hook.script({ status: 503, headers: { 'Retry-After': '60' }, body: 'maintenance' });
    const first = await world.pass();
    expect(first.destinations[0]?.status).toBe('paused');
    expect(hook.requests).toHaveLength(1);
    const failed = (await world.runtime.deliveries.list({ status: 'pending', destinations: ['d'] })).filter(
      (r) => r.lastError,
    );
    expect(failed.map((r) => r.attempts)).toEqual([1]);
    clock.advance(60_000);
    expect((await world.pass()).sent).toBe(5);
  }, 30_000);
});
