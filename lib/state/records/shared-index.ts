/**
 * How a shared stream indexes what it records, so each item is listed once with every
 * destination's delivery, whichever of the streams that find it (a tenant feed and an identifier
 * group) created which records.
 *
 * The item's detail (`alert#<key>` / `<kind>`, alert-index.ts) is where the streams meet. A stream
 * that created records of an item updates the detail once, in one UpdateItem that
 * - adds those destinations' deliveries to the detail's set `dests` (ADD: the set only grows, so
 *   no stream's destinations are lost to another's write), and
 * - sets the detail's `pack`, `entry` and item only where it has none (if_not_exists), returning
 *   the old values: the stream that finds no `pack` is the item's first and only it lists the
 *   entry, in the pack it named. DynamoDB applies one item's updates one at a time, so of two
 *   streams recording the item at the same moment exactly one is first.
 * The entry is marked `shared`: the list reads its detail for the other destinations, and lists it
 * only while the detail names its pack (state/alert-list.ts). An item an exclusive stream listed
 * (before a group or an overlapping domain joined its config) has a detail with a pack and no
 * entry: the first shared stream to record it marks that entry `shared` in its pack and makes it
 * the detail's (`adoptEntries`, one read and one conditional put of the pack for a page's items).
 *
 * What a crash leaves. Between a stream's records and its update: its re-read page finds the
 * records made, and adds to the item's detail those destinations it lacks (`addFound`: one
 * BatchGet of the page's details, an update only where one lacks); if no stream has written the
 * detail yet, it writes one holding those destinations alone, unlisted, as a single stream's item
 * after such a crash is; another stream's update then lists it, with both. Between the first stream's update and its list
 * pack: the detail holds the item, its entry and its destinations, and the item is not listed (the
 * pack it names never comes). A detail that expired (the item came back after its records did) is
 * replaced by the first to record the item again, conditionally.
 *
 * Cost: one UpdateItem per item with new records, where an exclusive stream's detail is its share
 * of a batch write, and one BatchGet per 100 items found recorded already (and an UpdateItem for
 * each found one whose detail lacks them, once). Only shared streams pay
 * it; they already create each record with a conditional put. Exclusive streams (the common case,
 * and the bench's drain) write as before.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { ItemKind } from '../../model.ts';
import { batchGet, batchPut, mapLimit, type TableIo } from '../io.ts';
import { marshall, unmarshall } from '../marshall.ts';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '../sdk.ts';
import {
  entryPk,
  type IndexEntry,
  type Indexed,
  itemPk,
  listPackItem,
  monthOfSk,
  packLayout,
} from './alert-index.ts';
import { isLive } from './record.ts';
import { ensureTenantCopies, holdsTenantCopies } from './tenant-copies.ts';

/** Concurrent detail updates, as the records' conditional puts (once.ts). */
const CONCURRENCY = 16;

/** The detail's set element for one destination's delivery: `[destination, how it began]`. */
export function detailDelivery(destination: string, began: unknown): string {
  return JSON.stringify([destination, began]);
}

/**
 * Indexes `items` (entries marked `shared`, each with the deliveries this run created): updates
 * each detail, then writes the list packs of the items it was first to record.
 */
export async function indexShared(
  io: TableIo,
  items: readonly Indexed[],
  expiresAt: number | undefined,
): Promise<void> {
  const packs = packLayout(items);
  const first = new Set<Indexed>();
  /** List packs of an exclusive stream that list items recorded here too: their entry, to adopt. */
  const adopt = new Map<string, Indexed[]>();
  await mapLimit(
    packs.flatMap((pack) => pack.entries.map((indexed) => ({ pack: pack.sk, indexed }))),
    CONCURRENCY,
    async ({ pack, indexed }) => {
      const found = await updateDetail(io, indexed, pack, expiresAt);
      if (found === true) first.add(indexed);
      else if (found) adopt.set(found.exclusive, [...(adopt.get(found.exclusive) ?? []), indexed]);
    },
  );
  await mapLimit([...adopt], CONCURRENCY, ([sk, adopted]) => adoptEntries(io, sk, adopted));
  const lists = packs.flatMap((pack) => {
    const json = pack.json.filter((_, i) => first.has(pack.entries[i] as Indexed));
    const tenant = pack.entries[0]?.entry.tenant;
    if (json.length === 0) return [];
    const global = listPackItem(pack.sk, json, expiresAt);
    return tenant === undefined ? [global] : [global, listPackItem(pack.sk, json, expiresAt, tenant)];
  });
  if (holdsTenantCopies(lists)) await ensureTenantCopies(io);
  await batchPut(io, lists);
}

/**
 * Adds `indexed`'s deliveries to its item's detail; true when it is the item's first (lists it);
 * `exclusive` when an exclusive stream listed it before (the list pack it names holds an entry that
 * is not marked shared: adoptEntries).
 */
async function updateDetail(
  io: TableIo,
  indexed: Indexed,
  pack: string,
  expiresAt: number | undefined,
): Promise<boolean | { exclusive: string }> {
  const { entry, item } = indexed;
  const key = marshall({ pk: itemPk(entry.key), sk: entry.kind });
  const dests: AttributeValue = {
    SS: Object.entries(entry.deliveries).map(([d, began]) => detailDelivery(d, began)),
  };
  const fields = {
    pack,
    entry: JSON.stringify(entry),
    itemJson: JSON.stringify(item),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
  for (let attempt = 0; ; attempt++) {
    const now = Math.floor(io.clock.now() / 1000);
    try {
      io.onRequest?.('UpdateItem');
      const out = await io.client.send(
        new UpdateItemCommand({
          TableName: io.tableName,
          Key: key,
          UpdateExpression: `SET ${Object.keys(fields)
            .map((f) => `#${f} = if_not_exists(#${f}, :${f})`)
            .join(', ')} ADD #dests :dests`,
          // A live detail, or none: an expired one is replaced below, not added to.
          ConditionExpression: 'attribute_not_exists(expiresAt) OR expiresAt > :now',
          ExpressionAttributeNames: {
            ...Object.fromEntries(Object.keys(fields).map((f) => [`#${f}`, f])),
            '#dests': 'dests',
          },
          ExpressionAttributeValues: {
            ...marshall(Object.fromEntries(Object.entries(fields).map(([f, v]) => [`:${f}`, v]))),
            ':dests': dests,
            ':now': { N: String(now) },
          },
          ReturnValues: 'UPDATED_OLD',
        }),
      );
      const before = out.Attributes ?? {};
      // An exclusive stream's detail names its pack and holds no entry (alert-index.ts).
      if (before.pack?.S !== undefined && before.entry === undefined && before.dests === undefined)
        return { exclusive: before.pack.S };
      // A detail written before the packs holds its entry itself: that one is listed already.
      return before.pack === undefined && before.entry === undefined;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException) || attempt >= 2) throw error;
    }
    try {
      io.onRequest?.('PutItem');
      await io.client.send(
        new PutItemCommand({
          TableName: io.tableName,
          Item: { ...key, ...marshall(fields), dests },
          ConditionExpression: 'expiresAt <= :now',
          ExpressionAttributeValues: { ':now': { N: String(now) } },
        }),
      );
      return true;
    } catch (error) {
      // Replaced meanwhile by another stream: add to that one.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/**
 * An exclusive stream listed these items (a config that had one stream of them, before a group or
 * an overlapping domain was added): their entries in its list pack `sk` are marked `shared`, with a
 * conditional put of the pack, so the list reads their details for the destinations recorded since;
 * and each detail's entry becomes that one, with its deliveries, for the detail's view. Once an
 * item: the detail then holds `dests`. A pack gone or changed meanwhile (three tries) is left.
 */
async function adoptEntries(io: TableIo, sk: string, adopted: readonly Indexed[]): Promise<void> {
  const key = marshall({ pk: entryPk(monthOfSk(sk)), sk });
  const wanted = new Set(adopted.map(({ entry }) => `${entry.kind}\u0000${entry.key}`));
  for (let attempt = 0; attempt < 3; attempt++) {
    io.onRequest?.('GetItem');
    const out = await io.client.send(
      new GetItemCommand({ TableName: io.tableName, Key: key, ConsistentRead: true }),
    );
    const entries = out.Item?.entries?.S;
    if (entries === undefined) return;
    const marked: IndexEntry[] = [];
    const list = (JSON.parse(entries) as IndexEntry[]).map((entry) => {
      if (entry.shared || !wanted.has(`${entry.kind}\u0000${entry.key}`)) return entry;
      const shared = { ...entry, shared: true as const };
      marked.push(shared);
      return shared;
    });
    if (marked.length === 0) return;
    try {
      io.onRequest?.('PutItem');
      await io.client.send(
        new PutItemCommand({
          TableName: io.tableName,
          Item: { ...out.Item, entries: { S: JSON.stringify(list) } },
          ConditionExpression: 'entries = :before',
          ExpressionAttributeValues: { ':before': { S: entries } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      continue;
    }
    await mapLimit(marked, CONCURRENCY, async (entry) => {
      io.onRequest?.('UpdateItem');
      await io.client.send(
        new UpdateItemCommand({
          TableName: io.tableName,
          Key: marshall({ pk: itemPk(entry.key), sk: entry.kind }),
          UpdateExpression: 'SET #entry = :entry ADD #dests :dests',
          ExpressionAttributeNames: { '#entry': 'entry', '#dests': 'dests' },
          ExpressionAttributeValues: {
            ':entry': { S: JSON.stringify(entry) },
            ':dests': {
              SS: Object.entries(entry.deliveries).map(([d, began]) => detailDelivery(d, began)),
            },
          },
        }),
      );
    });
    return;
  }
}

/** An item whose records of `destinations` a page found made already (not by this run). */
export interface Found {
  key: string;
  kind: ItemKind;
  destinations: string[];
}

/**
 * Adds to the details of `found` the destinations they lack, as `pending` (their records are read
 * for their state): a stream that stopped after its records and before its detail update, met
 * again on its re-read page. One BatchGet per 100 items; an update only for a detail that lacks
 * one. Only details a shared stream wrote (they hold `dests`). An item with no detail yet gets one
 * holding those destinations alone, unlisted (no pack, no entry): a stream that records the item
 * later lists it and adds its own, so the row shows both; without it that stream's row would lack
 * these for good. It is not listed by itself: the records found may be another stream's baseline.
 */
export async function addFound(
  io: TableIo,
  found: readonly Found[],
  expiresAt: number | undefined,
): Promise<void> {
  if (found.length === 0) return;
  const byKey = new Map(found.map((f) => [`${f.kind}\u0000${itemPk(f.key)}`, f]));
  const now = Math.floor(io.clock.now() / 1000);
  const lacking: { found: Found; missing: string[]; none: boolean }[] = [];
  const keys = [...byKey.values()].map((f) => marshall({ pk: itemPk(f.key), sk: f.kind }));
  const seen = new Set<Found>();
  for (const stored of await batchGet(io, keys, { projection: 'pk, sk, dests, expiresAt' })) {
    const { pk, sk, dests, expiresAt: until } = unmarshall(stored);
    const one = byKey.get(`${String(sk)}\u0000${String(pk)}`);
    if (!one) continue;
    seen.add(one);
    if (!Array.isArray(dests) || !isLive(until, now)) continue;
    const has = new Set(dests.map((d) => (JSON.parse(String(d)) as [string])[0]));
    const missing = one.destinations.filter((d) => !has.has(d));
    if (missing.length) lacking.push({ found: one, missing, none: false });
  }
  for (const one of byKey.values())
    if (!seen.has(one)) lacking.push({ found: one, missing: one.destinations, none: true });
  await mapLimit(lacking, CONCURRENCY, async ({ found: one, missing, none }) => {
    try {
      io.onRequest?.('UpdateItem');
      await io.client.send(
        new UpdateItemCommand({
          TableName: io.tableName,
          Key: marshall({ pk: itemPk(one.key), sk: one.kind }),
          UpdateExpression: `ADD #dests :dests${none && expiresAt !== undefined ? ' SET expiresAt = if_not_exists(expiresAt, :expires)' : ''}`,
          // None read: none, or one written since (by a stream that records it now), added to.
          ConditionExpression: none
            ? 'attribute_not_exists(pk) OR (attribute_exists(#dests) AND (attribute_not_exists(expiresAt) OR expiresAt > :now))'
            : 'attribute_exists(#dests) AND (attribute_not_exists(expiresAt) OR expiresAt > :now)',
          ExpressionAttributeNames: { '#dests': 'dests' },
          ExpressionAttributeValues: {
            ':dests': { SS: missing.map((d) => detailDelivery(d, { status: 'pending' })) },
            ':now': { N: String(now) },
            ...(none && expiresAt !== undefined ? { ':expires': { N: String(expiresAt) } } : {}),
          },
        }),
      );
    } catch (error) {
      // Expired meanwhile, or an index of another kind: the item's next recording starts a new one.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  });
}
