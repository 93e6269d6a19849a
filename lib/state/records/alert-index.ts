/**
 * The alert index: what the console's list of alerts (`GET /alerts`) and an alert's detail read,
 * written once per item when the poll first creates the item's delivery records.
 *
 * Why an index. Delivery records are one per (destination, kind, key), many are packed (packs.ts)
 * and a sent one drops its item: listing alerts from them would take a Scan. So each new item gets
 * two small items of its own, written in the same batch writes as records (BatchWriteItem, 25 a
 * request):
 *
 * - the **entry**, `alerts#<yyyy-mm>` / `<recordedAt>#<matchedAt>#<kind>#<key>`: what the list shows
 *   and filters on (kind, severity, title or login, tenant, matchedAt, the identity verdict), each
 *   destination with how its record began, and the fields a silence matcher reads (dry runs). A
 *   month a partition, read newest first: 91 days of entries lie in at most 4 partitions, so a page
 *   needs at most a few Queries whatever the filters (state/alert-list.ts says how many);
 * - the **item**, `alert#<key>` / `<kind>`: the entry again and the item as the password policy left
 *   it (fitItem keeps it within a record's size), for the detail, even once its records were packed
 *   or dropped their item.
 *
 * Cost, in the poll's hot path: two puts per new item (about 1 WCU for the entry, and the item's
 * own size for the item), in BatchWriteItem requests of 25: 0.08 requests an item, written after
 * the item's records so a failure never lists an item twice (at worst, a crash between the two
 * leaves an item out of the list). A baseline item (the first walk's record of what already was)
 * is not an alert and gets none; neither does an item with no destination (it has no records).
 *
 * How each delivery began, in the entry: `pending` (its record, stored alone, is read for its
 * state now), `silenced` (final: held by a silence), or `sent` with its time (final: sent inline
 * during the poll, and maybe packed, so the entry is then all there is of it). Entries of items
 * with inline deliveries are written when the last of those records is (`inserted`), so they know
 * the outcome (a failed inline send is `pending`: its record is read); index-plan.ts decides which
 * items and when, this module what their entries hold.
 *
 * An item counts as new only when every record it calls for on the page is created now: a
 * destination added to an item after its first recording is not in its entry. Entries live as long
 * as the records (`expiresAt`, 90 days); items recorded before the index existed have none.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { eventSeverity, type ItemKind } from '../../model.ts';
import { tenantOfStream } from '../../poll/ids.ts';
import type { Credential, EventItem } from '../../upstream/schemas.ts';
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

/** The two stored items of an entry: the list's, and the detail's (with the item). */
export function storedEntry(
  entry: IndexEntry,
  item: unknown,
  expiresAt: number | undefined,
): Record<string, AttributeValue>[] {
  const json = JSON.stringify(entry);
  const expiry = expiresAt === undefined ? {} : { expiresAt };
  return [
    marshall({ pk: entryPk(monthOf(entry.at)), sk: entrySk(entry), entry: json, ...expiry }),
    marshall({
      pk: itemPk(entry.key),
      sk: entry.kind,
      entry: json,
      itemJson: JSON.stringify(item),
      ...expiry,
    }),
  ];
}
