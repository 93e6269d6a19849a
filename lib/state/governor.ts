/**
 * The shared rate governor (interface.md section 7): every run that uses the table (pollers, the
 * API, CLI commands) takes its turn here before each upstream request, so together they keep
 * within the organization's rate tiers: `requestsPerSecond` for every endpoint, and
 * `searchRequestsPerSecond` for the global searches (endpoints 9 and 11), which count in both.
 *
 * How. One item, `governor` / `rate`, holds the time of the last slot booked in each tier. A
 * request books the next free slot with one conditional UpdateItem: its slot `c` is at least one
 * interval after the last booked slot of its tiers (`basicAt <= c - interval`), and never in the
 * past. Every slot is thus at least one interval after the one before, in every tier, whoever
 * booked it; the request then waits for its slot and is sent. The interval is paced at 90% of the
 * rate, so network jitter cannot push two requests into one window: at most `rate` requests fall
 * in any sliding second. When a booking loses a race (another run booked meanwhile), the item is
 * read and the booking tried again; a run that keeps losing races reads before it books.
 *
 * Priority. A poller never books more than about one interval ahead of now: with a backlog in
 * front, it waits and books later. So an interactive call (the API, `assets toggle`) finds the
 * next slot at most about one interval away instead of behind every poller's queue.
 *
 * After a 429 the shared rate halves for a minute, for every run (`slowDown`).
 *
 * The rates: pollers write the configured `upstream` rates into the item with every booking; the
 * API and the CLI use the rates stored there, and the defaults before any poller ran.
 *
 * Clocks: slots are real times (the governor is given the system clock, whatever clock the rest
 * of a run uses), on each run's own machine. Lambda clocks agree within milliseconds; a run
 * on a machine whose clock is far ahead can crowd others, never itself.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { RateGovernor, RateTier } from '../upstream/rate.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from './sdk.ts';

export interface UpstreamRates {
  requestsPerSecond: number;
  searchRequestsPerSecond: number;
}

/** The organization's tiers when nothing says otherwise (upstream-facts.md). */
export const DEFAULT_RATES: UpstreamRates = { requestsPerSecond: 4, searchRequestsPerSecond: 1 };
/** Pace at this share of the rate: the margin that keeps jitter from pushing two requests into a second. */
export const PACE_SHARE = 0.9;
/** After a 429, the shared rate is divided by this for SLOW_MS. */
export const SLOW_FACTOR = 2;
export const SLOW_MS = 60_000;
/** A run that lost a booking race this recently reads the item before it books. */
const CONTENDED_MS = 30_000;

const KEY = { pk: 'governor', sk: 'rate' };

interface Booked {
  basicAt?: number;
  searchAt?: number;
  slowUntil?: number;
  rates?: UpstreamRates;
}

export interface GovernorOptions {
  /** A poller's configured rates, written into the table with each booking. Others read them. */
  rates?: UpstreamRates;
  /** Interactive callers (the API, the CLI's toggle) book the next slot whatever the backlog. */
  priority?: boolean;
  /** Counts DynamoDB requests (benchmarks). */
  onRequest?: (operation: string) => void;
}

export class DynamoRateGovernor implements RateGovernor {
  private known: Booked = {};
  private loaded = false;
  private contendedAt = Number.NEGATIVE_INFINITY;
  /** Upstream requests that took a turn, and DynamoDB requests made for them (the bench's figure). */
  readonly stats = { turns: 0, reads: 0, writes: 0, failedWrites: 0 };

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly options: GovernorOptions = {},
  ) {}

  /** The rates in force: a poller's own, else the ones a poller stored, else the defaults. */
  rates(): UpstreamRates {
    return this.options.rates ?? this.known.rates ?? DEFAULT_RATES;
  }

  /** Waits for this run's turn to send one request of `tier`; throws rate_limited when none comes before `deadline`. */
  async take(tier: RateTier, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<void> {
    this.stats.turns += 1;
    const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    // A run that does not set the rates learns them (and the queue) before its first booking.
    if ((!this.loaded && !this.options.rates) || this.clock.now() - this.contendedAt < CONTENDED_MS)
      await this.read();
    for (;;) {
      const now = this.clock.now();
      const { basic, search } = this.intervals(now);
      const slot = Math.max(
        now,
        (this.known.basicAt ?? Number.NEGATIVE_INFINITY) + basic,
        tier === 'search' ? (this.known.searchAt ?? Number.NEGATIVE_INFINITY) + search : now,
      );
      if (slot > deadline) {
        throw new UpstreamError(
          'rate_limited',
          'the shared upstream rate has no free turn before the time budget ends',
          { retryAfterMs: slot - now },
        );
      }
      // A poller leaves the queue short: it books at most about one interval ahead.
      if (!this.options.priority && slot - now > basic) {
        await this.clock.sleep(slot - now - basic, options.signal);
        await this.read();
        continue;
      }
      if (await this.book(tier, slot, basic, search)) {
        await this.clock.sleep(slot - this.clock.now(), options.signal);
        return;
      }
      this.contendedAt = this.clock.now();
      await this.read();
    }
  }

  /** After a 429: every run paces at half the rate for a minute. */
  async slowDown(): Promise<void> {
    const until = this.clock.now() + SLOW_MS;
    this.known.slowUntil = until;
    this.options.onRequest?.('UpdateItem');
    this.stats.writes += 1;
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(KEY),
          UpdateExpression: 'SET slowUntil = :u',
          ConditionExpression: 'attribute_not_exists(slowUntil) OR slowUntil < :u',
          ExpressionAttributeValues: marshall({ ':u': until }),
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  /** The spacing of each tier's slots now, in ms. */
  private intervals(now: number): { basic: number; search: number } {
    const rates = this.rates();
    const slow = (this.known.slowUntil ?? 0) > now ? SLOW_FACTOR : 1;
    return {
      basic: (1000 / (rates.requestsPerSecond * PACE_SHARE)) * slow,
      search: (1000 / (rates.searchRequestsPerSecond * PACE_SHARE)) * slow,
    };
  }

  /** Books `slot` in the basic tier (and the search tier); false when another run booked first. */
  private async book(tier: RateTier, slot: number, basic: number, search: number): Promise<boolean> {
    const sets = ['basicAt = :c'];
    const conditions = ['(attribute_not_exists(basicAt) OR basicAt <= :cb)'];
    const values: Record<string, unknown> = { ':c': slot, ':cb': slot - basic };
    if (tier === 'search') {
      sets.push('searchAt = :c');
      conditions.push('(attribute_not_exists(searchAt) OR searchAt <= :cs)');
      values[':cs'] = slot - search;
    }
    if (this.options.rates) {
      sets.push('rps = :rps', 'srps = :srps');
      values[':rps'] = this.options.rates.requestsPerSecond;
      values[':srps'] = this.options.rates.searchRequestsPerSecond;
    }
    this.options.onRequest?.('UpdateItem');
    this.stats.writes += 1;
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(KEY),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeValues: marshall(values),
          ReturnValues: 'ALL_NEW',
        }),
      );
      this.remember(out.Attributes ? unmarshall(out.Attributes) : {});
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.stats.failedWrites += 1;
      return false;
    }
  }

  /** Reads the item (consistent): the slots others booked, the slowdown, the stored rates. */
  private async read(): Promise<void> {
    this.options.onRequest?.('GetItem');
    this.stats.reads += 1;
    const out = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: marshall(KEY), ConsistentRead: true }),
    );
    this.remember(out.Item ? unmarshall(out.Item) : {});
  }

  private remember(item: Record<string, unknown>): void {
    this.loaded = true;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
    const rps = num(item.rps);
    const srps = num(item.srps);
    this.known = {
      basicAt: num(item.basicAt),
      searchAt: num(item.searchAt),
      slowUntil: num(item.slowUntil),
      ...(rps && srps && rps > 0 && srps > 0
        ? { rates: { requestsPerSecond: rps, searchRequestsPerSecond: srps } }
        : {}),
    };
  }
}
