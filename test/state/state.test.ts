/**
 * The state layer on real dynalite: leases with fencing, and delivery records whose expiry is
 * checked in code (dynalite never deletes expired items, and DynamoDB only eventually).
 */
import { describe, expect, it } from 'vitest';
import { DeliveryStore, type NewDelivery } from '../../lib/state/deliveries.ts';
import { LeaseLostError, LeaseStore } from '../../lib/state/lease.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

const record = (key: string, status: NewDelivery['status'] = 'pending'): NewDelivery => ({
  destination: 'soc',
  kind: 'event',
  key,
  source: 'tenant',
  routes: ['r1'],
  item: { metadata: { uid: key } },
  status,
});

describe('leases', () => {
  it('one holder at a time; a lapsed lease is taken over with a higher fence, and the old holder is fenced out', async () => {
    const clock = fakeClock();
    const leases = new LeaseStore(db.client, await db.table(), clock);
    const a = await leases.acquire('stream#x', 'state', 'run-a');
    expect(a?.fence).toBe(1);
    expect(await leases.acquire('stream#x', 'state', 'run-b')).toBeUndefined();
    await leases.update(a!, { set: { cursorNext: 'c1' } });
    clock.advance(59_000);
    expect(await leases.acquire('stream#x', 'state', 'run-b')).toBeUndefined(); // renewed by the update
    clock.advance(61_000);
    const b = await leases.acquire('stream#x', 'state', 'run-b');
    expect(b?.fence).toBe(2);
    expect(b?.item.cursorNext).toBe('c1');
    await expect(leases.update(a!, { set: { cursorNext: 'stale' } })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await leases.release(a!)).toBe(false);
    expect(await leases.release(b!, { set: { cursorNext: 'c2' } })).toBe(true);
    const c = await leases.acquire('stream#x', 'state', 'run-c');
    expect(c?.item.cursorNext).toBe('c2');
    expect(c?.fence).toBe(3);
  });
});

describe('delivery records', () => {
  for (const exclusive of [false, true]) {
    it(`are created once (${exclusive ? 'batch' : 'conditional'} writes), and an expired one counts as absent`, async () => {
      const clock = fakeClock();
      const store = new DeliveryStore(db.client, await db.table(), clock, { retentionDays: 90 });
      const first = await store.create([record('e/o/1'), record('e/o/2', 'baseline'), record('e/o/1')], {
        exclusive,
      });
      expect(first.created.map((r) => r.id).sort()).toEqual(['soc~event~e/o/1', 'soc~event~e/o/2']);
      const again = await store.create([record('e/o/1'), record('e/o/2')], { exclusive });
      expect(again.created).toEqual([]);
      expect(again.existing).toBe(2);
      // A baseline record is a 90-day marker; past it, the item is new again. The pending one never expires.
      clock.advance(91 * 86_400_000);
      const later = await store.create([record('e/o/1'), record('e/o/2')], { exclusive });
      expect(later.created.map((r) => r.id)).toEqual(['soc~event~e/o/2']);
      expect((await store.list({ limit: 10 })).length).toBe(2);
    });
  }

  it('sent records keep what deliveries list shows, and a dead one can be re-queued', async () => {
    const clock = fakeClock();
    const store = new DeliveryStore(db.client, await db.table(), clock);
    const { created } = await store.create([record('e/o/9')]);
    const due = await store.due('soc', 10);
    expect(due.map((r) => r.id)).toEqual(['soc~event~e/o/9']);
    const dead = {
      ...(created[0] as (typeof created)[number]),
      status: 'dead' as const,
      attempts: 8,
      lastError: 'HTTP 404',
    };
    await store.save([dead]);
    expect(await store.due('soc', 10)).toEqual([]);
    const listed = await store.list({ status: 'dead', destinations: ['soc'] });
    expect(listed.map((r) => [r.id, r.attempts, r.lastError, r.routes])).toEqual([
      ['soc~event~e/o/9', 8, 'HTTP 404', ['r1']],
    ]);
    expect(await store.requeue('soc~event~e/o/9')).toBe(true);
    expect(await store.requeue('soc~event~nope')).toBe(false);
    const back = await store.due('soc', 10);
    expect(back.map((r) => [r.id, r.attempts, r.status])).toEqual([['soc~event~e/o/9', 0, 'pending']]);
    expect(back[0]?.item).toEqual({ metadata: { uid: 'e/o/9' } });
  });
});
