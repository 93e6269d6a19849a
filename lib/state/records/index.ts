/**
 * Longer than 300 lines because the dedupe step reads best whole: claim, read and write, in the
 * order that keeps it true through a crash.
 *
 * Creating delivery records, the dedupe step of an alert's way: `recordPage` takes what one page of
 * a stream calls for and creates, once, the records that do not exist yet. Everything dedupe needs
 * happens behind that one call:
 *
 * 1. **Claim** (packs.ts, the claim mark): the positions of the page's items are claimed before
 *    anything is written, so no record exists for an item above the mark as it was. An exclusive
 *    stream (its lease makes it the only writer of its items) creates those without reading.
 * 2. **Read** what may exist: one consistent BatchGet per 100 records (keys only), and for items with
 *    a position one Query of the packs that can hold them. An expired record counts as absent.
 * 3. **Write** the absent ones. A shared stream (another stream can produce the same items) writes
 *    each with a conditional put, so two runs never both create one. An exclusive stream batch-writes
 *    them: final records (silenced, baseline) of positioned items as packs, one item for a page's
 *    records of one destination and status, the rest one item each; pending records it may hand
 *    back instead, unwritten, for the caller to send inline and write through `insert` with the
 *    outcome (deliver/inline.ts).
 *
 * The order is what keeps this true through a crash: claim, then records, then the stream's
 * cursor. A claim whose records were never written only makes later pages check more.
 *
 * 4. **Index** the new items (alert-index.ts): what the console lists. Each item's detail goes in
 *    the same batch writes as its records, the list packs once the records are written. A shared
 *    stream adds what it created to the item's detail, one update an item, and lists the item only
 *    if it is the first to record it (shared-index.ts). Off with `alertIndex: false`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../clock.ts';
import type { ItemKind } from '../../model.ts';
import { batchGet, batchPut, type TableIo } from '../io.ts';
import { unmarshall } from '../marshall.ts';
import type { IndexWrites } from './alert-index.ts';
import type { AlertIndexer } from './index-plan.ts';
import { createRecordsOnce } from './once.ts';
import { ClaimWindow, PackStore, packable } from './packs.ts';
import { DeliveryQueue } from './queue.ts';
import {
  DEFAULT_RETENTION_DAYS,
  type DeliveryRecord,
  deliveryId,
  isLive,
  keyOfId,
  type NewDelivery,
  toStored,
} from './record.ts';
import { ensureTenantCopies, holdsTenantCopies } from './tenant-copies.ts';

export { ClaimWindow, itemPosition, PackStore } from './packs.ts';

/** Puts in one BatchWriteItem request (DynamoDB's limit; io.ts's batchPut chunks by it). */
const BATCH_WRITE_ITEMS = 25;

export { DeliveryQueue } from './queue.ts';
export * from './record.ts';

export interface RecordContext {
  /**
   * Nobody else can create these records meanwhile (the stream is exclusive and its lease has
   * comfortably long to run): absent ones are batch-written, or handed back to send inline.
   */
  exclusive: boolean;
  /** The stream's claims this cycle, when its items have positions (packs.ts). */
  claims?: ClaimWindow;
  /** Pending records to hand back unwritten, to be sent inline (exclusive only). */
  inline?: (record: DeliveryRecord) => boolean;
}

export interface RecordedPage {
  /** Records created (written now, or handed back in `sendInline`). */
  created: DeliveryRecord[];
  /** Created but not written: the caller sends them, then writes them with `insert`. */
  sendInline: DeliveryRecord[];
  /** How many already existed (dedupe hits). */
  existing: number;
}

export interface DeliveryRecordsOptions {
  retentionDays?: number;
  /** Counts every DynamoDB request made (benchmarks). */
  onRequest?: (operation: string) => void;
  /** Final records of positioned items as packs (default true; the bench turns it off). */
  packs?: boolean;
  /** Claim positions, and skip reading above the mark (default true; the bench turns it off). */
  claimMark?: boolean;
  /**
   * Destinations whose sent records keep their item and are never packed: they take follow-ups,
   * which show the item again and need to know where its message went (deliver/follow-up.ts).
   */
  keepItems?: (destination: string) => boolean;
  /**
   * The config's `tenants` ids: each has its own queue partition per destination, which the
   * delivery pass reads in turns (queue.ts). The top-level sources' partition is always read.
   */
  tenants?: readonly number[];
  /** Index new items for the console (alert-index.ts); default true. */
  alertIndex?: boolean;
}

export class DeliveryRecords {
  /** The outbox: what the delivery pass reads and writes back, and what operators list. */
  readonly queue: DeliveryQueue;
  private readonly io: TableIo;
  private readonly packs: PackStore;
  /** Loaded with the first page that creates records (index-plan.ts); none when off. */
  private indexer?: Promise<AlertIndexer>;

  constructor(
    client: DynamoDBClient,
    tableName: string,
    clock: Clock,
    private readonly options: DeliveryRecordsOptions = {},
  ) {
    this.io = { client, tableName, clock, onRequest: options.onRequest };
    this.queue = new DeliveryQueue(
      this.io,
      (options.retentionDays ?? DEFAULT_RETENTION_DAYS) * 86_400,
      options.keepItems,
      options.tenants,
    );
    this.packs = new PackStore(this.io);
  }

  /** A stream's claims for one cycle (packs.ts). */
  claimWindow(kind: ItemKind): ClaimWindow {
    return new ClaimWindow(
      kind,
      (k, position) => this.packs.claim(k, position),
      () => this.io.clock.now(),
    );
  }

  /**
   * Creates the records `deliveries` call for that do not exist yet (see the module comment).
   * Call it in page order: a page's place among the stream's pages is taken before its first await.
   */
  async recordPage(deliveries: readonly NewDelivery[], context: RecordContext): Promise<RecordedPage> {
    const records = this.newRecords(deliveries);
    // In page order, before the first await: later pages check what this one may write.
    const top = records.reduce<string | undefined>(
      (max, r) => (r.position !== undefined && (max === undefined || r.position > max) ? r.position : max),
      undefined,
    );
    const startedBefore = top !== undefined ? context.claims?.start(top) : undefined;
    if (records.length === 0) return { created: [], sendInline: [], existing: 0 };
    const known = await this.claim(records, context, startedBefore);
    const existingIds = await this.existingIds(records.filter((r) => !known.has(r.id)));
    const absent = records.filter((r) => !existingIds.has(r.id));
    const existing = records.length - absent.length;
    if (!context.exclusive) {
      const created = await this.createOnce(absent);
      const index = await this.index();
      // Only now is it known which records this run created: their items' index comes after.
      if (index) await index.recordShared(records, created);
      return { created, sendInline: [], existing: existing + absent.length - created.length };
    }
    const sendInline = context.inline
      ? absent.filter((r) => r.status === 'pending' && context.inline?.(r))
      : [];
    const inline = new Set(sendInline);
    const index = (await this.index())?.recorded(records, new Set(absent), inline);
    await this.write(
      absent.filter((r) => !inline.has(r)),
      index,
    );
    return { created: absent, sendInline, existing };
  }

  /** The alert index's writer (index-plan.ts), loaded when first needed. */
  private index(): Promise<AlertIndexer> | undefined {
    if (this.options.alertIndex === false) return undefined;
    this.indexer ??= import('./index-plan.ts').then(
      ({ AlertIndexer }) => new AlertIndexer(this.io, () => this.queue.expiresFor('sent')),
    );
    return this.indexer;
  }

  /**
   * Batch-writes records that a caller created exclusively (recordPage's `sendInline`, after the
   * send), whatever their status: final ones with positions as packs, the rest one item each; with
   * them, the index of the items whose inline deliveries are all written now (with the outcomes).
   */
  async insert(records: readonly DeliveryRecord[]): Promise<void> {
    await this.write(records, (await this.indexer)?.inserted(records));
  }

  /**
   * Writes `records` (packs and records of their own) and the details of `index`; then its list
   * packs, which must only ever list items whose records exist (alert-index.ts).
   */
  private async write(records: readonly DeliveryRecord[], index: IndexWrites | undefined): Promise<void> {
    const single: DeliveryRecord[] = [];
    const packs = new Map<string, DeliveryRecord[]>();
    for (const r of records) {
      if (this.options.packs === false || !packable(r) || this.queue.keepsItems(r.destination)) {
        single.push(this.queue.withExpiry(r));
        continue;
      }
      const group = `${r.destination}\u0000${r.kind}\u0000${r.status}\u0000${r.source}`;
      const list = packs.get(group) ?? [];
      list.push(r);
      packs.set(group, list);
    }
    const stored = [
      ...[...packs.values()].flatMap((pack) =>
        this.packs.items(pack, this.queue.expiresFor((pack[0] as DeliveryRecord).status) as number),
      ),
      ...single.map((r) => toStored(r, this.queue.keepsItems(r.destination))),
    ];
    // A detail may go with its records or with its list pack: those that would start one more
    // batch write after the records' go with the list packs (a page of 100 credentials: 5 requests, not 6).
    const details = index?.details ?? [];
    const later = Math.min(details.length, (stored.length + details.length) % BATCH_WRITE_ITEMS);
    await batchPut(this.io, [...stored, ...details.slice(0, details.length - later)]);
    if (index?.lists.length) {
      if (holdsTenantCopies(index.lists)) await ensureTenantCopies(this.io);
      await batchPut(this.io, [...details.slice(details.length - later), ...index.lists]);
    } else if (later) await batchPut(this.io, details.slice(details.length - later));
  }

  /** One record per distinct id, with its times and expiry. */
  private newRecords(deliveries: readonly NewDelivery[]): DeliveryRecord[] {
    const now = new Date(this.io.clock.now()).toISOString();
    const unique = new Map<string, DeliveryRecord>();
    for (const d of deliveries) {
      const id = deliveryId(d.destination, d.kind, d.key);
      if (unique.has(id)) continue;
      const expiresAt = this.queue.expiresFor(d.status);
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
        ...(expiresAt ? { expiresAt } : {}),
        ...(d.position !== undefined ? { position: d.position } : {}),
      });
    }
    return [...unique.values()];
  }

  /**
   * Claims the positions of `records`, kind by kind. Returns the ids an exclusive caller knows to
   * be absent without reading: those above the claim mark as it was.
   */
  private async claim(
    records: readonly DeliveryRecord[],
    context: RecordContext,
    startedBefore: string | undefined,
  ): Promise<Set<string>> {
    const absent = new Set<string>();
    if (this.options.claimMark === false) return absent;
    for (const kind of new Set(records.map((r) => r.kind))) {
      const placed = records.filter((r) => r.kind === kind && r.position !== undefined);
      if (placed.length === 0) continue;
      const top = placed.reduce(
        (max, r) => ((r.position as string) > max ? (r.position as string) : max),
        '',
      );
      // A shared page claims just its own items; only an exclusive one leans on the cycle's window.
      const window = context.exclusive && context.claims?.kind === kind ? context.claims : undefined;
      const above = window
        ? await window.threshold(top, startedBefore)
        : (await this.packs.claim(kind, top)).before;
      if (!context.exclusive || above === undefined) continue;
      for (const r of placed) if ((r.position as string) > above) absent.add(r.id);
    }
    return absent;
  }

  /** Ids among `records` whose record exists and has not expired: its own item, or a pack entry. */
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
    const own = async () => {
      const now = Math.floor(this.io.clock.now() / 1000);
      const keys = records.flatMap((r) => {
        const key = keyOfId(r.id);
        return key ? [key] : [];
      });
      for (const stored of await batchGet(this.io, keys, { projection: 'id, expiresAt' })) {
        const { id, expiresAt } = unmarshall(stored);
        if (isLive(expiresAt, now)) found.add(String(id));
      }
    };
    await Promise.all([...packed, own()]);
    return found;
  }

  /**
   * Creates each of `records` that does not exist yet (or has expired), with a conditional put:
   * two runs never both create one. Returns those created.
   */
  createOnce(records: readonly DeliveryRecord[]): Promise<DeliveryRecord[]> {
    return createRecordsOnce(this.io, records, this.queue.keepsItems);
  }

  /** Reads records by id (the queue's consistent read). */
  getMany(ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
    return this.queue.getMany(ids);
  }
}
