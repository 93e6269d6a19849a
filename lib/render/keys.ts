/**
 * Keys derived from what a message carries, shared by several kinds: a webhook's Idempotency-Key,
 * a digest's thread key, PagerDuty's dedup keys of digests, the labels that find a ticket again.
 * A stored record or an open ticket is found again by these only while they stay byte for byte what
 * they were, so a change here sends every item again.
 */
import { createHash } from 'node:crypto';

/**
 * The Idempotency-Key for a body: hex SHA-256 of the destination and the set of delivery ids, so
 * a retry of the same items to the same destination carries the same key whatever their order.
 */
export function webhookIdempotencyKey(destination: string, deliveryIds: readonly string[]): string {
  const ids = [...new Set(deliveryIds)].sort();
  // JSON framing: no choice of separator can make two different sets hash the same.
  return createHash('sha256')
    .update(JSON.stringify([destination, ids]))
    .digest('hex');
}

/** `exposure-<first 16 hex digits of SHA-256 of what>`: a label Jira takes, and its search finds. */
export function exposureLabel(what: string): string {
  return `exposure-${createHash('sha256').update(what).digest('hex').slice(0, 16)}`;
}
