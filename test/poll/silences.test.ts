/**
 * Run-time silences at work, with the real poll cycle and delivery pass against the emulator,
 * dynalite and a real webhook receiver: a silence counts from the next cycle and not before (each
 * cycle reads the active silences once, at its start: one Query, whatever the number of items); it
 * holds back deliveries waiting for a retry; and its end sends nothing it held back.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Silence } from '../../lib/rules/silences.ts';
import { newSilenceId } from '../../lib/state/silences.ts';
import { deliveryWorld } from '../deliver/seed.ts';
import { fakeClock } from '../helpers/clock.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 5, credentials: 30 });
const db = useDynalite();
let hook: Receiver;
const HOUR = 3_600_000;

beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());
beforeEach(() => {
  hook.requests.length = 0;
  hook.fallback = { status: 200, body: 'ok' };
});

const config = () => ({
  sources: { credentials: { domains: ['acme.test'], lookback: 'P30D' } },
  destinations: { siem: { type: 'webhook', url: hook.url } },
  routes: [{ name: 'all', to: ['siem'] }],
  upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
});

function silenceOf(now: number, match: Silence['match'], reason = 'incident 4711'): Silence {
  return {
    id: newSilenceId(now),
    match,
    until: new Date(now + 4 * HOUR).toISOString(),
    reason,
    createdBy: 'cli:test',
    createdAt: new Date(now).toISOString(),
  };
}

/** Credential ids the receiver got, in the order it got them. */
function received(): string[] {
  return hook.requests.flatMap((r) =>
    ((r.json() as { items: { id: number }[] }).items ?? []).map((i) => String(i.id)),
  );
}

describe('a silence made at run time', () => {
  it('takes effect in the next cycle, and not before', async () => {
    const counting = countingClient(db.endpoint);
    const world = await makeWorld(emu, db, config(), { dynamo: counting.client });
    await world.cycle('credentials'); // the first walk: whatever is there now
    hook.requests.length = 0;

    // Three new leaks; a silence for them is made while the cycle that finds them is running.
    const early = emu.running.emulator.dataset.appendCredentials(3, { domain: 'acme.test' });
    let made: Silence | undefined;
    world.runtime.poll.checkpoint = async (step) => {
      if (step !== 'page-fetched' || made) return;
      made = silenceOf(Date.now(), { kind: 'credential', domains: ['acme.test'] });
      await world.runtime.silences.create(made);
    };
    counting.requests.length = 0;
    const during = await world.cycle('credentials');
    world.runtime.poll.checkpoint = undefined;
    expect(made).toBeDefined();
    // Not before: the cycle had read the silences at its start, so it sent what it found.
    expect(during.streams[0]?.silenced).toBe(0);
    expect(received()).toEqual(expect.arrayContaining(early.map((c) => String(c.id))));
    // Read once for the polling and once for the pass, one Query each, however many items.
    // (The test's own PutItem, making the silence, goes through the same client.)
    const reads = counting.requests.filter((r) => r.pk === 'silence' && r.action !== 'PutItem');
    expect(reads).toEqual([
      { action: 'Query', pk: 'silence' },
      { action: 'Query', pk: 'silence' },
    ]);
    expect(counting.requests.some((r) => r.action === 'Scan')).toBe(false);

    // The next cycle: new leaks of that domain are recorded silenced, naming the silence, not sent.
    hook.requests.length = 0;
    const late = emu.running.emulator.dataset.appendCredentials(2, { domain: 'acme.test' });
    const next = await world.cycle('credentials');
    expect(next.streams[0]?.silenced).toBe(2);
    expect(hook.requests).toEqual([]);
    const records = await world.runtime.deliveries.list({ status: 'silenced' });
    const ids = late.map((c) => `siem~credential~${c.id}`);
    const held = records.filter((r) => ids.includes(r.id));
    expect(held).toHaveLength(2);
    for (const r of held) expect(r.note).toBe(`silenced by ${made?.id}: incident 4711`);

    // Ended: the next leak is sent again, and what it held back stays silenced.
    await world.runtime.silences.expire(made?.id as string, 'cli:test');
    const after = emu.running.emulator.dataset.appendCredentials(1, { domain: 'acme.test' });
    await world.cycle('credentials');
    expect(received()).toEqual([String(after[0]?.id)]);
    const still = await world.runtime.deliveries.list({ status: 'silenced' });
    expect(still.filter((r) => ids.includes(r.id))).toHaveLength(2);
    expect(await world.runtime.deliveries.list({ status: 'pending', destinations: ['siem'] })).toEqual([]);
    counting.client.destroy();
  }, 60_000);
});

describe('deliveries waiting for a retry', () => {
  it('a silence made meanwhile holds them back; its end does not send them', async () => {
    const clock = fakeClock();
    const world = await deliveryWorld(
      db,
      {
        sources: { tenantEvents: {} },
        destinations: { siem: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', to: ['siem'] }],
      },
      { clock },
    );
    const ids = await world.seed('siem', 3);
    hook.fallback = { status: 503, body: 'down for maintenance' };
    const first = await world.pass();
    expect(first.retrying).toBe(3);
    const tried = hook.requests.length;
    expect(tried).toBeGreaterThan(0);

    const silence = silenceOf(clock.now(), { kind: 'event', sources: ['tenant'] }, 'maintenance window');
    await world.runtime.silences.create(silence);
    hook.fallback = { status: 200, body: 'ok' };
    clock.advance(10 * 60_000); // their retry time has come
    const second = await world.pass();
    expect(second.destinations[0]?.silenced).toBe(3);
    expect(second.sent).toBe(0);
    expect(hook.requests).toHaveLength(tried);
    const records = await world.runtime.deliveries.getMany(ids);
    expect([...records.values()].map((r) => [r.status, r.note])).toEqual(
      ids.map(() => ['silenced', `silenced by ${silence.id}: maintenance window`]),
    );

    // It ends: nothing it held back is sent, it was silenced on purpose.
    await world.runtime.silences.expire(silence.id, 'cli:test');
    clock.advance(HOUR);
    const third = await world.pass();
    expect(third.sent).toBe(0);
    expect(hook.requests).toHaveLength(tried);
    expect(await world.runtime.deliveries.list({ status: 'pending', destinations: ['siem'] })).toEqual([]);
  }, 30_000);

  it('a silence holds back a waiting delivery whose retry falls after it ends: it waited during it', async () => {
    const clock = fakeClock();
    const world = await deliveryWorld(
      db,
      {
        sources: { tenantEvents: {} },
        destinations: { siem: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', to: ['siem'] }],
      },
      { clock },
    );
    const ids = await world.seed('siem', 2);
    // A 429 asking for an hour pauses the destination and moves the retries past the silence
    // below, which lasts half an hour.
    hook.fallback = { status: 429, body: 'slow down', headers: { 'Retry-After': '3600' } };
    await world.pass();
    const tried = hook.requests.length;
    const silence = {
      ...silenceOf(clock.now(), { kind: 'event' }, 'change freeze'),
      until: new Date(clock.now() + 30 * 60_000).toISOString(),
    };
    await world.runtime.silences.create(silence);
    // A pass during the silence, before any retry is due, while the destination is paused.
    clock.advance(60_000);
    const during = await world.pass();
    expect(during.destinations[0]?.silenced).toBe(2);
    const records = await world.runtime.deliveries.getMany(ids);
    expect([...records.values()].map((r) => r.status)).toEqual(['silenced', 'silenced']);
    // After the silence and the pause: nothing is sent.
    hook.fallback = { status: 200, body: 'ok' };
    clock.advance(2 * HOUR);
    const after = await world.pass();
    expect(after.sent).toBe(0);
    expect(hook.requests).toHaveLength(tried);
  }, 30_000);
});
