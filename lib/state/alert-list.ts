/**
 * Reading the alert index (records/alert-index.ts): the console's list of alerts, newest first and
 * filtered, one alert's detail, and the recent alerts a silence's dry run counts.
 *
 * How a page is read, whatever the filters:
 * - the entries, newest first, from the month partitions of the last 91 days (at most 4), with a
 *   Query of at most 100 entries at a time: at most MAX_ENTRIES entries and MAX_QUERIES Queries a
 *   page (eventually consistent: 200 entries of about 400 bytes are about 10 read units);
 * - the state of each delivery that began `pending` (the others are final in the entry), by
 *   BatchGet of its record, consistent: at most MAX_RECORD_KEYS records a page (3 BatchGets).
 * A page stops when it holds 50 items or a bound is reached, and then carries a cursor: the
 * position of the last entry it looked at. So a page with narrow filters may hold fewer than 50,
 * or none, and still a cursor; no item is on two pages, and none is skipped.
 *
 * What a packed record gives: nothing of its own. A delivery sent inline and packed is `sent` with
 * the time and attempts its entry kept. An entry whose pending records were all created after it
 * (the item came back after its records expired, or a crash between records and index) is one that
 * a later entry replaced: it is left out.
 */
import { RECORD_RETENTION_DAYS } from '../model.ts';
import { batchGet, queryAll, type StoredItem, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { entryPk, type IndexEntry, itemPk, MONTH_PREFIX, monthOf } from './records/alert-index.ts';
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
}

export interface AlertFilters {
  kind?: string;
  severity?: string;
  /** A `tenants` entry's id. */
  tenant?: number;
  destination?: string;
  state?: DeliveryState;
  /** Lowercase text to find in the title (or login) or the key. */
  q?: string;
}

/** Where the next page starts: a month, and the sort key below which to read on (none: its top). */
export interface ListPosition {
  month: string;
  below?: string;
}

export const PAGE_ITEMS = 50;
export const MAX_ENTRIES = 200;
export const MAX_QUERIES = 6;
export const MAX_RECORD_KEYS = 300;
const CHUNK = 100;

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

function parseEntry(stored: StoredItem, nowSeconds: number): IndexEntry | undefined {
  const { entry, expiresAt } = unmarshall(stored);
  if (typeof entry !== 'string' || !isLive(expiresAt, nowSeconds)) return undefined;
  return JSON.parse(entry) as IndexEntry;
}

function matchesEntry(entry: IndexEntry, f: AlertFilters): boolean {
  if (f.kind !== undefined && entry.kind !== f.kind) return false;
  if (f.severity !== undefined && entry.severity !== f.severity) return false;
  if (f.tenant !== undefined && entry.tenant !== f.tenant) return false;
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
  return read > 0 && current === 0 ? undefined : out;
}

export class AlertReader {
  constructor(private readonly io: TableIo) {}

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
    let queries = 0;
    let entries = 0;
    let keysRead = 0;
    while (items.length < PAGE_ITEMS) {
      if (queries >= MAX_QUERIES || entries >= MAX_ENTRIES)
        return { items, next: { month: months[at] as string, ...(below ? { below } : {}) } };
      queries += 1;
      this.io.onRequest?.('Query');
      const out = await this.io.client.send(
        new QueryCommand({
          TableName: this.io.tableName,
          KeyConditionExpression: below ? 'pk = :pk AND sk < :below' : 'pk = :pk',
          ExpressionAttributeValues: marshall({
            ':pk': entryPk(months[at] as string),
            ...(below ? { ':below': below } : {}),
          }),
          ScanIndexForward: false,
          Limit: Math.min(CHUNK, MAX_ENTRIES - entries),
        }),
      );
      const chunk = out.Items ?? [];
      entries += chunk.length;
      // The chunk's candidates, as far as the record budget goes.
      const looked: { sk: string; entry?: IndexEntry }[] = [];
      const wanted: string[] = [];
      let cut = false;
      for (const stored of chunk) {
        const sk = String(unmarshall(stored).sk);
        const entry = parseEntry(stored, nowSeconds);
        if (entry && matchesEntry(entry, filters)) {
          const ids = pendingIds(entry);
          if (keysRead + wanted.length + ids.length > MAX_RECORD_KEYS && looked.length > 0) {
            cut = true;
            break;
          }
          wanted.push(...ids);
          looked.push({ sk, entry });
        } else {
          looked.push({ sk });
        }
      }
      keysRead += wanted.length;
      const records = wanted.length ? await this.records(wanted) : new Map<string, DeliveryRecord>();
      for (const { sk, entry } of looked) {
        below = sk;
        if (!entry) continue;
        const deliveries = deliveriesOf(entry, records);
        if (!deliveries) continue;
        if (filters.state && !deliveries.some((d) => d.status === filters.state)) continue;
        items.push({ entry, deliveries });
        if (items.length >= PAGE_ITEMS) break;
      }
      // Full, or out of record reads: the next page goes on below the last entry looked at.
      if (items.length >= PAGE_ITEMS || cut)
        return { items, next: { month: months[at] as string, below: below as string } };
      if (!out.LastEvaluatedKey) {
        at += 1;
        below = undefined;
        if (at >= months.length) return { items };
      }
    }
    return { items };
  }

  /** An item's entry and the item itself (the detail), or undefined. */
  async item(
    key: string,
  ): Promise<{ entry: IndexEntry; item: unknown; deliveries: ListedDelivery[] } | undefined> {
    const nowSeconds = Math.floor(this.io.clock.now() / 1000);
    const stored = await queryAll(this.io, {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': itemPk(key) }),
      ConsistentRead: true,
    });
    for (const found of stored) {
      const entry = parseEntry(found, nowSeconds);
      if (!entry || entry.key !== key) continue;
      const { itemJson } = unmarshall(found);
      const records = await this.records(pendingIds(entry));
      // The detail shows the item whatever a later entry did; its records are as they are now.
      const deliveries = deliveriesOf(entry, records) ?? [...records.values()].map(fromRecord);
      return { entry, item: typeof itemJson === 'string' ? JSON.parse(itemJson) : null, deliveries };
    }
    return undefined;
  }

  /** The entries of the last `days` days, newest first, at most `max` (a silence's dry run). */
  async recent(days: number, max: number): Promise<IndexEntry[]> {
    const now = this.io.clock.now();
    const nowSeconds = Math.floor(now / 1000);
    const since = new Date(now - days * 86_400_000).toISOString();
    const out: IndexEntry[] = [];
    for (const month of liveMonths(now)) {
      if (month < monthOf(since) || out.length >= max) break;
      const stored = await queryAll(
        this.io,
        {
          KeyConditionExpression: 'pk = :pk AND sk >= :since',
          ExpressionAttributeValues: marshall({ ':pk': `${MONTH_PREFIX}${month}`, ':since': since }),
          ScanIndexForward: false,
        },
        max - out.length,
      );
      for (const s of stored) {
        const entry = parseEntry(s, nowSeconds);
        if (entry) out.push(entry);
      }
    }
    return out;
  }
}
