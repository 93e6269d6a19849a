/**
 * Longer than 300 lines because a page of the list, the detail and a dry run's read each walk
 * both ways entries are stored (packs, and entries alone from before them), and the details of a
 * shared stream's entries, within bounded reads.
 *
 * Reading the alert index (records/alert-index.ts): the console's list of alerts, newest first and
 * filtered, one alert's detail, and the recent alerts a silence's dry run counts.
 *
 * How a page is read, whatever the filters:
 * - the entries, newest first, from the month partitions of the last 91 days (at most 4): list
 *   packs of up to 100 entries (and entries stored alone, as written before the packs), with
 *   Queries sized to what is left of the page's entries: at most MAX_ENTRIES entries looked at and
 *   MAX_QUERIES Queries a page (eventually consistent: 200 entries of about 400 bytes are about 10
 *   read units; a pack is read whole, so a page may read one pack's worth more);
 * - the details of the entries a shared stream wrote (records/shared-index.ts), by BatchGet, at
 *   most MAX_ENTRIES a page (without a destination or state filter, no more than the page can still
 *   list): the detail holds every destination's delivery, whichever stream recorded it, and names
 *   the one entry of the item that is listed (the filters see both);
 * - the state of each delivery that began `pending` (the others are final in the entry), by
 *   BatchGet of its record, consistent: at most MAX_RECORD_KEYS records a page (3 BatchGets).
 * A page stops when it holds 50 items or a bound is reached, and then carries a cursor: the
 * position of the last entry it looked at (a stored item's sort key, and how many of a pack's
 * entries were looked at when it stopped inside one). So a page with narrow filters may hold fewer
 * than 50, or none, and still a cursor; no item is on two pages, and none is skipped. Packs are
 * read newest first by their newest entry, each pack's entries newest first: two packs of the same
 * moment (a page's items completed by separate inline sends) may interleave by matchedAt.
 *
 * What a packed record gives: nothing of its own. A delivery sent inline and packed is `sent` with
 * the time and attempts its entry kept. An entry whose pending records were all created after it
 * (the item came back after its records expired, or a crash between records and index) is one that
 * a later entry replaced: it is left out; so is a shared entry whose detail names another pack.
 */
import { RECORD_RETENTION_DAYS } from '../model.ts';
import { batchGet, queryAll, type StoredItem, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import {
  entryPk,
  type IndexEntry,
  type IndexedDelivery,
  itemPk,
  MONTH_PREFIX,
  monthOf,
  monthOfSk,
  TENANT_COPIES_KEY,
  tenantEntryPk,
} from './records/alert-index.ts';
import { type DeliveryRecord, deliveryId, fromStored, isLive, keyOfId } from './records/record.ts';
import { QueryCommand } from './sdk.ts';

/** A delivery as the console shows it (docs/console.md). */
export interface ListedDelivery {
  id: string;
  destination: string;
  status: 'sent' | 'pending' | 'retrying' | 'dead' | 'silenced';
  attempts: number;
  lastError?: string;
  sentAt?: string;
}

export const DELIVERY_STATES = ['sent', 'pending', 'retrying', 'dead', 'silenced'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface ListedAlert {
  entry: IndexEntry;
  deliveries: ListedDelivery[];
  /** Where a page that ends with this item goes on from (a merge of lists cuts a page there). */
  after?: ListPosition;
}

export interface AlertFilters {
  kind?: string;
  severity?: string;
  /** A `tenants` entry's id. */
  tenant?: number;
  /** A bound client's tenants (and the top level with `topLevel`): only their items are listed. */
  within?: { tenants: ReadonlySet<number>; topLevel: boolean };
  /**
   * A tenant whose own copy of the list to read (records/alert-index.ts `tenantEntryPk`): full
   * pages of its items whatever the others' volume; what was listed before copies existed is read
   * from the global partition, filtered.
   */
  partition?: number;
  destination?: string;
  state?: DeliveryState;
  /** Lowercase text to find in the title (or login) or the key. */
  q?: string;
}

/**
 * Where the next page starts: a month, and the sort key below which to read on (none: its top);
 * inside a pack, `<its sort key>\u0000<entries of it already looked at>`.
 */
export interface ListPosition {
  month: string;
  below?: string;
}

/** Splits a `below` into the sort key and, inside a pack, how many of its entries to skip. */
function boundOf(below: string | undefined): { sk?: string; skip?: number } {
  if (below === undefined) return {};
  const cut = below.lastIndexOf('\u0000');
  const skip = cut < 0 ? Number.NaN : Number(below.slice(cut + 1));
  // Anything else is a sort key as it stands (an entry stored alone may hold any character).
  return Number.isInteger(skip) && skip > 0 ? { sk: below.slice(0, cut), skip } : { sk: below };
}

export const PAGE_ITEMS = 50;
export const MAX_ENTRIES = 200;
export const MAX_QUERIES = 6;
export const MAX_RECORD_KEYS = 300;
const CHUNK = 100;
/** Entries a stored list item is taken to hold before any was read: a full pack. */
const PACK_GUESS = 100;

/** The months that can hold live entries at `now`, newest first. */
export function liveMonths(now: number): string[] {
  const months: string[] = [];
  // A day of slack either side: a writer's clock may be a little ahead, an entry a little old.
  const oldest = monthOf(new Date(now - (RECORD_RETENTION_DAYS + 1) * 86_400_000).toISOString());
  const d = new Date(now + 86_400_000);
  let month = monthOf(d.toISOString());
  while (month >= oldest) {
    months.push(month);
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() - 1);
    month = monthOf(d.toISOString());
  }
  return months;
}

/**
 * The live entries of a stored list item, newest first: a pack's, or the one entry stored alone;
 * `pack` says which (its entries are addressed by count in a position).
 */
function entriesOf(stored: StoredItem, nowSeconds: number): { entries: IndexEntry[]; pack: boolean } {
  const { entry, entries, expiresAt } = unmarshall(stored);
  const pack = typeof entries === 'string';
  if (!isLive(expiresAt, nowSeconds)) return { entries: [], pack };
  if (pack) return { entries: JSON.parse(entries) as IndexEntry[], pack };
  return { entries: typeof entry === 'string' ? [JSON.parse(entry) as IndexEntry] : [], pack };
}

/** A list pack's Query: at least 1 stored item, at most CHUNK, about what `entries` more need. */
function queryLimit(entriesLeft: number, perItem: number): number {
  return Math.max(1, Math.min(CHUNK, Math.ceil(entriesLeft / perItem)));
}

/** What a shared entry's detail adds (records/shared-index.ts): the pack it lists, every delivery. */
interface SharedDetail {
  pack?: string;
  deliveries: Record<string, IndexedDelivery>;
}

function sharedDetail(stored: StoredItem, nowSeconds: number): SharedDetail | undefined {
  const { pack, dests, expiresAt } = unmarshall(stored);
  if (!isLive(expiresAt, nowSeconds)) return undefined;
  const deliveries: Record<string, IndexedDelivery> = {};
  for (const one of Array.isArray(dests) ? dests : []) {
    const [destination, began] = JSON.parse(String(one)) as [string, IndexedDelivery];
    // Two for one destination (its record made again after it expired): the record tells.
    deliveries[destination] = destination in deliveries ? { status: 'pending' } : began;
  }
  return { ...(typeof pack === 'string' ? { pack } : {}), deliveries };
}

/** `entry` with every destination its detail holds. */
function withDetail(entry: IndexEntry, detail: SharedDetail | undefined): IndexEntry {
  return detail ? { ...entry, deliveries: { ...entry.deliveries, ...detail.deliveries } } : entry;
}

const detailKey = (entry: Pick<IndexEntry, 'key' | 'kind'>) => `${entry.kind}\u0000${entry.key}`;

function matchesEntry(entry: IndexEntry, f: AlertFilters): boolean {
  if (f.kind !== undefined && entry.kind !== f.kind) return false;
  if (f.severity !== undefined && entry.severity !== f.severity) return false;
  if (f.tenant !== undefined && entry.tenant !== f.tenant) return false;
  if (f.within && !(entry.tenant === undefined ? f.within.topLevel : f.within.tenants.has(entry.tenant)))
    return false;
  if (f.destination !== undefined && !(f.destination in entry.deliveries)) return false;
  if (f.q !== undefined && !entry.title.toLowerCase().includes(f.q) && !entry.key.toLowerCase().includes(f.q))
    return false;
  return true;
}

/** Ids of an entry's deliveries whose record must be read (they began pending). */
function pendingIds(entry: IndexEntry): string[] {
  return Object.entries(entry.deliveries)
    .filter(([, d]) => d.status === 'pending')
    .map(([destination]) => deliveryId(destination, entry.kind, entry.key));
}

function fromRecord(record: DeliveryRecord): ListedDelivery {
  const status =
    record.status === 'pending'
      ? record.attempts > 0
        ? 'retrying'
        : 'pending'
      : record.status === 'baseline'
        ? 'sent'
        : record.status;
  return {
    id: record.id,
    destination: record.destination,
    status,
    attempts: record.attempts,
    ...(record.lastError && status !== 'sent' ? { lastError: record.lastError } : {}),
    ...(record.status === 'sent' && record.sentAt ? { sentAt: record.sentAt } : {}),
  };
}

/**
 * Each delivery's state now, from the entry and the records read; undefined when the entry was
 * replaced by a later one (see the module comment).
 */
export function deliveriesOf(
  entry: IndexEntry,
  records: ReadonlyMap<string, DeliveryRecord>,
): ListedDelivery[] | undefined {
  const out: ListedDelivery[] = [];
  let read = 0;
  let current = 0;
  for (const [destination, began] of Object.entries(entry.deliveries)) {
    const id = deliveryId(destination, entry.kind, entry.key);
    if (began.status === 'silenced') {
      out.push({ id, destination, status: 'silenced', attempts: 0 });
    } else if (began.status === 'sent') {
      out.push({ id, destination, status: 'sent', attempts: began.attempts, sentAt: began.at });
    } else {
      const record = records.get(id);
      // Gone: expired, as the entry soon will be.
      if (!record) continue;
      read += 1;
      if (record.createdAt === entry.at) current += 1;
      out.push(fromRecord(record));
    }
  }
  // A shared entry's detail says whether it is listed (records/shared-index.ts).
  return !entry.shared && read > 0 && current === 0 ? undefined : out;
}

export class AlertReader {
  constructor(private readonly io: TableIo) {}

  /** The details of shared `entries`, by kind and key: what other streams recorded of them. */
  private async details(
    entries: readonly IndexEntry[],
    nowSeconds: number,
  ): Promise<Map<string, SharedDetail>> {
    const found = new Map<string, SharedDetail>();
    if (entries.length === 0) return found;
    // By stored key: an item key too long for a key is cut to fit (itemPk), so it is looked up.
    const wanted = new Map(entries.map((e) => [`${e.kind}\u0000${itemPk(e.key)}`, detailKey(e)]));
    // Once each: two entries of one item may share a chunk, and a BatchGet takes a key once.
    const keys = [...new Map(entries.map((e) => [detailKey(e), e])).values()].map((e) =>
      marshall({ pk: itemPk(e.key), sk: e.kind }),
    );
    for (const stored of await batchGet(this.io, keys, { projection: 'pk, sk, pack, dests, expiresAt' })) {
      const { pk, sk } = unmarshall(stored);
      const detail = sharedDetail(stored, nowSeconds);
      const key = wanted.get(`${String(sk)}\u0000${String(pk)}`);
      if (detail && key) found.set(key, detail);
    }
    return found;
  }

  private async records(ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
    const keys = [...new Set(ids)].flatMap((id) => {
      const key = keyOfId(id);
      return key ? [key] : [];
    });
    const found = new Map<string, DeliveryRecord>();
    for (const stored of await batchGet(this.io, keys)) {
      const record = fromStored(stored);
      found.set(record.id, record);
    }
    return found;
  }

  /**
   * A page of alerts, newest first (see the module comment for its reads). `from` is where the
   * previous page stopped; the answer's `next`, where this one did (none: nothing older).
   */
  async page(
    filters: AlertFilters,
    from: ListPosition | undefined,
  ): Promise<{ items: ListedAlert[]; next?: ListPosition }> {
    const now = this.io.clock.now();
    const nowSeconds = Math.floor(now / 1000);
    const months = liveMonths(now);
    const items: ListedAlert[] = [];
    let at = from ? months.indexOf(from.month) : 0;
    let below = from?.below;
    if (at < 0) {
      // Older than anything live: nothing left. Newer (a writer's clock ahead): from the top.
      if (from && from.month < (months[months.length - 1] as string)) return { items };
      at = 0;
      below = undefined;
    }
    // With a tenant's copy: its partition for what was listed since copies exist (`since`), the
    // global partition below that. A position at or below `since` is in the global one.
    const since = filters.partition === undefined ? undefined : await this.copiesSince();
    const inCopy = () =>
      since !== undefined &&
      (below === undefined
        ? (months[at] as string) >= monthOf(since)
        : (boundOf(below).sk as string) > since);
    let queries = 0;
    let entries = 0;
    let keysRead = 0;
    // Entries per stored item, as read so far; a pack holds up to 100, so the first Query reads 2.
    let storedRead = 0;
    let entriesRead = 0;
    const position = () => ({ month: months[at] as string, ...(below ? { below } : {}) });
    while (items.length < PAGE_ITEMS) {
      if (queries >= MAX_QUERIES || entries >= MAX_ENTRIES) return { items, next: position() };
      queries += 1;
      const bound = boundOf(below);
      const copy = inCopy();
      this.io.onRequest?.('Query');
      const out = await this.io.client.send(
        new QueryCommand({
          TableName: this.io.tableName,
          // Inside a pack: that pack again (its entries after those looked at), then below it.
          KeyConditionExpression:
            bound.sk === undefined
              ? 'pk = :pk'
              : bound.skip
                ? 'pk = :pk AND sk <= :below'
                : 'pk = :pk AND sk < :below',
          ExpressionAttributeValues: marshall({
            ':pk': copy
              ? tenantEntryPk(filters.partition as number, months[at] as string)
              : entryPk(months[at] as string),
            ...(bound.sk === undefined ? {} : { ':below': bound.sk }),
          }),
          ScanIndexForward: false,
          Limit: queryLimit(MAX_ENTRIES - entries, storedRead ? entriesRead / storedRead : PACK_GUESS),
        }),
      );
      // The chunk's entries, each with the position just after it, as far as the bounds go.
      const flat: { after: string; entry?: IndexEntry; pack?: string }[] = [];
      // In the copy, a pack at or below `since` is the global partition's to list: the copy ends there.
      let copyEnds = false;
      for (const stored of out.Items ?? []) {
        const sk = String(unmarshall(stored).sk);
        if (copy && sk <= (since as string)) {
          copyEnds = true;
          break;
        }
        const { entries: list, pack } = entriesOf(stored, nowSeconds);
        storedRead += 1;
        entriesRead += list.length;
        const from = pack && sk === bound.sk ? (bound.skip ?? 0) : 0;
        if (from >= list.length) flat.push({ after: sk });
        for (let i = from; i < list.length; i++)
          flat.push({
            after: pack && i + 1 < list.length ? `${sk}\u0000${i + 1}` : sk,
            entry: list[i],
            ...(pack ? { pack: sk } : {}),
          });
      }
      // Shared entries that may be listed, as far as the entry budget goes: their details say
      // which is the item's row and hold every destination's delivery (the destination filter's
      // too). Without a destination or state filter, no more than the page can still take: the
      // page stops at the first one whose detail was not read.
      const { destination: _d, ...others } = filters;
      const candidates = flat
        .slice(0, MAX_ENTRIES - entries)
        .filter(({ entry }) => entry?.shared && matchesEntry(entry, others));
      const room =
        filters.destination === undefined && filters.state === undefined
          ? PAGE_ITEMS - items.length
          : MAX_ENTRIES;
      const shared = candidates.slice(0, room);
      const unread = new Set(candidates.slice(room));
      const details = await this.details(
        shared.map((one) => one.entry as IndexEntry),
        nowSeconds,
      );
      for (const one of shared) {
        if (!one.entry) continue;
        const detail = details.get(detailKey(one.entry));
        // Another entry of the item is its row (an item recorded again after its detail expired).
        if (detail?.pack !== undefined && detail.pack !== one.pack) one.entry = undefined;
        else one.entry = withDetail(one.entry, detail);
      }
      // The chunk's candidates, as far as the entry and record budgets go.
      const looked: { after: string; entry?: IndexEntry }[] = [];
      const wanted: string[] = [];
      let cut = false;
      for (const one of flat) {
        if (entries >= MAX_ENTRIES || unread.has(one)) {
          cut = true;
          break;
        }
        entries += 1;
        const { entry } = one;
        if (entry && matchesEntry(entry, filters)) {
          const ids = pendingIds(entry);
          if (keysRead + wanted.length + ids.length > MAX_RECORD_KEYS && looked.length > 0) {
            cut = true;
            break;
          }
          wanted.push(...ids);
          looked.push(one);
        } else {
          looked.push({ after: one.after });
        }
      }
      keysRead += wanted.length;
      const records = wanted.length ? await this.records(wanted) : new Map<string, DeliveryRecord>();
      for (const { after, entry } of looked) {
        below = after;
        if (!entry) continue;
        const deliveries = deliveriesOf(entry, records);
        if (!deliveries) continue;
        if (filters.state && !deliveries.some((d) => d.status === filters.state)) continue;
        items.push({ entry, deliveries, after: position() });
        if (items.length >= PAGE_ITEMS) break;
      }
      // Full, or out of record reads or entries: the next page goes on after the last one looked at.
      if (items.length >= PAGE_ITEMS || cut) return { items, next: position() };
      if (copy && (copyEnds || (!out.LastEvaluatedKey && months[at] === monthOf(since as string)))) {
        // On in the global partition, from `since` down, in the month that holds it.
        at = Math.max(at, months.indexOf(monthOf(since as string)));
        below = since;
        if (at < 0) return { items };
      } else if (!out.LastEvaluatedKey) {
        at += 1;
        below = undefined;
        if (at >= months.length) return { items };
      }
    }
    return { items };
  }

  /** Since when tenants' list packs have their copies (records/tenant-copies.ts); none: no copy yet. */
  private async copiesSince(): Promise<string | undefined> {
    const [found] = await batchGet(this.io, [marshall(TENANT_COPIES_KEY)]);
    const at = found ? unmarshall(found).at : undefined;
    return typeof at === 'string' ? at : undefined;
  }

  /** An item's entry and the item itself (the detail), or undefined. */
  async item(
    key: string,
  ): Promise<{ entry: IndexEntry; item: unknown; deliveries: ListedDelivery[] } | undefined> {
    const found = await this.entry(key);
    if (!found) return undefined;
    const { entry, itemJson } = found;
    const records = await this.records(pendingIds(entry));
    // The detail shows the item whatever a later entry did; its records are as they are now.
    const deliveries = deliveriesOf(entry, records) ?? [...records.values()].map(fromRecord);
    return { entry, item: typeof itemJson === 'string' ? JSON.parse(itemJson) : null, deliveries };
  }

  /**
   * The entry of an item's key as listed (its tenant among what it keeps: the stream's that
   * recorded it), without its records' state: at most two Queries.
   */
  async entry(key: string): Promise<{ entry: IndexEntry; itemJson: unknown } | undefined> {
    const nowSeconds = Math.floor(this.io.clock.now() / 1000);
    const stored = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': itemPk(key) }),
      ConsistentRead: true,
    });
    for (const found of stored) {
      const { sk, itemJson, pack, expiresAt, entry: own } = unmarshall(found);
      if (!isLive(expiresAt, nowSeconds)) continue;
      // The entry: beside the item (a shared stream's, or one written before the packs), or in the
      // list pack the detail names; with every destination a shared detail holds.
      const listed =
        typeof pack === 'string' && typeof own !== 'string'
          ? await this.entryInPack(pack, key, String(sk), nowSeconds)
          : entriesOf(found, nowSeconds).entries[0];
      const entry = listed?.shared ? withDetail(listed, sharedDetail(found, nowSeconds)) : listed;
      if (!entry || entry.key !== key) continue;
      return { entry, itemJson };
    }
    return undefined;
  }

  /** The entry of `key` (of `kind`) in the list pack `sk`; none when the pack is not there (yet). */
  private async entryInPack(
    sk: string,
    key: string,
    kind: string,
    nowSeconds: number,
  ): Promise<IndexEntry | undefined> {
    const [pack] = await queryAll(
      this.io,
      {
        KeyConditionExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: marshall({ ':pk': entryPk(monthOfSk(sk)), ':sk': sk }),
        ConsistentRead: true,
      },
      1,
    );
    if (!pack) return undefined;
    return entriesOf(pack, nowSeconds).entries.find((e) => e.key === key && e.kind === kind);
  }

  /** The entries of the last `days` days, newest first, at most `max` (a silence's dry run). */
  async recent(days: number, max: number): Promise<IndexEntry[]> {
    const now = this.io.clock.now();
    const nowSeconds = Math.floor(now / 1000);
    const since = new Date(now - days * 86_400_000).toISOString();
    const out: IndexEntry[] = [];
    let storedRead = 0;
    let entriesRead = 0;
    for (const month of liveMonths(now)) {
      if (month < monthOf(since) || out.length >= max) break;
      // A pack's entries share their recording time, and its sort key starts with it.
      let start: StoredItem | undefined;
      do {
        this.io.onRequest?.('Query');
        const page = await this.io.client.send(
          new QueryCommand({
            TableName: this.io.tableName,
            KeyConditionExpression: 'pk = :pk AND sk >= :since',
            ExpressionAttributeValues: marshall({ ':pk': `${MONTH_PREFIX}${month}`, ':since': since }),
            ScanIndexForward: false,
            ExclusiveStartKey: start,
            Limit: queryLimit(max - out.length, storedRead ? entriesRead / storedRead : PACK_GUESS),
          }),
        );
        for (const stored of page.Items ?? []) {
          const { entries } = entriesOf(stored, nowSeconds);
          storedRead += 1;
          entriesRead += entries.length;
          out.push(...entries.slice(0, max - out.length));
        }
        start = page.LastEvaluatedKey;
      } while (start && out.length < max);
    }
    return out;
  }
}
