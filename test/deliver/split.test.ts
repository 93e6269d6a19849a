/**
 * 413 means "too big", not "never": a message of many items answered 413 is split in halves and
 * the halves are sent (in the same pass or the next, which remembers the size refused), down to
 * one item; only a single item answered 413 is dead. The Idempotency-Key stays the same for the
 * same set of items. A real local receiver that refuses bodies over a size, real dynalite.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import { systemClock } from '../../lib/clock.ts';
import type { ResolvedDestination } from '../../lib/deliver/destinations.ts';
import { requestFor } from '../../lib/deliver/senders.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type StandIn, standIn } from '../helpers/stand-in.ts';
import { deliveryWorld, eventNumber } from './seed.ts';

const db = useDynalite();

interface Seen {
  status: number;
  bytes: number;
  keys: string[];
  idempotencyKey: string;
}

/**
 * A receiver answering 413 to any body over `maxBytes`; `onRequest` runs before it answers, and
 * `override` may choose another status for a body (by the uids of its items).
 */
async function limitedReceiver(
  maxBytes: number,
  onRequest?: () => void,
  override?: (keys: string[]) => number | undefined,
) {
  const seen: Seen[] = [];
  const limit = { maxBytes };
  const stand = await standIn((req, body, res, raw) => {
    onRequest?.();
    let keys: string[] = [];
    try {
      const json = JSON.parse(body) as { items?: { metadata?: { uid?: string } }[] };
      keys = (json.items ?? []).map((i) => String(i.metadata?.uid));
    } catch {}
    const status = override?.(keys) ?? (raw.length > limit.maxBytes ? 413 : 200);
    seen.push({
      status,
      bytes: raw.length,
      keys,
      idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
    });
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(status === 413 ? 'payload too large' : 'ok');
  });
  stands.push(stand);
  return { url: stand.url, seen, limit };
}

const stands: StandIn[] = [];
afterEach(async () => {
  await Promise.all(stands.splice(0).map((s) => s.close()));
});

const webhookTo = (url: string) => ({
  destinations: { siem: { type: 'webhook', url } },
  routes: [{ name: 'all', match: {}, to: ['siem'] }],
});

/** Bytes of one seeded item in a webhook body, about. */
const ITEM_BYTES = JSON.stringify(eventNumber(0)).length;

describe('webhook answered 413', () => {
  it('100 items: split in halves until each part fits; every item delivered once', async () => {
    // Room for 20 items a body at most.
    const hook = await limitedReceiver(20 * ITEM_BYTES + 400);
    const world = await deliveryWorld(db, webhookTo(hook.url));
    // Batch-written, as an exclusive stream writes them: the test is about the split, not the seed.
    const ids = await world.seed('siem', 100, { exclusive: true });
    const summary = await world.pass();
    expect(summary.sent).toBe(100);
    expect(summary.dead).toBe(0);
    const accepted = hook.seen.filter((s) => s.status === 200);
    const delivered = accepted.flatMap((s) => s.keys);
    expect(delivered).toHaveLength(100);
    expect(new Set(delivered).size).toBe(100);
    // Halving 100 to parts of at most 20: never more than 1 + 2 + 4 refusals, since a size once
    // refused is split before it is sent again.
    expect(accepted.every((s) => s.keys.length <= 20)).toBe(true);
    expect(hook.seen.filter((s) => s.status === 413).length).toBeLessThanOrEqual(7);
    const records = await world.runtime.deliveries.getMany(ids);
    expect([...records.values()].every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true);
  }, 30_000);

  it('a single item still too large is dead; the rest of its body is delivered', async () => {
    const hook = await limitedReceiver(10 * ITEM_BYTES);
    const world = await deliveryWorld(db, webhookTo(hook.url));
    const huge = (i: number) => {
      const item = eventNumber(i);
      return i === 3 ? { ...item, highlights: { content: ['x'.repeat(20 * ITEM_BYTES)] } } : item;
    };
    await world.seed('siem', 8, { item: huge });
    const summary = await world.pass();
    expect(summary.sent).toBe(7);
    expect(summary.dead).toBe(1);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['siem'] });
    expect(dead.map((r) => r.key)).toEqual(['forum_post/seed/thread/3']);
    expect(dead[0]?.lastError).toMatch(/413/);
    expect(dead[0]?.attempts).toBe(1);
    // Too big is about the item, not the destination: no "refuses deliveries" report.
    expect(world.metrics.get('DestinationRefused')).toBe(0);
  }, 30_000);

  it('a pass out of time after a 413 leaves the halves to the next, which does not resend the big body', async () => {
    // Each request moves this clock 10 s, and the pass may start sends for 5 s: one send a pass.
    let offset = 0;
    const clock: Clock = { now: () => systemClock.now() + offset, sleep: systemClock.sleep };
    const hook = await limitedReceiver(3 * ITEM_BYTES, () => {
      offset += 10_000;
    });
    const world = await deliveryWorld(db, webhookTo(hook.url), { clock });
    await world.seed('siem', 8);
    const first = await world.pass(5);
    expect(first.sent).toBe(0);
    expect(first.destinations[0]?.status).toBe('budget');
    expect(hook.seen.map((s) => s.status)).toEqual([413]);
    const sizes: number[] = [];
    for (let pass = 0; pass < 30; pass++) {
      const before = hook.seen.length;
      await world.pass(5);
      sizes.push(...hook.seen.slice(before).map((s) => s.keys.length));
      if ((await world.runtime.deliveries.list({ status: 'pending', destinations: ['siem'] })).length === 0)
        break;
    }
    // No body of all 8 again: the next passes split it before sending.
    expect(sizes.every((n) => n < 8)).toBe(true);
    const sent = await world.runtime.deliveries.list({ status: 'sent' });
    expect(sent).toHaveLength(8);
    const delivered = hook.seen.filter((s) => s.status === 200).flatMap((s) => s.keys);
    expect(new Set(delivered).size).toBe(8);
    expect(delivered).toHaveLength(8);
  }, 60_000);

  it('the Idempotency-Key is the same for the same items, and differs for another set', async () => {
    // Room for two items; the first body of two is answered 500, so its items are retried later.
    let failed = false;
    const hook = await limitedReceiver(2 * ITEM_BYTES + 400, undefined, (keys) => {
      if (keys.length !== 2 || failed) return undefined;
      failed = true;
      return 500;
    });
    const world = await deliveryWorld(db, webhookTo(hook.url));
    world.runtime.deliver.random = () => 0;
    await world.seed('siem', 4);
    const first = await world.pass();
    expect(hook.seen.map((s) => [s.status, s.keys.length])).toEqual([
      [413, 4],
      [500, 2],
      [200, 2],
    ]);
    expect(first.sent).toBe(2);
    expect(first.retrying).toBe(2);
    await new Promise((r) => setTimeout(r, 600)); // the backoff's first step, jitter 0: 500 ms
    const second = await world.pass();
    expect(second.sent).toBe(2);
    const [whole, refused, other, retried] = hook.seen;
    expect(retried?.status).toBe(200);
    expect([...(retried?.keys ?? [])].sort()).toEqual([...(refused?.keys ?? [])].sort());
    expect(retried?.idempotencyKey).toBe(refused?.idempotencyKey);
    expect(new Set([whole?.idempotencyKey, refused?.idempotencyKey, other?.idempotencyKey]).size).toBe(3);
  }, 30_000);
});

describe('e-mail answered 413', () => {
  it('a generic e-mail digest answered 413 is split, not dead', async () => {
    const mail = await limitedReceiver(Number.POSITIVE_INFINITY);
    const world = await deliveryWorld(db, {
      destinations: {
        mail: {
          type: 'email',
          provider: 'generic',
          url: mail.url,
          from: 'alerts@example.com',
          to: ['soc@example.com'],
        },
      },
      routes: [{ name: 'all', match: {}, to: ['mail'] }],
      digest: { threshold: 2, maxItems: 20 },
    });
    const destination = world.runtime.destinations.get('mail') as ResolvedDestination;
    const bytes = async (n: number) => {
      const alerts = Array.from({ length: n }, (_, i) => ({
        kind: 'event' as const,
        key: `k${i}`,
        source: 'tenant',
        item: eventNumber(i),
        deliveryId: `mail~event~k${i}`,
        destination: 'mail',
        routes: ['all'],
      }));
      const [message] = await world.runtime.deliver.render(
        destination,
        alerts as DeliveryAlert[],
        new Date(),
      );
      return ((await requestFor(destination, message?.payload, [], Date.now()))?.body ?? '').length;
    };
    // A digest of 12 is refused; one of 6 or fewer (and any single e-mail) is taken.
    mail.limit.maxBytes = Math.max(await bytes(6), await bytes(1)) + 200;
    expect(await bytes(12)).toBeGreaterThan(mail.limit.maxBytes);
    await world.seed('mail', 12);
    const summary = await world.pass();
    expect(summary.dead).toBe(0);
    expect(summary.sent).toBe(12);
    expect(mail.seen[0]?.status).toBe(413);
    expect(mail.seen.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(2);
  }, 30_000);
});
