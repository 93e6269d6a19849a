/**
 * Pausing a destination that limits our rate. A 429 pauses the destination for every run
 * (state/destinations.ts) until its `Retry-After`, or the backoff of that many pauses in a row,
 * has passed, and the pass sends it nothing more meanwhile; a 5xx with `Retry-After` pauses it
 * too. A pass that finds a pause still running sends nothing to that destination.
 */

import type { Logger } from '../log.ts';
import { type DestinationLease, type DestinationPause, pauseLeft } from '../state/destinations.ts';
import { retryDelayMs } from './retry.ts';
import type { DeliverDeps, DestinationResult } from './types.ts';

/**
 * True (and the result says so) when an earlier pause of the destination still runs. A pause
 * written on a clock ahead of ours is restated on ours first, so it ends when it should here too.
 */
export async function pausedAlready(
  deps: DeliverDeps,
  lease: DestinationLease,
  result: DestinationResult,
  log: Logger,
): Promise<boolean> {
  const now = deps.clock.now();
  const left = pauseLeft(lease.pause, now);
  if (left <= 0) return false;
  if (lease.pause && lease.pause.at > now) {
    await deps.destinationState.pause(lease, { ...lease.pause, until: now + left, at: now });
  }
  result.status = 'paused';
  result.pausedUntil = new Date(now + left).toISOString();
  log.info('destination is paused after rate limiting; nothing is sent to it before then', {
    until: result.pausedUntil,
  });
  return true;
}

/** Pauses the destination for every run: for `retryAfterMs`, else the backoff of this many pauses in a row. */
export async function pauseDestination(
  deps: DeliverDeps,
  lease: DestinationLease,
  now: number,
  retryAfterMs: number | undefined,
): Promise<DestinationPause> {
  const count = (lease.pause?.count ?? 0) + 1;
  const delay = retryDelayMs(count, retryAfterMs, deps.random);
  const pause = { until: now + delay, at: now, count };
  await deps.destinationState.pause(lease, pause);
  return pause;
}
