/**
 * The pace carries over between runs through `lastSentAt`, written on another machine's clock. A
 * run whose clock is ahead (a laptop's `deliver --once`) must not make a Lambda pass sleep past
 * its deadline: the wait is never longer than the pace, and never runs past the deadline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { deliveryWorld } from './seed.ts';

const db = useDynalite();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function slackWorld() {
  // The pass's waits are counted on its clock (`slept`), so a busy machine's slowness is not
  // mistaken for a long wait.
  const still = fakeClock();
  const waits: number[] = [];
  const clock = {
    ...still,
    sleep: (ms: number, signal?: AbortSignal) => {
      waits.push(ms);
      return still.sleep(ms, signal);
    },
    slept: () => waits.reduce((sum, ms) => sum + Math.max(0, ms), 0),
  };
  const slack = await startReceiver({ status: 200, body: 'ok' });
  receivers.push(slack);
  const world = await deliveryWorld(
    db,
    {
      destinations: { slack: { type: 'slack', url: slack.url } },
      routes: [{ name: 'all', match: {}, to: ['slack'] }],
      digest: { threshold: 100, maxItems: 20 },
    },
    { clock },
  );
  return { clock, slack, world };
}

/** What a run on a clock `aheadMs` fast leaves behind: its last send, in its own time. */
async function lastSentBy(world: Awaited<ReturnType<typeof slackWorld>>['world'], at: number) {
  const state = world.runtime.destinationState;
  const lease = await state.acquire('slack', 'laptop-run');
  if (!lease) throw new Error('lease busy');
  await state.release(lease, at);
}

describe('clock skew between runs', () => {
  it('lastSentAt 29 s in the future: the pass waits at most the pace, and sends', async () => {
    const { clock, slack, world } = await slackWorld();
    await world.seed('slack', 2);
    await lastSentBy(world, clock.now() + 29_000);
    const summary = await world.pass(12);
    // Before: one sleep of 30 s (29 s of skew and the pace) against a 12 s deadline.
    expect(clock.slept()).toBeLessThan(4_000);
    expect(summary.sent).toBe(2);
    expect(slack.requests).toHaveLength(2);
    // The pace still holds between this run's own sends.
    expect((slack.requests[1]?.at ?? 0) - (slack.requests[0]?.at ?? 0)).toBeGreaterThanOrEqual(990);
  }, 20_000);

  it('a pace wait that would end after the deadline is not slept: the pass stops, sends none late', async () => {
    const { clock, slack, world } = await slackWorld();
    await world.seed('slack', 2);
    // Sent a moment ago by another run; this pass may start sends for 0.5 s only.
    await lastSentBy(world, clock.now() - 200);
    const summary = await world.pass(0.5);
    // No wait at all: the one the pace asks for would end past the 0.5 s.
    expect(clock.slept()).toBeLessThan(500);
    expect(summary.destinations[0]?.status).toBe('budget');
    expect(summary.destinations[0]?.left).toBe(2);
    expect(slack.requests).toHaveLength(0);
  }, 20_000);
});

describe('lastSendStart', () => {
  it('leaves one send timeout and the settle margin before the end', async () => {
    const { lastSendStart, SETTLE_MARGIN_MS } = await import('../../lib/deliver/pass.ts');
    expect(lastSendStart({ sendTimeoutMs: 3_000 }, 100_000)).toBe(97_000 - SETTLE_MARGIN_MS);
    expect(lastSendStart({}, 100_000)).toBe(90_000 - SETTLE_MARGIN_MS);
  });
});
