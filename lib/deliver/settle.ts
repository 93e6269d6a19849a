/**
 * What one send of the delivery pass comes to, under the destination's lease: its records marked
 * by the rule in retry.ts and saved, the destination's state brought along (a success ends a
 * pause and a refusal; a 429, or a 5xx with `Retry-After`, pauses it; a permanent refusal is
 * reported once, notify.ts), and the counts, metrics and log line that say so.
 */

import type { Logger } from '../log.ts';
import type { DestinationLease, DestinationPause } from '../state/destinations.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import { reportRefusal } from './notify.ts';
import { pauseDestination } from './pause.ts';
import { markFailed, markRateLimited, markSent } from './retry.ts';
import type { SendFailure, SendOutcome } from './senders.ts';
import type { DeliverDeps, DestinationResult } from './types.ts';

/**
 * Records the outcome of one message. Returns the pause when the destination is now paused (the
 * pass sends it nothing more), else undefined.
 */
export async function settle(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  records: DeliveryRecord[],
  outcome: SendOutcome,
  result: DestinationResult,
  log: Logger,
): Promise<DestinationPause | undefined> {
  const now = deps.clock.now();
  if (outcome.ok) {
    markSent(records, now, outcome.posted, outcome.ticket);
    await deps.deliveries.save(records);
    result.sent += records.length;
    deps.metrics.count('DeliveriesSent', records.length, { destination: destination.name });
    if (lease.refused) {
      log.info('destination accepts messages again', { previously: lease.refused.code });
      await deps.destinationState.clearRefused(lease);
    }
    await deps.destinationState.clearPause(lease);
    return undefined;
  }
  if (outcome.rateLimited) return rateLimited(deps, destination, lease, records, outcome, result, log);
  const dead = markFailed(records, outcome, now, deps.random);
  await deps.deliveries.save(records);
  count(deps, destination, result, records.length, dead);
  log.warn(outcome.permanent ? 'destination refused the message; not retrying' : 'send failed; will retry', {
    status: outcome.status,
    error: outcome.error,
    deliveries: records.length,
    dead,
    nextAttemptAt: records.find((r) => r.status === 'pending')?.nextAttemptAt,
  });
  // One item too large says nothing of the destination: it is dead alone, without an ops report.
  if (
    outcome.permanent &&
    !outcome.tooLarge &&
    (await deps.destinationState.markRefused(
      lease,
      outcome.status ? `HTTP ${outcome.status}` : 'refused',
      new Date(now),
    ))
  ) {
    await reportRefusal(deps, destination, outcome, log);
  }
  // A server that said when to come back (a 5xx with Retry-After) gets nothing more before then.
  if (!outcome.permanent && outcome.retryAfterMs !== undefined)
    return pauseDestination(deps, lease, now, outcome.retryAfterMs);
  return undefined;
}

/**
 * A 429: the destination is paused for every run, and the message's deliveries wait for the end
 * of the pause without an attempt counted, unless they have been refused 429 for a day since
 * their first: then they are dead, reported like any other.
 */
async function rateLimited(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  records: DeliveryRecord[],
  outcome: SendFailure,
  result: DestinationResult,
  log: Logger,
): Promise<DestinationPause> {
  const now = deps.clock.now();
  const pause = await pauseDestination(deps, lease, now, outcome.retryAfterMs);
  const dead = markRateLimited(records, outcome, now, pause.until);
  await deps.deliveries.save(records);
  count(deps, destination, result, records.length, dead);
  log.warn('destination rate limited; paused for every run, the 429 costs no attempt', {
    status: outcome.status,
    error: outcome.error,
    until: new Date(pause.until).toISOString(),
    pauses: pause.count,
    deliveries: records.length,
    dead,
  });
  return pause;
}

/** Counts a failed message's deliveries, in the result and the metrics: `dead` died, the rest retry. */
function count(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  result: DestinationResult,
  total: number,
  dead: number,
): void {
  result.dead += dead;
  result.retrying += total - dead;
  if (dead) deps.metrics.count('DeliveriesDead', dead, { destination: destination.name });
  if (total - dead) deps.metrics.count('DeliveriesFailed', total - dead, { destination: destination.name });
}
