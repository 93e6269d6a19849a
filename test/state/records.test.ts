/**
 * Delivery records (lib/state/records) on real dynalite: created once, whichever way they are
 * written, with expiry checked in code (dynalite never deletes expired items, DynamoDB only
 * eventually); the outbox the delivery pass and operators read.
 */
import { describe, expect, it } from 'vitest';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
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

describe('delivery records', () => {
  for (const exclusive of [false, true]) {
    it(`are created once (${exclusive ? 'batch' : 'conditional'} writes), and an expired one counts as absent`, async () => {
      const clock = fakeClock();
      const store = new DeliveryRecords(db.client, await db.table(), clock, { retentionDays: 90 });
      const first = await store.recordPage([record('e/o/1'), record('e/o/2', 'baseline'), record('e/o/1')], {
        exclusive,
      });
      expect(first.created.map((r) => r.id).sort()).toEqual(['soc~event~e/o/1', 'soc~event~e/o/2']);
      const again = await store.recordPage([record('e/o/1'), record('e/o/2')], { exclusive });
      expect(again.created).toEqual([]);
      expect(again.existing).toBe(2);
      // A baseline record is a 90-day marker; past it, the item is new again. The pending one never expires.
      clock.advance(91 * 86_400_000);
      const later = await store.recordPage([record('e/o/1'), record('e/o/2')], { exclusive });
      expect(later.created.map((r) => r.id)).toEqual(['soc~event~e/o/2']);
      expect((await store.queue.list({ limit: 10 })).length).toBe(2);
    });
  }

  it('hands back the pending records to send inline, unwritten, and writes them once sent', async () => {
    const clock = fakeClock();
    const store = new DeliveryRecords(db.client, await db.table(), clock);
    const page = await store.recordPage([record('e/o/5'), record('e/o/6', 'silenced')], {
      exclusive: true,
      inline: () => true,
    });
    expect(page.sendInline.map((r) => r.key)).toEqual(['e/o/5']);
    expect((await store.queue.list({ limit: 10 })).map((r) => r.key)).toEqual(['e/o/6']);
    await store.insert(page.sendInline.map((r) => ({ ...r, status: 'sent' as const, attempts: 1 })));
    expect((await store.recordPage([record('e/o/5')], { exclusive: true })).existing).toBe(1);
  });
});

describe('the outbox', () => {
  it('sent records keep what deliveries list shows, and a dead one can be re-queued', async () => {
    const clock = fakeClock();
    const store = new DeliveryRecords(db.client, await db.table(), clock);
    const queue = store.queue;
    const { created } = await store.recordPage([record('e/o/9')], { exclusive: false });
    const due = await queue.due('soc', 10);
    expect(due.map((r) => r.id)).toEqual(['soc~event~e/o/9']);
    const dead = {
      ...(created[0] as (typeof created)[number]),
      status: 'dead' as const,
      attempts: 8,
      lastError: 'HTTP 404',
    };
    await queue.save([dead]);
    expect(await queue.due('soc', 10)).toEqual([]);
    const listed = await queue.list({ status: 'dead', destinations: ['soc'] });
    expect(listed.map((r) => [r.id, r.attempts, r.lastError, r.routes])).toEqual([
      ['soc~event~e/o/9', 8, 'HTTP 404', ['r1']],
    ]);
    expect(await queue.requeue('soc~event~e/o/9')).toBe(true);
    expect(await queue.requeue('soc~event~nope')).toBe(false);
    const back = await queue.due('soc', 10);
    expect(back.map((r) => [r.id, r.attempts, r.status])).toEqual([['soc~event~e/o/9', 0, 'pending']]);
    expect(back[0]?.item).toEqual({ metadata: { uid: 'e/o/9' } });
  });

  it('due reads no more than it is asked for, across index pages', async () => {
    const clock = fakeClock();
    const counted: string[] = [];
    const store = new DeliveryRecords(db.client, await db.table(), clock, {
      onRequest: (op) => counted.push(op),
    });
    await store.recordPage(
      Array.from({ length: 30 }, (_, i) => record(`e/o/${i}`)),
      { exclusive: true },
    );
    clock.advance(1_000);
    expect(await store.queue.due('soc', 7)).toHaveLength(7);
    expect(await store.queue.due('soc', 100)).toHaveLength(30);
  });
});
