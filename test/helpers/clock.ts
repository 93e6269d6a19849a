/** A clock for tests: `now` stands still until `advance` moves it; `sleep` really waits. */
import { type Clock, systemClock } from '../../lib/clock.ts';

export function fakeClock(start = Date.now()): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: systemClock.sleep,
    advance: (ms) => {
      now += ms;
    },
  };
}

/**
 * A clock for tests that wait on the pace: `now` runs with real time, and `sleep` returns at once
 * having moved `now` forward by the wait, so a paced destination costs no real second per message.
 */
export function skipClock(): Clock & { skipped(): number } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      offset += Math.max(0, ms);
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    skipped: () => offset,
  };
}
