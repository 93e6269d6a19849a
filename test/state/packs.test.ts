/**
 * Packs and the claim mark (lib/state/records/packs.ts) on real dynalite: an exclusive stream's final
 * records are written as one item a page and found again by anyone; pages above the mark are not
 * read at all; everything at or below it, or never claimed, is checked.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DeliveryRecords, itemPosition, type NewDelivery } from '../../lib/state/records/index.ts';
import { PACK_MAX_CHARS } from '../../lib/state/records/packs.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

const IMPORTED = '2026-11-20T09:30:00+02:00';

function credential(
  id: number,
  status: NewDelivery['status'],
  options: { destination?: string; positioned?: boolean; note?: string } = {},
): NewDelivery {
  const key = String(id);
  return {
    destination: options.destination ?? 'siem',
    kind: 'credential',
    key,
    source: 'credentials:acme.test',
    routes: ['leaks', 'all'],
    item: { id, imported_at: IMPORTED },
    status,
    ...(options.note ? { note: options.note } : {}),
    ...(options.positioned === false ? {} : { position: itemPosition(IMPORTED, key) }),
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function storeWithCounts() {
  const clock = fakeClock();
  const table = await db.table();
  const counts: Record<string, number> = {};
  const store = new DeliveryRecords(db.client, table, clock, {
    // The alert index's writes are counted where it is tested (test/api/alerts.test.ts).
    alertIndex: false,
    onRequest: (operation) => {
      counts[operation] = (counts[operation] ?? 0) + 1;
    },
  });
  const take = () => {
    const copy = { ...counts };
    for (const key of Object.keys(counts)) delete counts[key];
    return copy;
  };
  const items = async () => (await db.client.send(new ScanCommand({ TableName: table }))).Items ?? [];
  return { clock, store, take, items };
}

describe('item positions', () => {
  it('place an item by its time in UTC and its key, numeric keys in numeric order', () => {
    expect(itemPosition('2026-11-20T09:30:00+02:00', '42')).toBe(
      '2026-11-20T07:30:00.000Z#00000000000000000042',
    );
    expect((itemPosition(IMPORTED, '9') as string) < (itemPosition(IMPORTED, '10') as string)).toBe(true);
    expect(itemPosition(IMPORTED, 'leak/abc')).toBe('2026-11-20T07:30:00.000Z#leak/abc');
    expect(itemPosition('not a time', '1')).toBeUndefined();
    expect(itemPosition(undefined, '1')).toBeUndefined();
  });
});

describe('packs', () => {
  it('hold a page of final records in one item, found again by every later check and listed in full', async () => {
    const { store, take, items } = await storeWithCounts();
    const first = await store.recordPage(
      range(1, 100).map((id) => credential(id, id % 10 ? 'baseline' : 'silenced', { note: 'quiet hours' })),
      { exclusive: true },
    );
    expect(first.created).toHaveLength(100);
    // Never claimed before: everything is checked (one BatchGet, one Query of the packs); both
    // packs go in one batch write.
    expect(take()).toEqual({ UpdateItem: 1, BatchGetItem: 1, Query: 1, BatchWriteItem: 1 });
    // One pack per status, and the claim mark: three items for a hundred records.
    expect(await items()).toHaveLength(3);

    // The next page, above the mark: nothing read, one pack written.
    const second = await store.recordPage(
      range(101, 200).map((id) => credential(id, 'baseline')),
      { exclusive: true },
    );
    expect(second.created).toHaveLength(100);
    expect(take()).toEqual({ UpdateItem: 1, BatchWriteItem: 1 });

    // Both pages again, as after a lost cursor: every one found, nothing written.
    const again = await store.recordPage(
      range(1, 200).map((id) => credential(id, 'baseline')),
      { exclusive: true },
    );
    expect(again).toEqual({ created: [], sendInline: [], existing: 200 });
    expect(take().BatchWriteItem ?? 0).toBe(0);

    // Another stream that shares these items (not exclusive) finds them in the packs too.
    const shared = await store.recordPage([credential(150, 'pending'), credential(201, 'pending')], {
      exclusive: false,
    });
    expect(shared.created.map((r) => r.key)).toEqual(['201']);
    expect(shared.existing).toBe(1);
    // The same item for another destination is its own delivery.
    const other = await store.recordPage([credential(150, 'baseline', { destination: 'soc' })], {
      exclusive: true,
    });
    expect(other.created.map((r) => r.id)).toEqual(['soc~credential~150']);

    const silenced = await store.queue.list({ status: 'silenced', limit: 1000 });
    expect(silenced.map((r) => r.key).sort((a, b) => Number(a) - Number(b))).toEqual(
      range(1, 10).map((i) => String(i * 10)),
    );
    for (const r of silenced) {
      expect(r).toMatchObject({
        destination: 'siem',
        kind: 'credential',
        source: 'credentials:acme.test',
        routes: ['leaks', 'all'],
        note: 'quiet hours',
      });
      expect(r.id).toBe(`siem~credential~${r.key}`);
    }
    const all = await store.queue.list({ limit: 1000 });
    expect(all).toHaveLength(202);
    expect(new Set(all.map((r) => r.id)).size).toBe(202);
    expect(all.filter((r) => r.status === 'pending').map((r) => r.key)).toEqual(['201']);
  });

  it('an item at or below the mark is always checked: a record written by another path is found', async () => {
    const { store, take } = await storeWithCounts();
    // A record created without a position never raises the mark...
    await store.recordPage([credential(7, 'pending', { positioned: false })], { exclusive: false });
    take();
    // ...so the first claim ever proves nothing, and the exclusive check still reads it.
    const first = await store.recordPage([credential(7, 'baseline'), credential(8, 'baseline')], {
      exclusive: true,
    });
    expect(first.created.map((r) => r.key)).toEqual(['8']);
    expect(take().BatchGetItem).toBe(1);

    // A claim whose records were never written (a crash right after it) makes nothing look present.
    // (a pending record handed back to send inline is claimed but not written)
    await store.recordPage([credential(50, 'pending')], { exclusive: true, inline: () => true });
    await store.recordPage([credential(40, 'pending')], { exclusive: false }); // below the mark, by a shared stream
    take();
    const after = await store.recordPage(
      [credential(40, 'baseline'), credential(50, 'baseline'), credential(60, 'baseline')],
      { exclusive: true },
    );
    expect(after.created.map((r) => r.key).sort()).toEqual(['50', '60']);
    expect(after.existing).toBe(1);
    expect(take().BatchGetItem).toBe(1); // 40 and 50 are at or below the mark: read
  });

  it('split a large page so that no item nears DynamoDB’s 400 KB', async () => {
    const { store, items } = await storeWithCounts();
    const note = `silenced: ${'maintenance window for the leak review '.repeat(2)}`;
    const page = range(1, 5_000).map((id) => credential(id, 'silenced', { note }));
    expect((await store.recordPage(page, { exclusive: true })).created).toHaveLength(5_000);
    const packs = (await items()).filter((i) => i.pk?.S?.startsWith('pack#'));
    expect(packs.length).toBeGreaterThan(1);
    for (const pack of packs) expect((pack.entries?.S ?? '').length).toBeLessThanOrEqual(PACK_MAX_CHARS);
    expect((await store.recordPage(page, { exclusive: true })).existing).toBe(5_000);
    expect(await store.queue.list({ status: 'silenced', limit: 10_000 })).toHaveLength(5_000);
  });

  it('a stream claims once a cycle up to now, again for a page placed later, and still checks what it wrote itself', async () => {
    const { clock, store, take, items } = await storeWithCounts();
    const window = store.claimWindow('credential');
    const page = async (records: NewDelivery[]) =>
      (await store.recordPage(records, { exclusive: true, claims: window })).created.map((r) => r.key);
    // A first cycle on an empty table proves nothing: its first page is read.
    expect(await page(range(1, 10).map((id) => credential(id, 'baseline')))).toHaveLength(10);
    expect(take()).toMatchObject({ UpdateItem: 1, BatchGetItem: 1 });
    // Later pages of the cycle: no claim, and nothing read above what earlier pages held...
    expect(await page(range(11, 20).map((id) => credential(id, 'baseline')))).toHaveLength(10);
    expect(take()).toEqual({ BatchWriteItem: 1 });
    // ...but an item shown again, at or below that, is read and found.
    expect(await page([credential(20, 'baseline'), credential(21, 'baseline')])).toEqual(['21']);
    expect(take()).toMatchObject({ BatchGetItem: 1, Query: 1, BatchWriteItem: 1 });

    // A credential stamped after the claim: claimed again before its record is written.
    const late = new Date(clock.now() + 3_600_000).toISOString();
    const future: NewDelivery = { ...credential(99, 'baseline'), position: itemPosition(late, '99') };
    expect(await page([future])).toEqual(['99']);
    expect(take().UpdateItem).toBe(1);
    const mark = (await items()).find((i) => i.pk?.S === 'seen#credential');
    expect((mark?.upTo?.S ?? '') >= (future.position as string)).toBe(true);

    // The next cycle (a new window) proves everything up to the last claim was possibly written.
    const next = store.claimWindow('credential');
    // Handed back to send inline: what is absent, without writing it.
    const { sendInline } = await store.recordPage([credential(5, 'pending'), credential(30, 'pending')], {
      exclusive: true,
      claims: next,
      inline: () => true,
    });
    expect(sendInline.map((r) => r.key)).toEqual(['30']);
  });

  it('expire like the records they replace', async () => {
    const { clock, store } = await storeWithCounts();
    await store.recordPage(
      range(1, 5).map((id) => credential(id, 'baseline')),
      { exclusive: true },
    );
    expect((await store.recordPage([credential(3, 'baseline')], { exclusive: true })).existing).toBe(1);
    clock.advance(91 * 86_400_000);
    const later = await store.recordPage(
      range(1, 5).map((id) => credential(id, 'baseline')),
      { exclusive: true },
    );
    expect(later.created).toHaveLength(5);
    expect(await store.queue.list({ limit: 100 })).toHaveLength(5);
  });
});
