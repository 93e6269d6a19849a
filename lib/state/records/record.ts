/**
 * A delivery record: one per (item, destination), created once, and the dedupe marker for 90 days.
 * This module is its shape, its id and keys, and its stored form; nothing here does I/O.
 *
 * Stored form. Final records (`sent`, `silenced`, `baseline`: nothing sends them again) keep only
 * what anything reads or filters on (`id`, `status`, `expiresAt`) as attributes and the rest as one
 * JSON attribute, `meta`, without the item: these are most records, and every attribute and byte
 * costs in every write. Pending and dead records keep one attribute per field and the item, to send
 * it (again), and sit in the sparse index `gsi1` under `pending#<destination>` / `dead#<destination>`,
 * sorted by the next attempt time, so a delivery pass reads only what is due.
 *
 * Expiry: final records carry `expiresAt`. DynamoDB deletes expired items only eventually (dynalite
 * never), so an expired record is treated as absent in code.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type FollowUpAction, type ItemKind, RECORD_RETENTION_DAYS } from '../../model.ts';
import { tenantOfStream } from '../../poll/ids.ts';
import { fitKey, nameFromKey, nameInKey, PARTITION_KEY_BYTES, SORT_KEY_BYTES } from '../limits.ts';
import { marshall, unmarshall } from '../marshall.ts';

export type DeliveryStatus = 'pending' | 'sent' | 'dead' | 'silenced' | 'baseline';

/** Statuses nothing changes again: stored compact, with an expiry, and packable (packs.ts). */
export const FINAL_STATUSES: ReadonlySet<DeliveryStatus> = new Set(['sent', 'silenced', 'baseline']);

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
   * costs no attempt, so this is what makes one still refused after 24 hours dead (deliver/retry.ts).
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
  /**
   * Where the message that carried it is, when the destination says (a Slack app): the channel id
   * and the message's `ts`, and whether it was a digest's parent. A follow-up edits or replies there.
   */
  posted?: { channel: string; ts: string; digest?: boolean };
  /** It went inside a digest (a message of several items), not in a message of its own. */
  inDigest?: boolean;
  /** The ticket it went into (a Jira issue key): a follow-up comments there. */
  ticket?: string;
  /**
   * A ticket destination: when a create was last sent whose outcome is not known yet (a crash, a
   * timeout, a 5xx). The next try comes no sooner than 5 minutes after, and searches first
   * (deliver/tickets.ts).
   */
  sendingAt?: string;
  /**
   * A ticket destination: the ticket a create of unknown outcome was for, its `exposure-` label and
   * how many records it carries. While set, these records go only into that ticket, as it was
   * (deliver/tickets.ts).
   */
  ticketPin?: TicketPin;
  /**
   * A follow-up (deliver/follow-up.ts): not the item's alert but news of an action on it, with an id
   * of its own. `posted` is then where the item's message is; `edited`, that the edit is done (a
   * Slack app's follow-up is an edit, then a reply).
   */
  followUp?: { action: FollowUpAction; edited?: boolean };
  /** Where the item sorts in its feed (packs.ts); held in memory, not stored on the record. */
  position?: string;
}

/** The ticket a record is fixed to while a create of it may have happened (deliver/tickets.ts). */
export interface TicketPin {
  /** The ticket's `exposure-<16 hex>` label (Jira) or `correlation_id` (ServiceNow). */
  label: string;
  /** How many delivery records the ticket lists: more than one for a digest. */
  items: number;
}

/** What a page asks to be recorded: a record before it has an id and times. */
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

/** A follow-up's id: `<destination>~followup~<action id>~<kind>~<key>`, one per (destination, item, action). */
export function followUpId(destination: string, kind: ItemKind, key: string, action: string): string {
  return `${nameInKey(destination)}~followup~${nameInKey(action)}~${kind}~${key}`;
}

/** The id of `record`: its item's delivery, or a follow-up of it. */
export function idOf(record: Pick<DeliveryRecord, 'destination' | 'kind' | 'key' | 'followUp'>): string {
  return record.followUp
    ? followUpId(record.destination, record.kind, record.key, record.followUp.action.id)
    : deliveryId(record.destination, record.kind, record.key);
}

export function parseDeliveryId(
  id: string,
): { destination: string; kind: ItemKind; key: string; action?: string } | undefined {
  const first = id.indexOf('~');
  if (first <= 0) return undefined;
  const destination = nameFromKey(id.slice(0, first));
  let at = first + 1;
  let action: string | undefined;
  if (id.startsWith('followup~', at)) {
    const end = id.indexOf('~', at + 9);
    if (end < 0) return undefined;
    action = nameFromKey(id.slice(at + 9, end));
    at = end + 1;
  }
  const second = id.indexOf('~', at);
  if (second < 0) return undefined;
  const kind = id.slice(at, second);
  if (kind !== 'event' && kind !== 'credential') return undefined;
  const key = id.slice(second + 1);
  if (!key || action === '') return undefined;
  return { destination, kind, key, ...(action !== undefined ? { action } : {}) };
}

/** The stored key of a delivery record (or, with `action`, of a follow-up). */
export function recordKey(destination: string, kind: ItemKind, key: string, action?: string) {
  const pk =
    action === undefined
      ? `dlv#${nameInKey(destination)}#${kind}#${key}`
      : `fu#${nameInKey(destination)}#${nameInKey(action)}#${kind}#${key}`;
  return { pk: fitKey(pk, PARTITION_KEY_BYTES), sk: 'dlv' };
}

/** The stored key of the record `id` names; undefined for an id that is not one of ours. */
export function keyOfId(id: string): Record<string, AttributeValue> | undefined {
  const parsed = parseDeliveryId(id);
  return parsed ? marshall(recordKey(parsed.destination, parsed.kind, parsed.key, parsed.action)) : undefined;
}

/**
 * The index partition of a destination's pending or dead records: one per destination for the
 * top-level sources' items (as it always was), and one per destination and tenant for a `tenants`
 * entry's, so the delivery pass can take turns between tenants (docs/configuration.md).
 */
export function queueKey(status: 'pending' | 'dead', destination: string, tenant?: number): string {
  return `${status}#${nameInKey(destination)}${tenant === undefined ? '' : `#${tenant}`}`;
}

/** The index's sort key: time first (what is due), then the id, cut to fit when a uid is huge. */
export function indexSortKey(time: string, id: string): string {
  return fitKey(`${time}#${id}`, SORT_KEY_BYTES);
}

/** Whether a stored expiry (epoch seconds, or none) is still in the future. */
export function isLive(expiresAt: unknown, nowSeconds: number): boolean {
  return typeof expiresAt !== 'number' || expiresAt > nowSeconds;
}

/**
 * The stored form: the item as a JSON string (no nesting limits, one attribute to read back). A
 * final record keeps its item only when `keepItem` says so (its destination takes follow-ups, which
 * show the item again: deliver/follow-up.ts).
 */
export function toStored(record: DeliveryRecord, keepItem = false): Record<string, AttributeValue> {
  const { item, position: _position, ...rest } = record;
  if (FINAL_STATUSES.has(record.status)) {
    const { id, status, expiresAt, ...meta } = rest;
    return marshall({
      ...recordKey(record.destination, record.kind, record.key, record.followUp?.action.id),
      id,
      status,
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      meta: JSON.stringify(meta),
      ...(keepItem && !record.followUp ? { itemJson: JSON.stringify(item) } : {}),
    });
  }
  const indexed =
    record.status === 'pending'
      ? {
          gsi1pk: queueKey('pending', record.destination, tenantOfStream(record.source)),
          gsi1sk: indexSortKey(record.nextAttemptAt ?? record.createdAt, record.id),
        }
      : record.status === 'dead'
        ? {
            gsi1pk: queueKey('dead', record.destination, tenantOfStream(record.source)),
            gsi1sk: indexSortKey(record.updatedAt, record.id),
          }
        : {};
  return marshall({
    ...recordKey(record.destination, record.kind, record.key, record.followUp?.action.id),
    ...rest,
    ...indexed,
    itemJson: JSON.stringify(item),
  });
}

export function fromStored(stored: Record<string, AttributeValue>): DeliveryRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, itemJson, meta, ...rest } = unmarshall(stored);
  return {
    ...(typeof meta === 'string' ? (JSON.parse(meta) as Record<string, unknown>) : {}),
    ...(rest as Omit<DeliveryRecord, 'item'>),
    item: typeof itemJson === 'string' ? JSON.parse(itemJson) : null,
  };
}
