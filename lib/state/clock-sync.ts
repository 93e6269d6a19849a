/**
 * This host's clock against the table's (docs/architecture.md#leases, on clocks). Every time a run
 * writes for other runs to read (the governor's slots, lease expiries, `lastPolledAt`, pauses)
 * must be on one timeline, and a laptop can be seconds or minutes off. The one thing every run
 * that shares the table also shares is DynamoDB, and each of its answers carries a `Date` header:
 * the server's time, to the second, at some moment between our request leaving and its answer
 * arriving.
 *
 * So each answer bounds (server time − monotonic time): above `date − received` and below
 * `date + 1 s − sent` (plus STALE_MS: a Node server, dynalite, caches its `Date` string a second
 * at a time and may renew it late). The bounds of every answer are intersected, so a few answers
 * whose seconds turned over at different moments pin the offset down to a fraction of a second;
 * bounds widen by DRIFT_PER_MS as they age (a monotonic clock drifts a little), and an answer that
 * contradicts them (the host's clock was stepped, the server changed) starts them again.
 *
 * A SyncedClock reads the local clock and adds the correction: none while the local clock agrees
 * with what the answers allow (within TRUST_MS, so a synced host is never moved by a header's
 * coarseness), else the middle of the bounds. `settle` narrows wide bounds of a host known to be
 * off by timing a few reads to straddle the server's second boundary (spread over the bounds, so
 * one round of them cuts the bounds to a step between two), so a skewed run books slots on the
 * shared timeline within PRECISION_MS before it books any.
 */
import type { Clock } from '../clock.ts';
import type { DynamoDBClient } from './sdk.ts';

/** How late a server's `Date` header may be renewed after its second turns over. */
export const STALE_MS = 50;
/** A local clock within this of the bounds is trusted as it is (the contract's "about a second" band starts here). */
export const TRUST_MS = 500;
/** `settle` stops narrowing once the bounds are this narrow. */
export const PRECISION_MS = 100;
/** At most this many reads a round of settling, and this many rounds (each waits a second or two). */
export const MAX_PROBES = 24;
export const MAX_ROUNDS = 3;
/** How much bounds widen per ms of age: 100 ppm, far more than a monotonic clock drifts. */
export const DRIFT_PER_MS = 100e-6;
/**
 * A time another run wrote that lies further ahead than it could legitimately be (a lease's
 * length, a lane's reach) by more than this was written on a wrong clock, and is not obeyed.
 */
export const SKEW_SLACK_MS = 5_000;

const monotonic = () => performance.now();

/** Bounds on (server time − monotonic time), in ms, from the `Date` headers of a client's answers. */
export class ClockSync {
  private lo = Number.NEGATIVE_INFINITY;
  private hi = Number.POSITIVE_INFINITY;
  private loAt = 0;
  private hiAt = 0;
  /** The last answer's round trip, ms. */
  trip = 0;
  /** Answers seen with a `Date` header. */
  observations = 0;

  constructor(readonly mono: () => number = monotonic) {}

  /** One answer: its `Date` header, and the monotonic times its request left and its answer came. */
  observe(date: string | undefined, sent: number, received: number): void {
    const server = date ? Date.parse(date) : Number.NaN;
    if (!Number.isFinite(server) || received < sent) return;
    const lo = server - received;
    const hi = server + 1000 + STALE_MS - sent;
    const [curLo, curHi] = this.bounds(received);
    this.observations += 1;
    this.trip = received - sent;
    if (lo > curHi || hi < curLo) {
      // A contradiction: the local clock was stepped, or another server answered. Start again.
      [this.lo, this.hi, this.loAt, this.hiAt] = [lo, hi, received, received];
      return;
    }
    if (lo > curLo) [this.lo, this.loAt] = [lo, received];
    if (hi < curHi) [this.hi, this.hiAt] = [hi, received];
  }

  /** The bounds at monotonic time `at`, widened for their age; infinite before any answer. */
  bounds(at: number = this.mono()): [number, number] {
    return [this.lo - DRIFT_PER_MS * (at - this.loAt), this.hi + DRIFT_PER_MS * (at - this.hiAt)];
  }

  /**
   * When (ms from now) to send `count` requests whose answers narrow the bounds most: spread over
   * the bounds' width around the moment the server's second would turn over if the offset were
   * their middle, so the turn falls between two of them, whichever they are.
   */
  probeDelays(count: number, at: number = this.mono()): number[] {
    const [lo, hi] = this.bounds(at);
    const middle = (lo + hi) / 2;
    const step = (hi - lo) / (count + 1);
    const half = this.trip / 2;
    // The first monotonic time, far enough ahead for the earliest probe, at which the second turns.
    const turn = Math.ceil((at + half + middle + (hi - lo) / 2) / 1000) * 1000 - middle - half;
    return Array.from({ length: count }, (_, i) => Math.max(0, turn - (hi - lo) / 2 + (i + 1) * step - at));
  }
}

const syncs = new WeakMap<object, ClockSync>();

/** The ClockSync fed by `client`'s answers (table.ts adds the middleware that feeds it). */
export function clockSyncOf(client: DynamoDBClient): ClockSync {
  let sync = syncs.get(client);
  if (!sync) {
    sync = new ClockSync();
    syncs.set(client, sync);
  }
  return sync;
}

/** What a correction looks like now: ms to add to the local clock, and how sure it is. */
export interface Skew {
  /** Server time − local time, as applied (0 while the local clock is trusted). */
  correction: number;
  /** Width of the bounds, ms (infinite before any answer). */
  uncertainty: number;
  /** The local clock is further off than the answers allow. */
  off: boolean;
}

/** The local clock, corrected onto the table's timeline (see the module comment). */
export class SyncedClock implements Clock {
  private warned = false;
  /** The first read, shared by callers that settle at once. */
  private first?: Promise<unknown>;

  constructor(
    readonly local: Clock,
    readonly sync: ClockSync,
    /** Told once, the first time a correction is applied (the offset in ms). */
    private readonly onSkew?: (offsetMs: number) => void,
  ) {}

  skew(): Skew {
    const m = this.sync.mono();
    const [klo, khi] = this.sync.bounds(m);
    if (!Number.isFinite(klo) || !Number.isFinite(khi))
      return { correction: 0, uncertainty: Number.POSITIVE_INFINITY, off: false };
    const local = this.local.now();
    const lo = klo + m - local;
    const hi = khi + m - local;
    const off = lo > TRUST_MS || hi < -TRUST_MS;
    const correction = off ? (lo + hi) / 2 : 0;
    if (off && !this.warned) {
      this.warned = true;
      this.onSkew?.(correction);
    }
    return { correction, uncertainty: hi - lo, off };
  }

  now(): number {
    return this.local.now() + this.skew().correction;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.local.sleep(ms, signal);
  }

  /**
   * Makes sure the clock is worth trusting before a time is written for others: `read` (one
   * cheap request on the client) when no answer was seen yet, and, while the local clock is known
   * to be off and the bounds are wide, reads timed to narrow them (at most MAX_PROBES, none that
   * would end past `deadline`, on the local clock: the correction may change meanwhile).
   */
  async settle(read: () => Promise<unknown>, deadline = Number.POSITIVE_INFINITY): Promise<Skew> {
    if (this.sync.observations === 0) {
      this.first ??= read().finally(() => {
        this.first = undefined;
      });
      await this.first;
    }
    let skew = this.skew();
    for (let round = 0; round < MAX_ROUNDS && skew.off && skew.uncertainty > PRECISION_MS; round++) {
      // Two probes either side of the turn leave bounds a step, a trip and STALE_MS wide.
      const step = Math.max(10, PRECISION_MS - STALE_MS - 2 * this.sync.trip);
      const count = Math.min(MAX_PROBES, Math.ceil(skew.uncertainty / step));
      const delays = this.sync.probeDelays(count);
      if (this.local.now() + Math.max(...delays) + 1000 > deadline) break;
      await Promise.all(
        delays.map(async (wait) => {
          if (wait > 0) await this.local.sleep(wait);
          await read();
        }),
      );
      skew = this.skew();
    }
    return skew;
  }
}

/** `clock` on the timeline of `client`'s server (a clock that already is one is returned as is). */
export function syncedClock(
  clock: Clock,
  client: DynamoDBClient,
  onSkew?: (offsetMs: number) => void,
): SyncedClock {
  return clock instanceof SyncedClock ? clock : new SyncedClock(clock, clockSyncOf(client), onSkew);
}

/** Says a skew the way an operator reads it: "10 min 3 s ahead". */
export function describeSkew(correctionMs: number): string {
  const ms = Math.abs(correctionMs);
  const seconds = Math.round(ms / 1000);
  const text =
    seconds >= 60
      ? `${Math.floor(seconds / 60)} min ${seconds % 60} s`
      : ms >= 10_000
        ? `${Math.round(ms / 1000)} s`
        : `${(ms / 1000).toFixed(1)} s`;
  // The correction is server − local: a negative one means the local clock runs ahead.
  return `${text} ${correctionMs < 0 ? 'ahead of' : 'behind'}`;
}
