/**
 * The retry rule, and the one place a send's outcome is written onto delivery records, for the
 * delivery pass (settle.ts) and inline delivery (inline.ts) alike. An outcome makes a record:
 * - sent;
 * - retry later: one attempt counted, the next after an exponential backoff with jitter from 1 s
 *   to 5 min, or exactly the `Retry-After` the destination asked for, at most an hour;
 * - dead: after MAX_ATTEMPTS attempts, or at once on a permanent refusal;
 * - rate limited (a 429): no attempt counted, the next at the end of the destination's pause; a
 *   delivery dies of 429s only when still refused a day after its first 429.
 * These functions change records in memory; their callers write them and decide what else an
 * outcome means (pausing the destination, reporting a refusal, metrics).
 */

import type { DeliveryRecord } from '../state/records/record.ts';
import type { SendFailure } from './senders.ts';

export const MAX_ATTEMPTS = 8;
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 300_000;
/** The longest wait any answer can impose before the next try, whatever its `Retry-After` said. */
export const MAX_DELAY_MS = 3_600_000;
/** A delivery still answered 429 this long after its first 429 is dead. */
export const RATE_LIMIT_GIVE_UP_MS = 24 * 3_600_000;
/** The stored error is cut here: an answer's body can be long, a record's size is bounded. */
const ERROR_CHARS = 500;

/** When to try again after a failed attempt number `attempts` (1-based); at most MAX_DELAY_MS. */
export function retryDelayMs(
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs))
    return Math.min(MAX_DELAY_MS, Math.max(0, retryAfterMs));
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * The ISO time `delayMs` after `now`, the delay bounded to [0, MAX_DELAY_MS]: a delay from the
 * outside (a header, a stored time) must never make an invalid Date, whose toISOString throws.
 */
export function retryAt(now: number, delayMs: number): string {
  const delay = Number.isFinite(delayMs) ? Math.min(MAX_DELAY_MS, Math.max(0, delayMs)) : 0;
  return new Date(now + delay).toISOString();
}

/** Records `records` as accepted by their destination at `now`. */
export function markSent(
  records: readonly DeliveryRecord[],
  now: number,
  posted?: { channel: string; ts: string },
  ticket?: string,
): void {
  const at = new Date(now).toISOString();
  for (const r of records) {
    if (ticket && !r.followUp) r.ticket = ticket;
    r.sendingAt = undefined;
    r.ticketPin = undefined;
    // Where the message is, for a later edit or thread reply; an item of a digest shares its parent.
    // A follow-up keeps the place of the message it follows up.
    if (posted && !r.followUp) r.posted = { ...posted, ...(records.length > 1 ? { digest: true } : {}) };
    // A PagerDuty follow-up resolves only an item's own incident, not a digest's.
    if (records.length > 1) r.inDigest = true;
    r.status = 'sent';
    r.sentAt = at;
    // Inline delivery creates a record as it is, with no save to stamp it.
    r.updatedAt = at;
    r.attempts += 1;
    r.nextAttemptAt = undefined;
    r.lastError = undefined;
    r.rateLimitedSince = undefined;
  }
}

/**
 * Records a failed attempt that was not a 429: each record is dead if the refusal is permanent or
 * this was its last attempt, else due again after `retryDelayMs`. Returns how many died.
 *
 * @example
 * const dead = markFailed(records, outcome, clock.now(), deps.random);
 */
export function markFailed(
  records: readonly DeliveryRecord[],
  outcome: SendFailure,
  now: number,
  random?: () => number,
): number {
  let dead = 0;
  for (const r of records) {
    r.attempts += 1;
    r.lastError = outcome.error.slice(0, ERROR_CHARS);
    if (outcome.permanent || r.attempts >= MAX_ATTEMPTS) {
      die(r);
      dead += 1;
    } else {
      r.nextAttemptAt = retryAt(now, retryDelayMs(r.attempts, outcome.retryAfterMs, random));
    }
  }
  return dead;
}

/**
 * Records a 429, which costs no attempt: each record is due again at `until` (ms since the epoch,
 * when the destination's pause ends), unless it has been answered 429 for RATE_LIMIT_GIVE_UP_MS
 * since its first: then it is dead. Returns how many died.
 */
export function markRateLimited(
  records: readonly DeliveryRecord[],
  outcome: SendFailure,
  now: number,
  until: number,
): number {
  let dead = 0;
  for (const r of records) {
    const since = Date.parse(r.rateLimitedSince ?? '');
    if (!Number.isFinite(since)) r.rateLimitedSince = new Date(now).toISOString();
    if (Number.isFinite(since) && now - since >= RATE_LIMIT_GIVE_UP_MS) {
      die(r);
      r.lastError = `${outcome.error.slice(0, 400)} (still rate limited 24 h after the first 429; giving up)`;
      dead += 1;
    } else {
      r.nextAttemptAt = new Date(until).toISOString();
      r.lastError = outcome.error.slice(0, ERROR_CHARS);
    }
  }
  return dead;
}

function die(r: DeliveryRecord): void {
  r.status = 'dead';
  r.nextAttemptAt = undefined;
  // A re-queued delivery (deliveries retry) starts a new day of 429s, not the old one.
  r.rateLimitedSince = undefined;
}
