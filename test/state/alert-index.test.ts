/**
 * The alert index as stored (lib/state/records/alert-index.ts) and read (lib/state/alert-list.ts)
 * on real dynalite: a write's entries go in list packs, one detail an item names its pack; a list
 * read pages through packs (stopping inside one and going on from there), packs of one moment
 * whose entries interleave, and entries stored one an item as written before the packs, each
 * entry once; a detail finds its entry through its pack.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { AlertReader, MAX_QUERIES, PAGE_ITEMS } from '../../lib/state/alert-list.ts';
import { batchPut, queryAll, type TableIo } from '../../lib/state/io.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import {
  entryPk,
  entrySk,
  type IndexEntry,
  indexWrites,
  LIST_PACK_ENTRIES,
  monthOf,
} from '../../lib/state/records/alert-index.ts';
import { DeliveryRecords, itemPosition, type NewDelivery } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

async function io(onRequest?: (operation: string) => void): Promise<TableIo> {
  return { client: db.client, tableName: await db.table(), clock: systemClock, onRequest };
}

/** An event entry, sent to `hook`, recorded at `at` and matched `matchedAgoS` seconds before it. */
function entry(key: string, at: string, matchedAgoS: number): IndexEntry {
  return {
    key,
    kind: 'event',
    severity: 'high',
    title: `leak for ${key}`,
    source: 'tenant',
    matchedAt: new Date(Date.parse(at) - matchedAgoS * 1000).toISOString(),
    at,
    deliveries: { hook: { status: 'sent', at, attempts: 1 } },
    match: { metadata: { type: 'leak', severity: 'high' } },
  };
}

/** Every page of the list, in order, with the Queries each took. */
async function allPages(reader: AlertReader, counted: { queries: number }) {
  const pages: { keys: string[]; queries: number }[] = [];
  let from: Awaited<ReturnType<AlertReader['page']>>['next'];
  do {
    counted.queries = 0;
    const page = await reader.page({}, from);
    pages.push({ keys: page.items.map((i) => i.entry.key), queries: counted.queries });
    from = page.next;
  } while (from && pages.length < 40);
  return pages;
}

describe('the alert index', () => {
  it('stores a page’s entries as list packs of 100, newest first, and one detail an item naming its pack', async () => {
    const table = await io();
    const records = new DeliveryRecords(table.client, table.tableName, systemClock);
    const now = Date.now();
    const deliveries: NewDelivery[] = Array.from({ length: 250 }, (_, i) => ({
      destination: 'hook',
      kind: 'event',
      key: `leak/paste/${String(i).padStart(3, '0')}`,
      source: 'tenant',
      routes: ['all'],
      status: 'pending',
      item: { metadata: { uid: `u${i}`, type: 'leak', matched_at: new Date(now - i * 1000).toISOString() } },
    }));
    await records.recordPage(deliveries, { exclusive: true });
    const month = monthOf(new Date(now).toISOString());
    const packs = (
      await queryAll(table, {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': entryPk(month) }),
      })
    ).map(unmarshall);
    expect(packs.map((p) => (JSON.parse(String(p.entries)) as IndexEntry[]).length).sort()).toEqual([
      100, 100, 50,
    ]);
    for (const p of packs) {
      const keys = (JSON.parse(String(p.entries)) as IndexEntry[]).map((e) => e.key);
      // Newest first within a pack, and the pack sorts by its newest entry.
      expect(keys).toEqual([...keys].sort());
      const newest = (JSON.parse(String(p.entries)) as IndexEntry[])[0] as IndexEntry;
      expect(String(p.sk).startsWith(`${newest.at}#${newest.matchedAt}#`)).toBe(true);
    }
    const detail = unmarshall(
      (
        await queryAll(table, {
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: marshall({ ':pk': 'alert#leak/paste/123' }),
        })
      )[0] as Record<string, never>,
    );
    const holding = packs.find((p) => p.sk === detail.pack);
    expect(String(holding?.entries)).toContain('"key":"leak/paste/123"');
    expect(JSON.parse(String(detail.itemJson))).toMatchObject({ metadata: { uid: 'u123' } });
    expect(detail.entry).toBeUndefined();
  });

  it('writes a page of 100 packed records and their index in 5 batch writes: 4 full, then the last detail with the list pack', async () => {
    const requests: string[] = [];
    const table = await io();
    const records = new DeliveryRecords(table.client, table.tableName, systemClock, {
      onRequest: (op) => requests.push(op),
    });
    const at = new Date().toISOString();
    const page: NewDelivery[] = Array.from({ length: 100 }, (_, i) => ({
      destination: 'hook',
      kind: 'credential',
      key: String(1_000 + i),
      source: 'credentials:acme.test',
      routes: ['all'],
      status: 'silenced',
      note: 'quiet',
      position: itemPosition(at, String(1_000 + i)),
      item: { id: 1_000 + i, identity_name: `u${i}@acme.test`, imported_at: at },
    }));
    expect((await records.recordPage(page, { exclusive: true })).created).toHaveLength(100);
    expect(requests.filter((r) => r === 'BatchWriteItem')).toHaveLength(5);
    // All there: 100 details, one pack of records, one list pack.
    const reader = new AlertReader(table);
    expect((await reader.page({}, undefined)).items).toHaveLength(PAGE_ITEMS);
    expect((await reader.item('1099'))?.entry.deliveries).toEqual({
      hook: { status: 'silenced', note: 'quiet' },
    });
  });

  it('pages through packs (stopping inside one), packs of one moment that interleave, and entries stored alone: each once', async () => {
    const counted = { queries: 0 };
    const table = await io((op) => {
      if (op === 'Query') counted.queries += 1;
    });
    const now = Date.now();
    const at = new Date(now - 60_000).toISOString();
    const older = new Date(now - 120_000).toISOString();
    // Two writes of one moment: even seconds in one, odd in the other, so their ranges interleave.
    const even = Array.from({ length: 120 }, (_, i) => entry(`e${String(i).padStart(3, '0')}`, at, 2 * i));
    const odd = Array.from({ length: 90 }, (_, i) => entry(`o${String(i).padStart(3, '0')}`, at, 2 * i + 1));
    for (const written of [even, odd]) {
      const w = indexWrites(
        written.map((e) => ({ entry: e, item: { uid: e.key } })),
        undefined,
      );
      expect(w.lists).toHaveLength(Math.ceil(written.length / LIST_PACK_ENTRIES));
      await batchPut(table, [...w.details, ...w.lists]);
    }
    // Entries written one an item, before the packs: older.
    const alone = Array.from({ length: 30 }, (_, i) => entry(`a${String(i).padStart(3, '0')}`, older, i));
    await batchPut(
      table,
      alone.map((e) => marshall({ pk: entryPk(monthOf(e.at)), sk: entrySk(e), entry: JSON.stringify(e) })),
    );
    const pages = await allPages(new AlertReader(table), counted);
    const keys = pages.flatMap((p) => p.keys);
    expect(keys).toHaveLength(240);
    expect(new Set(keys).size).toBe(240);
    for (const page of pages) {
      expect(page.keys.length).toBeLessThanOrEqual(PAGE_ITEMS);
      expect(page.queries).toBeLessThanOrEqual(MAX_QUERIES);
    }
    // Recorded earlier: last. Within each pack, newest matched first.
    expect(keys.slice(210).every((k) => k.startsWith('a'))).toBe(true);
    const evens = keys.filter((k) => k.startsWith('e'));
    expect(evens).toEqual([...evens].sort());
    // Pages of 50 over packs of 100: some page stopped inside a pack and the next went on from there.
    expect(pages[0]?.keys).toHaveLength(PAGE_ITEMS);
  });

  it('finds an item’s detail through its list pack, and not while the pack is missing', async () => {
    const table = await io();
    const reader = new AlertReader(table);
    const at = new Date().toISOString();
    const w = indexWrites(
      [{ entry: entry('leak/x/1', at, 5), item: { secret: 'kept as recorded' } }],
      undefined,
    );
    await batchPut(table, w.details);
    // A crash between the details and the list: the item is nowhere (a 404), as it is not listed.
    expect(await reader.item('leak/x/1')).toBeUndefined();
    await batchPut(table, w.lists);
    const found = await reader.item('leak/x/1');
    expect(found?.entry).toMatchObject({ key: 'leak/x/1', title: 'leak for leak/x/1' });
    expect(found?.item).toEqual({ secret: 'kept as recorded' });
    expect(found?.deliveries).toEqual([expect.objectContaining({ destination: 'hook', status: 'sent' })]);
    expect(await reader.item('leak/x/2')).toBeUndefined();
  });

  it('gives a dry run the recent entries of packs, at most as many as asked', async () => {
    const table = await io();
    const now = Date.now();
    const recentAt = new Date(now - 3_600_000).toISOString();
    const oldAt = new Date(now - 10 * 86_400_000).toISOString();
    const fresh = Array.from({ length: 150 }, (_, i) => entry(`r${i}`, recentAt, i));
    const stale = Array.from({ length: 20 }, (_, i) => entry(`s${i}`, oldAt, i));
    const w = indexWrites(
      [...fresh, ...stale].map((e) => ({ entry: e, item: {} })),
      undefined,
    );
    await batchPut(table, w.lists);
    const reader = new AlertReader(table);
    expect((await reader.recent(7, 1_000)).map((e) => e.key).sort()).toEqual(fresh.map((e) => e.key).sort());
    expect(await reader.recent(7, 120)).toHaveLength(120);
  });
});
