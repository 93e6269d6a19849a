/**
 * The shared rate governor (docs/architecture.md): every run that uses the table (pollers, the
 * API, CLI commands) takes its turn here before each upstream request, so together they keep
 * within the organization's rate tiers: `requestsPerSecond` for every endpoint, and
 * `searchRequestsPerSecond` for the global searches (endpoints 9 and 11), which count in both.
 *
 * Longer than 300 lines on purpose: a fifth of it is the explanation below, and the rest is one
 * mechanism (a lane's item, its bookings and the blocks of them); split, each half would need the
 * other's invariants to be read.
 *
 * Two lanes. A global search takes a turn in the search lane only; every other request in the
 * basic lane, whose rate is `requestsPerSecond` less `searchRequestsPerSecond` when the deployment
 * searches at all (a search rate above half the whole is held to half, so both lanes can run). The
 * two lanes together never exceed `requestsPerSecond`, and the search lane alone never exceeds
 * `searchRequestsPerSecond`, without a request ever touching both: one write a request. (A
 * deployment without credential domains gives its basic lane the whole rate.)
 *
 * A turn. Each lane is one number in one item: the time of the last slot booked. A request books
 * the next slot with one UpdateItem that adds the lane's interval (`SET at = at + :i`, on condition
 * that the lane is busy, `at >= now - i`), and waits for the slot the update returns. No two runs
 * can get the same slot, and slots are an interval apart, whoever booked them. An idle lane (its
 * last slot more than an interval ago) is restarted at now with a conditional set instead. A run
 * tries first the busy booking if that worked last time or the lane looked busy, else the
 * restart, so a busy lane and an idle one both cost one write a turn, but when the lane changes
 * between the two. The interval is paced at 90% of the rate. A run books no slot past its
 * deadline (the busy update is also conditional on the next slot coming by then): a slot booked
 * and left unused would push every later turn out, and runs short of time, one after another,
 * would starve the lane.
 *
 * Why that holds in every sliding second: R+1 consecutive slots span R intervals, 1000/0.9 =
 * 1,111 ms, so a request sent up to 111 ms after its slot cannot crowd R+1 requests into one
 * second. A run that finds itself later than LATE_MS past its slot (a busy event loop) does not
 * send: it books again (its spoiled slot stays unused), so the margin is kept for network jitter.
 *
 * Blocks. Where slots are closer together than a write takes (high rates), a run books the slots of
 * about BLOCK_MS at once, with the same one write, and uses them in turn; a slot it does not use in
 * time stays unused. At the real tiers (and up to five times them) a block is one slot.
 *
 * Priority. Each run holds at most one booking at a time (it books, waits, sends, then books
 * again), so an interactive call (the API, `assets toggle`) waits behind at most one block (at the
 * real tiers, one slot) per running poller.
 *
 * One item, `governor` / `rate`, holds the upstream's lanes; each identity provider's lane is an
 * item of its own (`key`), booked the same way.
 *
 * After a 429 the shared rate halves for a minute, for every run (`slowDown`). A pause (`pause`:
 * the identity providers' 429s and spent rates, lib/identity/lanes.ts) stops every run's turns in
 * the item until the time the provider named: a run learns of it from its next booking's answer,
 * leaves that slot unused, and waits (or refuses a turn its deadline cannot wait for). The rates: pollers
 * write the configured `upstream` rates into the item with every booking; the API and the CLI use
 * the rates stored there, and the defaults before any poller ran.
 *
 * Clocks. Slots are real times on one timeline, the table's: the governor corrects its run's
 * clock by the `Date` headers of DynamoDB's answers (clock-sync.ts), and reads once before its
 * first booking when its client has seen no answer yet, so a laptop minutes off neither sends
 * early nor books the lane into the others' future. Two bounds keep any writer honest, corrected
 * or not: no slot is booked more than `ahead` (AHEAD_MS, or three intervals at a slow rate) past
 * now (a run whose turn would come later waits until it no longer would, then books), and a lane
 * found booked further ahead than that by RECLAIM_SLACK_MS is taken back to now. A slowdown that
 * ends absurdly far ahead is ignored, and overwritten by the next.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { RateGovernor, RateTier } from '../upstream/rate.ts';
import { waitingFor } from '../waits.ts';
import { SKEW_SLACK_MS, type SyncedClock, syncedClock } from './clock-sync.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from './sdk.ts';

export interface UpstreamRates {
  requestsPerSecond: number;
  searchRequestsPerSecond: number;
}

/** The organization's tiers when nothing says otherwise (the real service's). */
export const DEFAULT_RATES: UpstreamRates = { requestsPerSecond: 4, searchRequestsPerSecond: 1 };
/** Pace at this share of the rate: the margin that keeps jitter from crowding a second. */
export const PACE_SHARE = 0.9;
/** A request later than this past its slot is not sent; it books again (see above). */
export const LATE_MS = 80;
/**
 * A run books the slots of about this long at once (one write; at most MAX_BLOCK): one slot at the
 * real tiers and up to five times them (slots 20 ms and more apart), several only at rates where a
 * write per request would cost more time than the wait.
 */
export const BLOCK_MS = 20;
export const MAX_BLOCK = 32;
const blockSize = (interval: number) => Math.max(1, Math.min(MAX_BLOCK, Math.floor(BLOCK_MS / interval)));
/** After a 429, the shared rate is divided by this for SLOW_MS. */
export const SLOW_FACTOR = 2;
export const SLOW_MS = 60_000;
/** No slot is booked further past now than this (or three intervals, at a slow rate). */
export const AHEAD_MS = 10_000;
/** A lane (or a slowdown) further ahead than its bound by this was written on a wrong clock: reclaimed. */
export const RECLAIM_SLACK_MS = SKEW_SLACK_MS;
/** The longest pause obeyed (a provider's `Retry-After` is capped there too). */
export const MAX_PAUSE_MS = 600_000;

const LANE: Record<RateTier, 'basicAt' | 'searchAt'> = { basic: 'basicAt', search: 'searchAt' };

interface Known {
  slowUntil?: number;
  pausedUntil?: number;
  rates?: UpstreamRates;
  searching?: boolean;
}

export interface GovernorOptions {
  /** A poller's configured rates, written into the table with each booking. Others read them. */
  rates?: UpstreamRates;
  /**
   * Whether this deployment makes global searches (credential domains are configured): then the
   * basic lane leaves the search rate to the search lane. Written with the rates; others read it.
   */
  searching?: boolean;
  /** The item's sort key: `rate` (the upstream's lanes) unless given. */
  key?: string;
  /** Counts DynamoDB requests (benchmarks). */
  onRequest?: (operation: string) => void;
}

export class DynamoRateGovernor implements RateGovernor {
  private known: Known = {};
  /** Each lane's last booked slot, as this run last saw it: which booking to try first. */
  private seen: Partial<Record<'basicAt' | 'searchAt', number>> = {};
  /** Slots of this run's blocks not used yet, per tier, in order. */
  private held: Record<RateTier, number[]> = { basic: [], search: [] };
  /** Whether a tier's blocks hold more than one slot (high rates), and a block being booked. */
  private blocks: Record<RateTier, boolean> = { basic: false, search: false };
  private refilling: Record<RateTier, Promise<void> | undefined> = { basic: undefined, search: undefined };
  /** How this run booked each lane last time: a lane shared with busy runs stays busy. */
  private booked: Partial<Record<'basicAt' | 'searchAt', 'busy' | 'idle'>> = {};
  private loaded = false;
  /** Upstream requests that took a turn, and DynamoDB requests made for them (the bench's figure). */
  readonly stats = { turns: 0, reads: 0, writes: 0, failedWrites: 0, late: 0, reclaimed: 0 };
  /** The run's clock on the table's timeline (see Clocks above). */
  private readonly clock: SyncedClock;
  private readonly key: ReturnType<typeof marshall>;

  /** `clock` is the run's own (real time; deadlines are given on it); the governor corrects it. */
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    clock: Clock,
    private readonly options: GovernorOptions = {},
  ) {
    this.clock = syncedClock(clock, client);
    this.key = marshall({ pk: 'governor', sk: options.key ?? 'rate' });
  }

  /** What a stop names while this run waits for a turn here (waits.ts). */
  private get turnLabel(): string {
    return `a turn from the rate governor (${this.options.key ? `lane ${this.options.key}` : 'the upstream'})`;
  }

  /** The rates in force: a poller's own, else the ones a poller stored, else the defaults. */
  rates(): UpstreamRates {
    return this.options.rates ?? this.known.rates ?? DEFAULT_RATES;
  }

  /** Waits for this run's turn to send one request of `tier`; throws rate_limited when none comes before `deadline`. */
  async take(tier: RateTier, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<void> {
    this.stats.turns += 1;
    // A run that does not set the rates learns them before its first booking.
    if (!this.loaded && !this.options.rates) await this.read();
    // The deadline is on the run's own clock; slots are on the table's.
    const given = options.deadline ?? Number.POSITIVE_INFINITY;
    const skew = await this.clock.settle(() => this.read(), given);
    const deadline = given + skew.correction;
    const held = this.held[tier];
    for (;;) {
      const now = this.clock.now();
      if (now > deadline) throw tooLate(0);
      const paused = this.paused(now);
      if (paused) {
        if (paused > deadline) throw tooLate(paused - now);
        await waitingFor(this.turnLabel, this.clock.sleep(paused - now, options.signal));
        continue;
      }
      // Slots of this run's block that went by unused stay unused.
      while (held.length && now - (held[0] as number) > LATE_MS) held.shift();
      // A block being booked in the background: wait for it rather than book another.
      if (!held.length && this.refilling[tier]) {
        await this.refilling[tier];
        continue;
      }
      let slot = held.shift();
      if (slot === undefined) {
        slot = await this.bookBlock(tier, now, deadline);
        if (slot > deadline) throw tooLate(slot - now);
      } else if (slot > deadline) {
        held.unshift(slot); // a caller with more time may use it
        throw tooLate(slot - now);
      }
      // Booked before this run heard of a pause (its answer told): that slot goes unused.
      if (this.paused(now) > slot) continue;
      // Where blocks are booked (high rates), the next one is booked while this block can still be
      // used (its last slot less than LATE_MS ago), so no request waits for a write.
      const usableUntil = (held.at(-1) ?? slot) + LATE_MS;
      if (this.blocks[tier] && !this.refilling[tier] && usableUntil - now < LATE_MS / 2)
        this.refill(tier, deadline);
      const wait = slot - this.clock.now();
      if (wait > 0) await waitingFor(this.turnLabel, this.clock.sleep(wait, options.signal));
      const at = this.clock.now();
      // A pause heard of while waiting (this run's own 429) holds this slot back too.
      if (this.paused(at)) continue;
      if (at - slot <= LATE_MS) return;
      // Too late to keep the margin: that slot goes unused, and this request books another.
      this.stats.late += 1;
    }
  }

  /** Books a block of slots from `now` (see Blocks above); returns the first, holds the rest (all of them with `holdAll`). */
  private async bookBlock(tier: RateTier, now: number, deadline: number, holdAll = false): Promise<number> {
    const interval = this.interval(tier, now);
    const size = blockSize(interval);
    this.blocks[tier] = size > 1;
    const count = Number.isFinite(deadline)
      ? Math.max(1, Math.min(size, Math.floor((deadline - now) / interval)))
      : size;
    const first = await this.book(tier, now, interval, deadline, count);
    if (first <= deadline)
      for (let j = holdAll ? 0 : 1; j < count; j++) this.held[tier].push(first + j * interval);
    return first;
  }

  /** Books the next block in the background; a failure only means the next request books itself. */
  private refill(tier: RateTier, deadline: number): void {
    this.refilling[tier] = this.bookBlock(tier, this.clock.now(), deadline, true)
      .then(() => {})
      .catch(() => {})
      .finally(() => {
        this.refilling[tier] = undefined;
      });
  }

  /** After a 429: every run paces at half the rate for a minute. */
  async slowDown(): Promise<void> {
    await this.mark('slowUntil', SLOW_MS);
  }

  /** The provider's rate is spent for `ms` (at most MAX_PAUSE_MS): no run takes a turn here before then. */
  async pause(ms: number): Promise<void> {
    await this.mark('pausedUntil', Math.min(ms, MAX_PAUSE_MS), MAX_PAUSE_MS);
  }

  /** A pause in force at `now` (when it ends), or 0; one ending absurdly far ahead is ignored. */
  private paused(now: number): number {
    const until = this.known.pausedUntil ?? 0;
    return until > now && until <= now + MAX_PAUSE_MS + RECLAIM_SLACK_MS ? until : 0;
  }

  /**
   * Sets a slowdown's or a pause's end `ms` from now for every run, unless a later one stands; one
   * ending further ahead than `longest` can (a wrong clock wrote it) does not stand.
   */
  private async mark(name: 'slowUntil' | 'pausedUntil', ms: number, longest = ms): Promise<void> {
    const now = this.clock.now();
    const until = now + ms;
    const absurd = now + longest + RECLAIM_SLACK_MS;
    const known = this.known[name] ?? 0;
    if (known >= until && known <= absurd) return;
    this.known[name] = until;
    // Slots held at the old pace, or before the pause, are given up.
    this.held.basic.length = 0;
    this.held.search.length = 0;
    this.options.onRequest?.('UpdateItem');
    this.stats.writes += 1;
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key,
          UpdateExpression: `SET ${name} = :u`,
          ConditionExpression: `attribute_not_exists(${name}) OR ${name} < :u OR ${name} > :absurd`,
          ExpressionAttributeValues: marshall({ ':u': until, ':absurd': absurd }),
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  /** The spacing of a lane's slots now, in ms (see the module comment for the basic lane's share). */
  private interval(tier: RateTier, now: number): number {
    const { requestsPerSecond: all, searchRequestsPerSecond: searches } = this.rates();
    const searching = this.options.searching ?? this.known.searching ?? true;
    // The lanes add up to the whole rate; a search rate above half of it is held to half.
    const search = Math.min(searches, all / 2);
    const rate = tier === 'search' ? search : searching ? all - search : all;
    const until = this.known.slowUntil ?? 0;
    const slow = until > now && until <= now + SLOW_MS + RECLAIM_SLACK_MS ? SLOW_FACTOR : 1;
    return (1000 / (rate * PACE_SHARE)) * slow;
  }

  /** How far past now a slot may be booked at `interval` (see Clocks above). */
  private ahead(interval: number): number {
    return Math.max(AHEAD_MS, 3 * interval);
  }

  /**
   * Books the lane's next slot with one write: the busy booking when it worked for this run last
   * time (its own last slot says little on a lane other runs book too) or the lane was busy when
   * this run last saw it, else the restart of an idle lane (a lane never seen is taken for idle);
   * the other one after a refusal (two writes, as when a race was lost).
   * Never a slot past `deadline`: a booking the run could not use would still move the lane on, so
   * runs short of time would push every later run's turns out (and, run after run, starve the
   * lane). When the next free slot is past the deadline, nothing is booked and that slot is
   * returned, for the caller to refuse.
   */
  private async book(
    tier: RateTier,
    now: number,
    interval: number,
    deadline: number,
    count: number,
  ): Promise<number> {
    const lane = LANE[tier];
    const rest = (count - 1) * interval;
    let idleFirst =
      this.booked[lane] !== 'busy' && (this.seen[lane] ?? Number.NEGATIVE_INFINITY) < now - interval;
    for (;;) {
      const floor = now - interval;
      const ahead = this.ahead(interval);
      // Busy: the next `count` slots after the last one booked, if the first comes by the
      // deadline and no further than `ahead` past now.
      const busy = async () => {
        const item = await this.update(
          `SET ${lane} = ${lane} + :span`,
          `${lane} >= :floor AND ${lane} <= :last`,
          {
            ':span': count * interval,
            ':floor': floor,
            ':last': Math.min(deadline, now + ahead) - interval,
          },
        );
        return item ? (item[lane] as number) - rest : undefined;
      };
      // Idle (or never used): start again at now, unless another run just did.
      const restart = async () =>
        (await this.update(`SET ${lane} = :end`, `attribute_not_exists(${lane}) OR ${lane} < :floor`, {
          ':end': now + rest,
          ':floor': floor,
        }))
          ? now
          : undefined;
      const first = await (idleFirst ? restart() : busy());
      const slot = first ?? (await (idleFirst ? busy() : restart()));
      if (slot !== undefined) {
        this.booked[lane] = (first !== undefined) === idleFirst ? 'idle' : 'busy';
        return slot;
      }
      // Both refused: the lane is booked past a bound, or another run restarted it meanwhile.
      const at = await this.laneAt(lane);
      if (at !== undefined && at > now + ahead + RECLAIM_SLACK_MS) {
        // No run on a right clock books that far ahead: a wrong one did. Take the lane back.
        if (await this.reclaim(lane, at, now + rest)) return now;
      } else if (at !== undefined && at + interval > deadline) {
        return at + interval;
      } else if (at !== undefined && at + interval > now + ahead) {
        // Other runs hold the next `ahead` of turns: wait until this one would be within reach.
        await this.clock.sleep(at + interval - ahead - now);
      }
      idleFirst = false;
      now = this.clock.now();
    }
  }

  /** Sets a lane found absurdly far ahead back to now, unless another run changed it meanwhile. */
  private async reclaim(lane: 'basicAt' | 'searchAt', at: number, end: number): Promise<boolean> {
    const item = await this.update(`SET ${lane} = :end`, `${lane} = :at`, { ':end': end, ':at': at });
    if (item) this.stats.reclaimed += 1;
    return item !== undefined;
  }

  /** One conditional UpdateItem (with the rates when this run sets them); the item after it, or undefined. */
  private async update(
    expression: string,
    condition: string,
    values: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const sets = [expression];
    const all = { ...values };
    if (this.options.rates) {
      sets.push('rps = :rps', 'srps = :srps', 'searching = :s');
      all[':rps'] = this.options.rates.requestsPerSecond;
      all[':srps'] = this.options.rates.searchRequestsPerSecond;
      all[':s'] = this.options.searching ?? true;
    }
    this.options.onRequest?.('UpdateItem');
    this.stats.writes += 1;
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key,
          UpdateExpression: sets.join(', '),
          ConditionExpression: condition,
          ExpressionAttributeValues: marshall(all),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const item = out.Attributes ? unmarshall(out.Attributes) : {};
      this.remember(item);
      return item;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.stats.failedWrites += 1;
      return undefined;
    }
  }

  /** Reads the item (consistent): the stored rates and the slowdown. */
  private async read(): Promise<Record<string, unknown>> {
    this.options.onRequest?.('GetItem');
    this.stats.reads += 1;
    const out = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.key, ConsistentRead: true }),
    );
    const item = out.Item ? unmarshall(out.Item) : {};
    this.remember(item);
    return item;
  }

  /** The lane's last booked slot, read (only when a booking was refused for the deadline). */
  private async laneAt(lane: 'basicAt' | 'searchAt'): Promise<number | undefined> {
    const at = (await this.read())[lane];
    return typeof at === 'number' ? at : undefined;
  }

  private remember(item: Record<string, unknown>): void {
    this.loaded = true;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    for (const lane of Object.values(LANE)) {
      const at = num(item[lane]);
      if (at !== undefined) this.seen[lane] = at;
    }
    const rps = num(item.rps);
    const srps = num(item.srps);
    this.known = {
      slowUntil: num(item.slowUntil),
      // This run's own pause stands while its write may still be on its way.
      pausedUntil: Math.max(num(item.pausedUntil) ?? 0, this.known.pausedUntil ?? 0),
      ...(typeof item.searching === 'boolean' ? { searching: item.searching } : {}),
      ...(rps && srps && rps > 0 && srps > 0
        ? { rates: { requestsPerSecond: rps, searchRequestsPerSecond: srps } }
        : {}),
    };
  }
}

function tooLate(waitMs: number): UpstreamError {
  return new UpstreamError(
    'rate_limited',
    'the shared upstream rate has no free turn before the time budget ends',
    { retryAfterMs: waitMs, noTurn: true },
  );
}
