/**
 * Inline delivery (lib/deliver/inline.ts) meets the same answers as the pass: an absurd Retry-After
 * is an ordinary retry, a 429 costs no attempt and pauses the destination for every run, and a
 * destination paused by any run is left to the pass. A real emulator, dynalite and receivers.
 */
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 6, credentials: 10 });
const db = useDynalite();
const receiver = useReceivers();

const webhookConfig = (url: string) => ({
  sources: { tenantEvents: { lookback: 'P7D' } },
  destinations: { hook: { type: 'webhook', url } },
  routes: [{ name: 'all', match: {}, to: ['hook'] }],
});

describe('inline delivery', () => {
  it('429 with a 13-digit Retry-After: the stream goes on, the deliveries wait the backoff', async () => {
    const hook = await receiver({ status: 200, body: 'ok' });
    hook.script({ status: 429, headers: { 'Retry-After': '9999999999999' }, body: 'slow down' });
    // On a clock that stands still the pause the 429 left cannot end during the cycle, however long
    // a busy machine makes it, and the backoff is measured exactly.
    const clock = fakeClock();
    const world = await makeWorld(emu, db, webhookConfig(hook.url), { clock });
    world.runtime.deliver.random = () => 0.5;
    const summary = await world.cycle('events');
    // Before the fix: RangeError in the inline sender, the stream failed and its cursor stayed.
    expect(summary.streams.map((s) => s.status)).toEqual(['done']);
    expect(summary.exitCode).toBe(0);
    expect(hook.requests).toHaveLength(1);
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
    expect(pending.length).toBeGreaterThan(0);
    for (const r of pending) {
      expect(r.attempts).toBe(0);
      const wait = Date.parse(r.nextAttemptAt ?? '') - clock.now();
      expect(wait).toBeGreaterThanOrEqual(700);
      expect(wait).toBeLessThan(5_000);
    }
    // The pause the inline 429 stored holds the pass of the same cycle too.
    expect(summary.delivery.destinations.find((d) => d.destination === 'hook')?.status).toBe('paused');
  }, 20_000);

  it('a destination paused by another run gets nothing inline; the pass sends once the pause ends', async () => {
    const hook = await receiver({ status: 200, body: 'ok' });
    // The pause ends when the clock is moved past it, not after a real wait a busy machine could
    // outrun before the cycle looks.
    const clock = fakeClock();
    const world = await makeWorld(emu, db, webhookConfig(hook.url), { clock });
    await world.runtime.destinationState.extendPause('hook', clock.now() + 1_500, clock.now());
    const summary = await world.cycle('events');
    expect(hook.requests).toHaveLength(0);
    expect(summary.delivery.destinations.find((d) => d.destination === 'hook')?.status).toBe('paused');
    clock.advance(1_600);
    const later = await world.deliver();
    expect(later.sent).toBeGreaterThan(0);
    expect(hook.requests).toHaveLength(1);
  }, 20_000);
});
