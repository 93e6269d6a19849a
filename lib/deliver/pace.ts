/**
 * The pace of a destination: how far apart two messages to it go. Each kind says its own spacing
 * and what destinations share one limit (lib/destinations/<kind>/index.ts `pace`).
 */
import { kindOf } from '../destinations/kinds.ts';
import type { ResolvedDestination } from './destinations.ts';

/**
 * Minimum spacing between two messages to one destination, from the end of one send to the start
 * of the next. Destinations that share a limit (a URL, a routing key) each keep that many times
 * the spacing, so together they keep within the one limit. A kind without a pace: none.
 */
export function paceFor(destination: ResolvedDestination): number {
  const pace = kindOf(destination.type).pace?.(destination);
  if (!pace) return 0;
  return pace.everyMs * (pace.sharedBy ? (destination.sharing ?? 1) : 1);
}

/**
 * How long to wait before the next send to keep `pace`. `lastSentAt` may come from another run on
 * a clock ahead of ours: the wait is never longer than the pace itself.
 */
export function paceWait(lastSentAt: number, pace: number, now: number): number {
  return Math.min(pace, Math.max(0, lastSentAt + pace - now));
}
