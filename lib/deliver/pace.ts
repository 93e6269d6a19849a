/**
 * The pace of a destination: how far apart two messages to it go.
 */
import type { ResolvedDestination } from './destinations.ts';

/**
 * Minimum spacing between two messages to one destination: Slack and Teams take about one a second
 * per URL, PagerDuty 120 events a minute per routing key, and a Discord webhook gets one message
 * every 2 s (interface.md section 4: within its 5 in 2 s, and its channel's 30 a minute).
 * Destinations that share a Teams or Discord URL or a routing key each keep that many times the
 * spacing, so together they keep
 * within the one limit. The spacing runs from the end of one send to the start of the next.
 */
export function paceFor(destination: ResolvedDestination): number {
  switch (destination.type) {
    case 'slack':
      return 1_000;
    case 'teams':
      return 1_000 * destination.sharing;
    case 'discord':
      return 2_000 * destination.sharing;
    case 'pagerduty':
      return 500 * destination.sharing;
    default:
      return 0;
  }
}

/**
 * How long to wait before the next send to keep `pace`. `lastSentAt` may come from another run on
 * a clock ahead of ours: the wait is never longer than the pace itself.
 */
export function paceWait(lastSentAt: number, pace: number, now: number): number {
  return Math.min(pace, Math.max(0, lastSentAt + pace - now));
}
