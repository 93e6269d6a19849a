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
