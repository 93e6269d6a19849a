/**
 * The alert index: what the console's list of alerts (`GET /alerts`) and an alert's detail read,
 * written once per item when the poll first creates the item's delivery records. A shared stream
 * (whose items another stream can record too) writes through the item's detail instead, which
 * every stream adds its destinations to and which names the one entry listed (shared-index.ts).
 *
 * Why an index. Delivery records are one per (destination, kind, key), many are packed (packs.ts)
 * and a sent one drops its item: listing alerts from them would take a Scan. So the index keeps:
 *
 * - **list packs**, `alerts#<yyyy-mm>` / `<recordedAt>#<matchedAt of its newest entry>#<random>`:
 *   the entries of the items one write indexes that were recorded at one time (`at`), newest first,
 *   100 at most a pack. An entry is what the list shows and filters on (kind, severity, title or login, tenant,
 *   matchedAt, the identity verdict), each destination with how its record began, and the fields a
 *   silence matcher reads (dry runs); its own sort key is `<recordedAt>#<matchedAt>#<kind>#<key>`.
 *   A month a partition, read newest first: 91 days lie in at most 4 partitions, so a page needs
 *   at most a few Queries whatever the filters (state/alert-list.ts says how many);
 * - the **detail**, `alert#<key>` / `<kind>`, one per item: the item as the password policy left
 *   it (fitItem keeps it within a record's size) and the sort key of its list pack, for the detail,
 *   even once its records were packed or dropped their item.
 *
 * Cost, in the poll's hot path: one put per new item (its detail, written in the same
 * BatchWriteItem requests as the item's records or its list pack, whichever fills them: 0.04
 * requests an item) and one list pack per page (about 400 bytes an entry). A list pack is written
 * after the records it lists, so a failure never lists an item twice: a crash between the two
 * leaves the item out of the list and its detail pointing at no pack (a 404), as the re-read page
 * finds its records and indexes nothing. A detail written again for the same item is the same
 * item, overwritten; one written beside its list pack may be missing while the pack is there,
 * after a crash in the middle of that write (listed, its detail a 404). Entries used to
 * be one stored item each, two puts an item with the detail: the reader still takes those
 * (`entry`), written before the packs, until they expire.
 *
 * A baseline item (the first walk's record of what already was) is not an alert and gets none;
 * neither does an item with no destination (it has no records).
 *
 * How each delivery began, in the entry: `pending` (its record, stored alone, is read for its
 * state now), `silenced` (final: held by a silence), or `sent` with its time (final: sent inline
 * during the poll, and maybe packed, so the entry is then all there is of it). Entries of items
 * with inline deliveries are written when the last of those records is (`inserted`), so they know
 * the outcome (a failed inline send is `pending`: its record is read); index-plan.ts decides which
 * items and when, this module what their entries hold and how they are stored.
 *
 * For an exclusive stream, an item counts as new only when every record it calls for on the page
 * is created now: a destination added to an item after its first recording (a route added) is not
 * in its entry; a shared stream adds it to the detail. Entries live as long
 * as the records (`expiresAt`, 90 days); items recorded before the index existed have none.
 */
import { eventSeverity, type ItemKind } from '../../model.ts';
import { tenantOfStream } from '../../poll/ids.ts';
import type { Credential, EventItem } from '../../upstream/schemas.ts';
import type { StoredItem } from '../io.ts';
import { fitKey, PARTITION_KEY_BYTES, SORT_KEY_BYTES } from '../limits.ts';
import { marshall } from '../marshall.ts';
import type { DeliveryRecord } from './record.ts';

/** How a delivery stood when its item was indexed. */
export type IndexedDelivery =
  | { status: 'pending' }
  | { status: 'silenced'; note?: string }
  | { status: 'sent'; at: string; attempts: number };

/** One item, as the list shows and filters it. */
export interface IndexEntry {
  key: string;
  kind: ItemKind;
  /** Events: the effective severity. */
  severity?: string;
  /** An event's type and whom it concerns; a credential's login. */
  title: string;
  /** The `tenants` entry's id; none for the top-level sources. */
  tenant?: number;
  source: string;
  /** An event's `matched_at`; a credential's `imported_at`. */
  matchedAt: string;
  /** When its records were created (their `createdAt`): the list's order. */
  at: string;
  /** A credential's `_identity`, as looked up when it was recorded. */
  identity?: unknown;
  /** Destination to how its delivery began. */
  deliveries: Record<string, IndexedDelivery>;
  /** What a silence's matcher reads of the item (rules/match.ts), for dry runs. */
  match: Record<string, unknown>;
  /**
   * Recorded by a stream that shares its items with others (shared-index.ts): the item's detail
   * holds every destination's delivery and names the pack of its one listed entry.
   */
  shared?: true;
}

export const MONTH_PREFIX = 'alerts#';
const TITLE_CHARS = 300;
/** Identifiers and tags kept for matching: enough for any real event, bounded for a hostile one. */
const LIST_CAP = 50;

export function monthOf(iso: string): string {
  return iso.slice(0, 7);
}

export function entryPk(month: string): string {
  return `${MONTH_PREFIX}${month}`;
}

/**
 * A tenant's own copy of its list packs, month by month (`alerts#t<id>#<yyyy-mm>`): a client bound
 * to that tenant reads full pages of its alerts from it, at the same bounded reads whatever the
 * other tenants' volume (state/alert-list.ts). The global partition keeps every pack as before.
 */
export function tenantEntryPk(tenant: number, month: string): string {
  return `${MONTH_PREFIX}t${tenant}#${month}`;
}

/**
 * Since when every list pack of a tenant's items has its tenant copy: written once, before the
 * first copy (ensureTenantCopies), so a reader takes older packs from the global partition.
 */
export const TENANT_COPIES_KEY = { pk: 'alerts#tenant-copies', sk: 'since' } as const;

export function entrySk(entry: Pick<IndexEntry, 'at' | 'matchedAt' | 'kind' | 'key'>): string {
  return fitKey(`${entry.at}#${entry.matchedAt}#${entry.kind}#${entry.key}`, SORT_KEY_BYTES);
}

export function itemPk(key: string): string {
  return fitKey(`alert#${key}`, PARTITION_KEY_BYTES);
}

const text = (value: unknown, max = TITLE_CHARS): string =>
  typeof value === 'string' ? (value.length > max ? `${value.slice(0, max - 1)}…` : value) : '';

/** What the list shows and a matcher reads of an item (the password policy applied already). */
export function summarise(
  kind: ItemKind,
  item: unknown,
): Pick<IndexEntry, 'severity' | 'title' | 'matchedAt' | 'identity' | 'match'> {
  if (kind === 'credential') {
    const credential = (item ?? {}) as Partial<Credential> & { _identity?: { verdict?: unknown } };
    const identity = credential._identity;
    return {
      title: text(credential.identity_name),
      matchedAt: text(credential.imported_at, 64),
      ...(identity ? { identity } : {}),
      match: {
        domain: text(credential.domain, 300),
        ...(identity ? { _identity: { verdict: identity.verdict } } : {}),
      },
    };
  }
  const event = (item ?? {}) as EventItem;
  const metadata = event.metadata ?? ({} as EventItem['metadata']);
  const identifiers = (event.identifiers ?? [])
    .slice(0, LIST_CAP)
    .map((i) => ({ id: i.id, name: text(i.name) }));
  const names = identifiers.map((i) => i.name).join(', ');
  const override = event.tenant_metadata?.severity?.override;
  return {
    severity: event.metadata ? eventSeverity(event) : undefined,
    title: text(`${metadata.type ?? 'event'}${names ? ` for ${names}` : ''}`),
    matchedAt: text(metadata.matched_at, 64),
    match: {
      metadata: { type: text(metadata.type), severity: metadata.severity },
      ...(override || event.tenant_metadata?.tags
        ? {
            tenant_metadata: {
              ...(override ? { severity: { override } } : {}),
              ...(event.tenant_metadata?.tags ? { tags: event.tenant_metadata.tags.slice(0, LIST_CAP) } : {}),
            },
          }
        : {}),
      ...(identifiers.length ? { identifiers } : {}),
    },
  };
}

function began(record: DeliveryRecord): IndexedDelivery {
  if (record.status === 'silenced')
    return { status: 'silenced', ...(record.note ? { note: record.note } : {}) };
  if (record.status === 'sent')
    return { status: 'sent', at: record.sentAt ?? record.updatedAt, attempts: record.attempts };
  // Pending and dead records are stored one by one and change: read for their state now.
  return { status: 'pending' };
}

/** The entry of the item whose records (all of them, created together) are `records`. */
export function entryOf(records: readonly DeliveryRecord[]): IndexEntry {
  const first = records[0] as DeliveryRecord;
  const tenant = tenantOfStream(first.source);
  return {
    key: first.key,
    kind: first.kind,
    ...summarise(first.kind, first.item),
    ...(tenant === undefined ? {} : { tenant }),
    source: first.source,
    at: first.createdAt,
    deliveries: Object.fromEntries(records.map((r) => [r.destination, began(r)])),
  };
}

/** Entries in one list pack at most; and their JSON, in characters (DynamoDB items hold 400 KB). */
export const LIST_PACK_ENTRIES = 100;
export const LIST_PACK_CHARS = 100_000;

/** A new item to index: its entry and the item itself, as recorded. */
export interface Indexed {
  entry: IndexEntry;
  item: unknown;
}

/** What indexing some items writes: details (with their records) and list packs (after them). */
export interface IndexWrites {
  details: StoredItem[];
  lists: StoredItem[];
}

/** The month partition a list pack (or an entry) of sort key `sk` lives in. */
export function monthOfSk(sk: string): string {
  return sk.slice(0, 7);
}

const randomSuffix = () =>
  Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');

/** A list pack before it is stored: its sort key and its entries, newest first. */
export interface PackLayout {
  sk: string;
  entries: Indexed[];
  /** Each entry's JSON, as the pack stores it. */
  json: string[];
}

/**
 * The list pack holding `json` (its entries' JSON, newest first) under `sk`: in the global
 * partition, or (`tenant`) that tenant's copy of it.
 */
export function listPackItem(
  sk: string,
  json: readonly string[],
  expiresAt: number | undefined,
  tenant?: number,
): StoredItem {
  return marshall({
    pk: tenant === undefined ? entryPk(monthOfSk(sk)) : tenantEntryPk(tenant, monthOfSk(sk)),
    sk,
    entries: `[${json.join(',')}]`,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  });
}

/**
 * The stored items of `items`: list packs of the entries recorded at one time, newest first, and
 * each item's detail naming its pack.
 */
export function indexWrites(items: readonly Indexed[], expiresAt: number | undefined): IndexWrites {
  const out: IndexWrites = { details: [], lists: [] };
  const expiry = expiresAt === undefined ? {} : { expiresAt };
  for (const pack of packLayout(items)) {
    out.lists.push(listPackItem(pack.sk, pack.json, expiresAt));
    const tenant = pack.entries[0]?.entry.tenant;
    if (tenant !== undefined) out.lists.push(listPackItem(pack.sk, pack.json, expiresAt, tenant));
    for (const indexed of pack.entries)
      out.details.push(
        marshall({
          pk: itemPk(indexed.entry.key),
          sk: indexed.entry.kind,
          pack: pack.sk,
          itemJson: JSON.stringify(indexed.item),
          ...expiry,
        }),
      );
  }
  return out;
}

/** `items` in list packs: the entries recorded at one time, newest first, 100 at most a pack. */
export function packLayout(items: readonly Indexed[]): PackLayout[] {
  const out: PackLayout[] = [];
  if (items.length === 0) return out;
  const byTime = new Map<string, { sk: string; json: string; indexed: Indexed }[]>();
  // By time and tenant: a pack lists one tenant's entries, so its tenant copy holds no other's.
  for (const indexed of items) {
    const group = `${indexed.entry.at}\u0000${indexed.entry.tenant ?? ''}`;
    const list = byTime.get(group) ?? [];
    list.push({ sk: entrySk(indexed.entry), json: JSON.stringify(indexed.entry), indexed });
    byTime.set(group, list);
  }
  for (const [group, entries] of byTime) {
    const at = group.slice(0, group.indexOf('\u0000'));
    entries.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
    let pack: typeof entries = [];
    let chars = 0;
    const flush = () => {
      if (pack.length === 0) return;
      // Sorted as its newest entry (recorded at `at`, then matched), short: every detail repeats it.
      const newest = (pack[0] as (typeof pack)[number]).indexed.entry;
      const sk = fitKey(`${at}#${newest.matchedAt}#${randomSuffix()}`, SORT_KEY_BYTES);
      out.push({ sk, entries: pack.map((e) => e.indexed), json: pack.map((e) => e.json) });
      pack = [];
      chars = 0;
    };
    for (const e of entries) {
      if (pack.length >= LIST_PACK_ENTRIES || (pack.length > 0 && chars + e.json.length > LIST_PACK_CHARS))
        flush();
      pack.push(e);
      chars += e.json.length + 1;
    }
    flush();
  }
  return out;
}
