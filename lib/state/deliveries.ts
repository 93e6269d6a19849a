/**
 * Delivery records: one per (item, destination), created once and also the dedupe marker.
 *
 * - Creation: a consistent BatchGet first (re-read pages then cost one request, not one per item),
 *   then a conditional put per absent record (`attribute_not_exists(pk) OR expiresAt < now`). When
 *   the caller holds the only right to create these records (its stream's lease, and no other
 *   stream can produce the same items), the absent ones are written with BatchWriteItem instead:
 *   the same outcome in 1/25th of the requests.
 * - Expiry: sent, silenced and baseline records carry `expiresAt` (90 days by default). Expired
 *   records are treated as absent in code: DynamoDB deletes them only eventually, dynalite never.
 * - Packs: an exclusive stream's final records of items with a fixed place in their feed
 *   (credentials) are written as one item per page, destination and status instead, and a claim
 *   mark spares it reading for items nobody can have recorded yet: see packs.ts. `list` shows
 *   packed records like any other.
 * - Storage: those three statuses are final, so their record is stored compact: the attributes
 *   anything reads or filters on (`id`, `status`, `expiresAt`) and the rest as one JSON attribute,
 *   `meta`, without the item: nothing sends it again, and `deliveries list` never shows it. These
 *   are most of the records, and each attribute and byte costs in every write (see test/bench).
 *   Pending and dead records keep one attribute per field and the item, to send it (again).
 * - Pending and dead records sit in the sparse index `gsi1` under `pending#<destination>` /
 *   `dead#<destination>`, sorted by the next attempt time, so a delivery pass reads only what is
 *   due. A record leaves the index when it is sent.
 * - Status changes after creation are made by the delivery pass while it holds the destination's
 *   lease (the only writer of those records then), so they are batched too.
 */

import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { type ItemKind, RECORD_RETENTION_DAYS } from '../model.ts';
import { fitKey, nameFromKey, nameInKey, PARTITION_KEY_BYTES, SORT_KEY_BYTES } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ClaimWindow, PackStore, packable } from './packs.ts';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
} from './sdk.ts';

export type DeliveryStatus = 'pending' | 'sent' | 'dead' | 'silenced' | 'baseline';

export const DEFAULT_RETENTION_DAYS = RECORD_RETENTION_DAYS;

export interface DeliveryRecord {
  /** `<destination>~<kind>~<key>`: stable, readable, and enough to find the record again. */
  id: string;
  destination: string;
  kind: ItemKind;
  key: string;
  source: string;
  status: DeliveryStatus;
  attempts: number;
  /** ISO time the next attempt is due (pending records). */
  nextAttemptAt?: string;
  lastError?: string;
  /**
   * When the destination first answered 429 to this delivery, in the current run of 429s: a 429
   * costs no attempt, so this is what makes one still refused after 24 hours dead (deliver/pass.ts).
   */
  rateLimitedSince?: string;
  /** Routes that chose this destination for this item. */
  routes: string[];
  /** The item as the destination will see it: password policy already applied. */
  item: unknown;
  createdAt: string;
  updatedAt: string;
  sentAt?: string;
  /** Epoch seconds after which the record no longer counts (DynamoDB TTL attribute). */
  expiresAt?: number;
  note?: string;
  /** Where the item sorts in its feed (packs.ts); held in memory, not stored on the record. */
  position?: string;
}

export type NewDelivery = Pick<
  DeliveryRecord,
  'destination' | 'kind' | 'key' | 'source' | 'routes' | 'item' | 'position'
> & {
  status: Extract<DeliveryStatus, 'pending' | 'silenced' | 'baseline'>;
  note?: string;
};

export function deliveryId(destination: string, kind: ItemKind, key: string): string {
  return `${nameInKey(destination)}~${kind}~${key}`;
}

export function parseDeliveryId(
  id: string,
): { destination: string; kind: ItemKind; key: string } | undefined {
  const first = id.indexOf('~');
  const second = id.indexOf('~', first + 1);
  if (first <= 0 || second < 0) return undefined;
  const kind = id.slice(first + 1, second);
  if (kind !== 'event' && kind !== 'credential') return undefined;
  const key = id.slice(second + 1);
  return key ? { destination: nameFromKey(id.slice(0, first)), kind, key } : undefined;
}

function recordKey(destination: string, kind: ItemKind, key: string) {
  return { pk: fitKey(`dlv#${nameInKey(destination)}#${kind}#${key}`, PARTITION_KEY_BYTES), sk: 'dlv' };
}

/** The index partition of a destination's pending or dead records. */
function queueKey(status: 'pending' | 'dead', destination: string): string {
  return `${status}#${nameInKey(destination)}`;
}

/** The index's sort key: time first (what is due), then the id, cut to fit when a uid is huge. */
function indexSortKey(time: string, id: string): string {
  return fitKey(`${time}#${id}`, SORT_KEY_BYTES);
}

const FINAL_STATUSES: ReadonlySet<DeliveryStatus> = new Set(['sent', 'silenced', 'baseline']);

/** The stored form: the item as a JSON string (no nesting limits, one attribute to read back). */
function toStored(record: DeliveryRecord): Record<string, AttributeValue> {
  const { item, position: _position, ...rest } = record;
  if (FINAL_STATUSES.has(record.status)) {
    const { id, status, expiresAt, ...meta } = rest;
    return marshall({
      ...recordKey(record.destination, record.kind, record.key),
      id,
      status,
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      meta: JSON.stringify(meta),
    });
  }
  const indexed =
    record.status === 'pending'
      ? {
          gsi1pk: queueKey('pending', record.destination),
          gsi1sk: indexSortKey(record.nextAttemptAt ?? record.createdAt, record.id),
        }
      : record.status === 'dead'
        ? { gsi1pk: queueKey('dead', record.destination), gsi1sk: indexSortKey(record.updatedAt, record.id) }
        : {};
  return marshall({
    ...recordKey(record.destination, record.kind, record.key),
    ...rest,
    ...indexed,
    itemJson: JSON.stringify(item),
  });
}

function fromStored(stored: Record<string, AttributeValue>): DeliveryRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, itemJson, meta, ...rest } = unmarshall(stored);
  return {
    ...(typeof meta === 'string' ? (JSON.parse(meta) as Record<string, unknown>) : {}),
    ...(rest as Omit<DeliveryRecord, 'item'>),
    item: typeof itemJson === 'string' ? JSON.parse(itemJson) : null,
  };
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(workers);
  return results;
}

/** BatchWriteItem requests one call keeps in flight. */
const WRITE_CONCURRENCY = 4;

export interface CreateResult {
  /** Records this call created. */
  created: DeliveryRecord[];
  /** How many already existed (dedupe hits). */
  existing: number;
}

export interface DeliveryStoreOptions {
  retentionDays?: number;
  /** Counts every DynamoDB request made (benchmarks). */
  onRequest?: (operation: string) => void;
}

export class DeliveryStore {
  private readonly retentionSeconds: number;
  private readonly packs: PackStore;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly options: DeliveryStoreOptions = {},
  ) {
    this.retentionSeconds = (options.retentionDays ?? DEFAULT_RETENTION_DAYS) * 86_400;
    this.packs = new PackStore(client, tableName, clock, options.onRequest);
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  private expiresFor(status: DeliveryStatus): number | undefined {
    return status === 'sent' || status === 'silenced' || status === 'baseline'
      ? this.nowSeconds() + this.retentionSeconds
      : undefined;
  }

  private isLive(stored: Record<string, unknown>): boolean {
    const expires = stored.expiresAt;
    return typeof expires !== 'number' || expires > this.nowSeconds();
  }

  /** Reads records by id with a consistent read; missing or expired ones are left out. */
  async getMany(ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
    const found = new Map<string, DeliveryRecord>();
    for (const batch of chunks([...new Set(ids)], 100)) {
      let keys: Record<string, AttributeValue>[] = batch.flatMap((id) => {
        const parsed = parseDeliveryId(id);
        return parsed ? [marshall(recordKey(parsed.destination, parsed.kind, parsed.key))] : [];
      });
      for (let attempt = 0; keys.length > 0; attempt++) {
        this.options.onRequest?.('BatchGetItem');
        const out = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        for (const stored of out.Responses?.[this.tableName] ?? []) {
          const record = fromStored(stored);
          if (this.isLive(record as unknown as Record<string, unknown>)) found.set(record.id, record);
        }
        keys = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (keys.length) await this.clock.sleep(Math.min(1000, 50 * 2 ** attempt));
      }
    }
    return found;
  }

  /** BatchWriteItem in chunks of 25, a few chunks in flight at once. */
  private async batchPut(records: readonly DeliveryRecord[]): Promise<void> {
    await mapLimit(chunks(records, 25), WRITE_CONCURRENCY, async (batch) => {
      let requests = batch.map((record) => ({ PutRequest: { Item: toStored(record) } }));
      for (let attempt = 0; requests.length > 0; attempt++) {
        this.options.onRequest?.('BatchWriteItem');
        const out = await this.client.send(
          new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
        if (requests.length) await this.clock.sleep(Math.min(1000, 50 * 2 ** attempt));
      }
    });
  }

  /**
   * The records `deliveries` would create: one per id, leaving out ids whose record exists (one
   * consistent BatchGet per 100 ids, and a Query of the packs that can hold them). First it claims
   * their positions (packs.ts): for an `exclusive` caller, items above the previous claim are
   * known absent and not read at all. Writes nothing but the claim.
   */
  async prepare(
    deliveries: readonly NewDelivery[],
    options: { exclusive?: boolean; window?: ClaimWindow; startedBefore?: string } = {},
  ): Promise<{ absent: DeliveryRecord[]; existing: number }> {
    if (deliveries.length === 0) return { absent: [], existing: 0 };
    const now = new Date(this.clock.now()).toISOString();
    const unique = new Map<string, DeliveryRecord>();
    for (const d of deliveries) {
      const id = deliveryId(d.destination, d.kind, d.key);
      if (unique.has(id)) continue;
      unique.set(id, {
        id,
        destination: d.destination,
        kind: d.kind,
        key: d.key,
        source: d.source,
        status: d.status,
        attempts: 0,
        ...(d.status === 'pending' ? { nextAttemptAt: now } : {}),
        routes: d.routes,
        item: d.item,
        createdAt: now,
        updatedAt: now,
        ...(d.note ? { note: d.note } : {}),
        ...(this.expiresFor(d.status) ? { expiresAt: this.expiresFor(d.status) } : {}),
        ...(d.position !== undefined ? { position: d.position } : {}),
      });
    }
    const records = [...unique.values()];
    const known = await this.claim(records, options);
    const existingIds = await this.existingIds(records.filter((r) => !known.has(r.id)));
    const absent = records.filter((r) => !existingIds.has(r.id));
    return { absent, existing: unique.size - absent.length };
  }

  /**
   * Claims the positions of `records`, kind by kind. Returns the ids an exclusive caller knows to
   * be absent without reading: those above the claim mark as it was.
   */
  private async claim(
    records: readonly DeliveryRecord[],
    options: { exclusive?: boolean; window?: ClaimWindow; startedBefore?: string },
  ): Promise<Set<string>> {
    const absent = new Set<string>();
    for (const kind of new Set(records.map((r) => r.kind))) {
      const placed = records.filter((r) => r.kind === kind && r.position !== undefined);
      if (placed.length === 0) continue;
      const top = placed.reduce(
        (max, r) => ((r.position as string) > max ? (r.position as string) : max),
        '',
      );
      const above =
        options.window && kind === options.window.kind
          ? await options.window.threshold(top, options.startedBefore)
          : (await this.packs.claim(kind, top)).before;
      if (!options.exclusive || above === undefined) continue;
      for (const r of placed) if ((r.position as string) > above) absent.add(r.id);
    }
    return absent;
  }

  /** A stream's claims for one cycle (packs.ts). */
  claimWindow(kind: ItemKind): ClaimWindow {
    return new ClaimWindow(
      kind,
      (k, position) => this.packs.claim(k, position),
      () => this.clock.now(),
    );
  }

  /**
   * Writes new records with BatchWriteItem, whatever their status (a record may be created already
   * `sent`, see lib/poll/inline.ts). Only for a caller that holds the only right to create these
   * ids (see the module comment) and checked they are absent (`prepare`).
   */
  async insert(records: readonly DeliveryRecord[]): Promise<void> {
    const single: DeliveryRecord[] = [];
    const packs = new Map<string, DeliveryRecord[]>();
    for (const r of records) {
      if (!packable(r)) {
        const expiresAt = this.expiresFor(r.status);
        const { expiresAt: _old, ...rest } = r;
        single.push(expiresAt ? { ...rest, expiresAt } : rest);
        continue;
      }
      const group = `${r.destination}\u0000${r.kind}\u0000${r.status}\u0000${r.source}`;
      const list = packs.get(group) ?? [];
      list.push(r);
      packs.set(group, list);
    }
    await Promise.all([
      this.batchPut(single),
      ...[...packs.values()].map((pack) =>
        this.packs.write(pack, this.expiresFor((pack[0] as DeliveryRecord).status) as number),
      ),
    ]);
  }

  /**
   * Creates the records that do not exist yet. With `exclusive`, the caller guarantees nobody
   * else can create these ids meanwhile (see the module comment), and absent ones are batch-written.
   */
  async create(
    deliveries: readonly NewDelivery[],
    options: { exclusive?: boolean } = {},
  ): Promise<CreateResult> {
    const { absent, existing: found } = await this.prepare(deliveries, options);
    let existing = found;
    if (absent.length === 0) return { created: [], existing };
    if (options.exclusive) {
      await this.insert(absent);
      return { created: absent, existing };
    }
    const created: DeliveryRecord[] = [];
    await mapLimit(absent, 16, async (record) => {
      try {
        this.options.onRequest?.('PutItem');
        await this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: toStored(record),
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
            ExpressionAttributeValues: marshall({ ':now': this.nowSeconds() }),
          }),
        );
        created.push(record);
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        existing += 1;
      }
    });
    return { created, existing };
  }

  /**
   * Ids among `records` whose record exists and has not expired: its own item (consistent read,
   * keys only) or an entry in a pack.
   */
  private async existingIds(records: readonly DeliveryRecord[]): Promise<Set<string>> {
    const found = new Set<string>();
    if (records.length === 0) return found;
    const ranges = new Map<string, { destination: string; kind: ItemKind; from: string; to: string }>();
    for (const r of records) {
      if (r.position === undefined) continue;
      const group = `${r.destination}\u0000${r.kind}`;
      const range = ranges.get(group);
      if (!range)
        ranges.set(group, { destination: r.destination, kind: r.kind, from: r.position, to: r.position });
      else {
        if (r.position < range.from) range.from = r.position;
        if (r.position > range.to) range.to = r.position;
      }
    }
    const packed = [...ranges.values()].map(async ({ destination, kind, from, to }) => {
      for (const key of await this.packs.keysBetween(destination, kind, from, to))
        found.add(deliveryId(destination, kind, key));
    });
    await Promise.all([
      ...packed,
      this.existingRecords(
        records.map((r) => r.id),
        found,
      ),
    ]);
    return found;
  }

  /** Adds to `found` the ids among `ids` whose own record exists and has not expired. */
  private async existingRecords(ids: readonly string[], found: Set<string>): Promise<void> {
    const now = this.nowSeconds();
    for (const batch of chunks(ids, 100)) {
      let keys: Record<string, AttributeValue>[] = batch.map((id) => {
        const p = parseDeliveryId(id) as { destination: string; kind: ItemKind; key: string };
        return marshall(recordKey(p.destination, p.kind, p.key));
      });
      for (let attempt = 0; keys.length > 0; attempt++) {
        this.options.onRequest?.('BatchGetItem');
        const out = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [this.tableName]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'id, expiresAt' },
            },
          }),
        );
        for (const stored of out.Responses?.[this.tableName] ?? []) {
          const { id, expiresAt } = unmarshall(stored);
          if (typeof expiresAt !== 'number' || expiresAt > now) found.add(String(id));
        }
        keys = out.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (keys.length) await this.clock.sleep(Math.min(1000, 50 * 2 ** attempt));
      }
    }
  }

  /** Pending records of `destination` whose next attempt is due, oldest first (index read). */
  async due(destination: string, limit: number): Promise<DeliveryRecord[]> {
    const bound = `${new Date(this.clock.now()).toISOString()}~`;
    const out: DeliveryRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      this.options.onRequest?.('Query');
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk <= :bound',
          ExpressionAttributeValues: marshall({ ':pk': queueKey('pending', destination), ':bound': bound }),
          Limit: limit - out.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const stored of page.Items ?? []) out.push(fromStored(stored));
      start = page.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }

  /**
   * Writes records whose status the delivery pass changed. Only the holder of the destination's
   * lease calls this, so unconditional batch writes are safe.
   */
  async save(records: readonly DeliveryRecord[]): Promise<void> {
    const now = new Date(this.clock.now()).toISOString();
    await this.batchPut(
      records.map((r) => {
        const expiresAt = this.expiresFor(r.status);
        const { expiresAt: _old, ...rest } = r;
        return { ...rest, updatedAt: now, ...(expiresAt ? { expiresAt } : {}) };
      }),
    );
  }

  /** Records by status, for `deliveries list`. Pending and dead come from the index when destinations are given. */
  async list(
    options: { status?: DeliveryStatus; destinations?: string[]; limit?: number } = {},
  ): Promise<DeliveryRecord[]> {
    const limit = options.limit ?? 100;
    const out: DeliveryRecord[] = [];
    if ((options.status === 'pending' || options.status === 'dead') && options.destinations) {
      for (const destination of options.destinations) {
        let start: Record<string, AttributeValue> | undefined;
        do {
          const page = await this.client.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: 'gsi1',
              KeyConditionExpression: 'gsi1pk = :pk',
              ExpressionAttributeValues: marshall({ ':pk': queueKey(options.status, destination) }),
              Limit: limit - out.length,
              ExclusiveStartKey: start,
            }),
          );
          for (const stored of page.Items ?? []) out.push(fromStored(stored));
          start = page.LastEvaluatedKey;
        } while (start && out.length < limit);
        if (out.length >= limit) break;
      }
      return out;
    }
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: `(sk = :sk OR begins_with(pk, :pack))${options.status ? ' AND #status = :status' : ''}`,
          ExpressionAttributeNames: options.status ? { '#status': 'status' } : undefined,
          ExpressionAttributeValues: marshall({
            ':sk': 'dlv',
            ':pack': 'pack#',
            ...(options.status ? { ':status': options.status } : {}),
          }),
          ExclusiveStartKey: start,
        }),
      );
      for (const stored of page.Items ?? []) {
        const records = stored.pk?.S?.startsWith('pack#') ? PackStore.expand(stored) : [fromStored(stored)];
        for (const record of records) {
          if (out.length < limit && this.isLive(record as unknown as Record<string, unknown>))
            out.push(record);
        }
        if (out.length >= limit) break;
      }
      start = page.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }

  /** Puts a dead (or pending) delivery back in the queue, due now. False when it is not dead or pending. */
  async requeue(id: string): Promise<boolean> {
    const parsed = parseDeliveryId(id);
    if (!parsed) return false;
    const now = new Date(this.clock.now()).toISOString();
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(recordKey(parsed.destination, parsed.kind, parsed.key)),
          UpdateExpression:
            'SET #status = :pending, attempts = :zero, nextAttemptAt = :now, updatedAt = :now, gsi1pk = :gpk, gsi1sk = :gsk REMOVE lastError',
          ConditionExpression: '#status = :dead OR #status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: marshall({
            ':pending': 'pending',
            ':dead': 'dead',
            ':zero': 0,
            ':now': now,
            ':gpk': queueKey('pending', parsed.destination),
            ':gsk': indexSortKey(now, id),
          }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
