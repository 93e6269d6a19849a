/**
 * ClockSync and SyncedClock (lib/state/clock-sync.ts) on made-up answers: what `Date` headers
 * allow of a host's clock, when it is corrected and when it is left alone, and how probes timed to
 * the server's second narrow the bounds.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import {
  ClockSync,
  describeSkew,
  PRECISION_MS,
  STALE_MS,
  SyncedClock,
  TRUST_MS,
} from '../../lib/state/clock-sync.ts';

/**
 * A world where true time is `t`, the monotonic clock is `t - 5000` and the local clock is
 * `t + skew`. Sleeps are simulated: each waits in a queue, and time jumps to the earliest when
 * nothing else is left to run, so sleeps taken at once run side by side, as real timers do.
 */
function world(skewMs: number, tripMs = 4) {
  let t = Date.parse('2026-11-24T12:00:00.250Z');
  const sync = new ClockSync(() => t - 5000);
  const timers: { at: number; wake: () => void }[] = [];
  const tick = () => {
    timers.sort((a, b) => a.at - b.at);
    const next = timers.shift();
    if (!next) return;
    t = Math.max(t, next.at);
    next.wake();
  };
  const local: Clock = {
    now: () => t + skewMs,
    sleep: (ms) =>
      new Promise<void>((wake) => {
        timers.push({ at: t + ms, wake });
        setImmediate(tick);
      }),
  };
  /** One request: leaves now, the server stamps its second half way, the answer comes a trip later. */
  const answer = async () => {
    const sent = t - 5000;
    const stamp = t + tripMs / 2;
    await local.sleep(tripMs);
    sync.observe(new Date(Math.floor(stamp / 1000) * 1000).toUTCString(), sent, t - 5000);
  };
  return { sync, local, answer, now: () => t, advance: (ms: number) => (t += ms) };
}

describe('clock sync', () => {
  it('a host whose clock agrees with the answers is never corrected, however narrow the bounds get', async () => {
    const w = world(3);
    const clock = new SyncedClock(w.local, w.sync);
    for (let i = 0; i < 40; i++) {
      await w.answer();
      w.advance(137);
      expect(clock.skew().correction).toBe(0);
    }
    expect(clock.skew().uncertainty).toBeLessThan(200);
  });

  it('a clock ten minutes fast is corrected from the first answer, and settling brings it within the precision', async () => {
    const w = world(600_000);
    const seen: number[] = [];
    const clock = new SyncedClock(w.local, w.sync, (ms) => seen.push(ms));
    const before = w.sync.observations;
    const skew = await clock.settle(w.answer);
    expect(skew.off).toBe(true);
    expect(skew.uncertainty).toBeLessThanOrEqual(PRECISION_MS);
    expect(Math.abs(clock.now() - w.now())).toBeLessThanOrEqual(PRECISION_MS / 2);
    // One read for a first answer, then at most two rounds of timed ones.
    expect(w.sync.observations - before).toBeLessThanOrEqual(1 + 2 * 24);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeLessThan(-599_000);
  });

  it('two seconds slow or fast: corrected within the precision, so the runs meet on one timeline', async () => {
    for (const skew of [2000, -2000]) {
      const w = world(skew);
      const clock = new SyncedClock(w.local, w.sync);
      await clock.settle(w.answer);
      expect(Math.abs(clock.now() - w.now())).toBeLessThanOrEqual(PRECISION_MS / 2);
    }
  });

  it('1.3 s off: one answer may not show it, the next few of a run do, and settling then corrects it', async () => {
    const w = world(1300);
    const clock = new SyncedClock(w.local, w.sync);
    await clock.settle(w.answer);
    // A poller's DynamoDB requests over its first seconds, at whatever moments they come.
    for (let i = 0; i < 12; i++) {
      w.advance(271);
      await w.answer();
    }
    expect(clock.skew().off).toBe(true);
    await clock.settle(w.answer);
    expect(Math.abs(clock.now() - w.now())).toBeLessThanOrEqual(PRECISION_MS / 2);
  });

  it('within TRUST_MS the local clock is kept: a header a second coarse cannot move a synced host', async () => {
    const w = world(TRUST_MS - 100);
    const clock = new SyncedClock(w.local, w.sync);
    await w.answer();
    expect(clock.skew()).toMatchObject({ correction: 0, off: false });
    // No answer yet: nothing to go by, the local clock as it is.
    const fresh = world(600_000);
    expect(new SyncedClock(fresh.local, fresh.sync).skew()).toMatchObject({ correction: 0, off: false });
  });

  it('settling never waits past its deadline', async () => {
    const w = world(600_000);
    const clock = new SyncedClock(w.local, w.sync);
    const start = w.now();
    await clock.settle(w.answer, w.local.now() + 500);
    expect(w.now() - start).toBeLessThan(500);
  });

  it('an answer that contradicts the bounds (the clock was stepped) starts them again', async () => {
    const w = world(0);
    for (let i = 0; i < 10; i++) {
      await w.answer();
      w.advance(333);
    }
    const [lo] = w.sync.bounds();
    // The monotonic clock jumps 5 s relative to true time: the new answer does not fit.
    const date = new Date(Math.floor(w.now() / 1000) * 1000).toUTCString();
    w.sync.observe(date, w.now() - 10_000, w.now() - 10_000 + 4);
    const [lo2, hi2] = w.sync.bounds();
    expect(lo2).toBeGreaterThan(lo + 4000);
    expect(hi2 - lo2).toBeLessThanOrEqual(1000 + STALE_MS + 4 + 1);
  });

  it('says the skew the way an operator reads it', () => {
    expect(describeSkew(-603_000)).toBe('10 min 3 s ahead of');
    expect(describeSkew(-599_700)).toBe('10 min 0 s ahead of');
    expect(describeSkew(2_000)).toBe('2.0 s behind');
  });
});
