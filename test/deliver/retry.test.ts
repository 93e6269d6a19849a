/**
 * When a failed delivery is tried again (lib/deliver/pass.ts): a backoff that doubles from 1 s to
 * at most 5 min, each wait drawn between half and all of its step so that deliveries failed
 * together do not all come back together; or exactly the Retry-After the destination asked for,
 * at most an hour. Whatever comes in (a header, a stored count), the time written is a valid date
 * within the hour. The expected numbers are written out, not taken from the module's constants,
 * so a changed constant shows here.
 */
import { describe, expect, it } from 'vitest';
import { retryAt, retryDelayMs } from '../../lib/deliver/retry.ts';

const SECOND = 1_000;
const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');

/** The lowest and the highest draw Math.random can make. */
const lowest = () => 0;
const highest = () => 1 - Number.EPSILON;
/** For Retry-After: the wait is the destination's, no jitter may be drawn. */
const noDraw = () => {
  throw new Error('a Retry-After wait must not be jittered');
};

describe('retryDelayMs: the backoff', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [4, 8_000],
    [5, 16_000],
    [6, 32_000],
    [7, 64_000],
    [8, 128_000],
    [9, 256_000],
    [10, 300_000], // 512 s, capped at 5 min
    [11, 300_000],
    [40, 300_000],
  ])('attempt %d: a step of %d ms, the wait between half of it and all of it', (attempts, step) => {
    expect(retryDelayMs(attempts, undefined, lowest)).toBe(step / 2);
    expect(retryDelayMs(attempts, undefined, () => 0.5)).toBe((step * 3) / 4);
    expect(retryDelayMs(attempts, undefined, highest)).toBe(step);
  });

  it('every draw lands within [step / 2, step], and a later attempt never waits less for the same draw', () => {
    for (const draw of [0, 0.1, 0.25, 0.5, 0.77, 0.9, 1 - Number.EPSILON]) {
      let previous = 0;
      for (let attempts = 1; attempts <= 30; attempts++) {
        const step = Math.min(300_000, 1_000 * 2 ** (attempts - 1));
        const wait = retryDelayMs(attempts, undefined, () => draw);
        expect(wait).toBeGreaterThanOrEqual(step / 2);
        expect(wait).toBeLessThanOrEqual(step);
        expect(Number.isInteger(wait)).toBe(true);
        expect(wait).toBeGreaterThanOrEqual(previous);
        previous = wait;
      }
    }
  });

  it('jitter spreads deliveries that failed together', () => {
    // Twenty deliveries on their third attempt, with the real Math.random: not all one instant.
    const waits = new Set(Array.from({ length: 20 }, () => retryDelayMs(3, undefined)));
    expect(waits.size).toBeGreaterThan(1);
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(2_000);
      expect(wait).toBeLessThanOrEqual(4_000);
    }
  });

  it('an attempt count below 1 or absurdly high still gives a step between 1 s and 5 min', () => {
    expect(retryDelayMs(0, undefined, highest)).toBe(SECOND);
    expect(retryDelayMs(-3, undefined, highest)).toBe(SECOND);
    // 2 ** 5000 is Infinity: still capped at 5 min.
    expect(retryDelayMs(5_000, undefined, highest)).toBe(300_000);
    expect(retryDelayMs(Number.POSITIVE_INFINITY, undefined, lowest)).toBe(150_000);
  });
});

describe('retryDelayMs: Retry-After', () => {
  it.each([
    [0, 0],
    [1_500, 1_500],
    [30_000, 30_000],
    [HOUR, HOUR],
  ])('Retry-After %d ms is waited exactly, whatever the attempt', (retryAfterMs, wait) => {
    for (const attempts of [1, 5, 40]) {
      expect(retryDelayMs(attempts, retryAfterMs, noDraw)).toBe(wait);
    }
  });

  it('shorter than the backoff step it is still honoured: the destination knows when it is ready', () => {
    expect(retryDelayMs(9, 2_000, noDraw)).toBe(2_000);
  });

  it('more than an hour is an hour; less than nothing is nothing', () => {
    expect(retryDelayMs(1, HOUR + 1, noDraw)).toBe(HOUR);
    expect(retryDelayMs(1, 366 * 24 * HOUR, noDraw)).toBe(HOUR);
    expect(retryDelayMs(1, Number.MAX_VALUE, noDraw)).toBe(HOUR);
    expect(retryDelayMs(1, -5_000, noDraw)).toBe(0);
    expect(retryDelayMs(1, -Number.MAX_VALUE, noDraw)).toBe(0);
  });

  it('a non-finite Retry-After is ignored: the ordinary backoff applies', () => {
    for (const retryAfterMs of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(retryDelayMs(1, retryAfterMs, lowest)).toBe(500);
      expect(retryDelayMs(3, retryAfterMs, highest)).toBe(4_000);
    }
  });
});

describe('retryAt', () => {
  it('is the ISO time the delay after now', () => {
    expect(retryAt(NOW, 0)).toBe('2026-11-21T12:00:00.000Z');
    expect(retryAt(NOW, 1_500)).toBe('2026-11-21T12:00:01.500Z');
    expect(retryAt(NOW, HOUR)).toBe('2026-11-21T13:00:00.000Z');
  });

  it.each([
    [HOUR + 1, HOUR],
    [9_999_999_999_999_000, HOUR], // a 13-digit Retry-After in seconds: past the last valid Date
    [Number.MAX_VALUE, HOUR],
    [-1, 0],
    [-Number.MAX_VALUE, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, 0],
    [Number.NEGATIVE_INFINITY, 0],
  ])('a delay of %d never throws and is bounded to a wait of %d ms', (delayMs, wait) => {
    // new Date(NOW + delayMs).toISOString() would throw a RangeError for most of these.
    let at = '';
    expect(() => {
      at = retryAt(NOW, delayMs);
    }).not.toThrow();
    expect(Date.parse(at) - NOW).toBe(wait);
  });

  it('a delay from retryDelayMs, whatever its inputs, makes a time within the hour', () => {
    for (const retryAfterMs of [undefined, 0, 1e300, -1e300, Number.NaN, Number.POSITIVE_INFINITY]) {
      for (const attempts of [1, 8, 1_000]) {
        const wait =
          Date.parse(
            retryAt(
              NOW,
              retryDelayMs(attempts, retryAfterMs, () => 0.5),
            ),
          ) - NOW;
        expect(wait).toBeGreaterThanOrEqual(0);
        expect(wait).toBeLessThanOrEqual(HOUR);
      }
    }
  });
});
