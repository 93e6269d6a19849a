/**
 * The delivery pass: for every destination at once, take its lease, read the pending deliveries
 * that are due (from the sparse index, then confirmed with a consistent read, since an index can
 * lag), render them (digests over the threshold), send at the destination's pace, and record the
 * outcome: sent, retry later (exponential backoff with jitter from 1 s to 5 min, or exactly the
 * `Retry-After` the destination asked for, at most an hour), or dead after 8 attempts or a
 * permanent refusal.
 *
 * - Rate limits: a 429 pauses the destination for every run (state/destinations.ts) until its
 *   `Retry-After`, or the backoff, has passed, and the pass sends it nothing more meanwhile. It costs
 *   no attempt: a delivery dies of 429s only when still refused a day after its first 429. A 5xx
 *   with `Retry-After` pauses the destination too, and counts an attempt like any 5xx.
 * - Too large: a message of several items answered 413 is split in halves, and the halves are sent
 *   (now, or by the next pass, which splits any body as big as one refused before sending it), down
 *   to one item; a single item answered 413 is dead.
 * - Time: `deadline` is the last moment a send may start. A send in flight keeps its full timeout
 *   (cutting it short could deliver it and still record a failure: a duplicate next time). The pace
 *   wait never exceeds the pace, whatever `lastSentAt` another run's clock wrote.
 *
 * A destination that refuses permanently is reported to operators once (ops destinations and a
 * metric), until a later send succeeds. A slow or dead destination holds up nobody: each has its
 * own lease and loop, and every request has a timeout.
 */

import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { DeliveryAlert } from '../model.ts';
import type { Notice, Rendered } from '../render/types.ts';
import type { DeliveryRecord, DeliveryStore } from '../state/deliveries.ts';
import {
  type DestinationLease,
  type DestinationPause,
  type DestinationStateStore,
  pauseLeft,
} from '../state/destinations.ts';
import { keepAlive, LeaseLostError, LeaseRenewalError } from '../state/lease.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { HttpPost } from './post.ts';
import { buildRequest, DEFAULT_SEND_TIMEOUT_MS, type Payload, type SendOutcome, send } from './senders.ts';

export const MAX_ATTEMPTS = 8;
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 300_000;
/** The longest wait any answer can impose before the next try, whatever its `Retry-After` said. */
export const MAX_DELAY_MS = 3_600_000;
/** A delivery still answered 429 this long after its first 429 is dead. */
export const RATE_LIMIT_GIVE_UP_MS = 24 * 3_600_000;
/**
 * Due records a pass reads, confirms and renders together. The digest decision (over `threshold`)
 * and its listing (`maxItems`) apply to one such chunk, so it must be larger than any threshold
 * and maxItems a config sets in practice: at 500, a threshold of 1,000 with 1,500 pending sent
 * 1,500 single messages, and maxItems 1,000 listed 500 per digest. Memory: a chunk is held twice
 * while it is confirmed (index read, then consistent read); 5,000 records of 5 KB items took about
 * 45 MB of heap for both copies (measured), well within the 512 MB the functions run with. A
 * config whose threshold is 5,000 or more gets single messages per chunk: a bound, not a loss.
 */
export const DEFAULT_CHUNK_SIZE = 5_000;

/** Minimum spacing between two messages to one destination. */
export function paceFor(destination: ResolvedDestination): number {
  return destination.type === 'slack' ? 1_000 : 0;
}

/** When to try again after a failed attempt number `attempts` (1-based); at most MAX_DELAY_MS. */
export function retryDelayMs(
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs))
    return Math.min(MAX_DELAY_MS, Math.max(0, retryAfterMs));
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * The ISO time `delayMs` after `now`, the delay bounded to [0, MAX_DELAY_MS]: a delay from the
 * outside (a header, a stored time) must never make an invalid Date, whose toISOString throws.
 */
export function retryAt(now: number, delayMs: number): string {
  const delay = Number.isFinite(delayMs) ? Math.min(MAX_DELAY_MS, Math.max(0, delayMs)) : 0;
  return new Date(now + delay).toISOString();
}

/**
 * How long to wait before the next send to keep `pace`. `lastSentAt` may come from another run on
 * a clock ahead of ours: the wait is never longer than the pace itself.
 */
export function paceWait(lastSentAt: number, pace: number, now: number): number {
  return Math.min(pace, Math.max(0, lastSentAt + pace - now));
}

/**
 * A pending record as the pass keeps it: with the time of its first 429, while it has one. The
 * store writes a pending record's fields as they are (deliveries.ts `toStored`), so the field
 * lives in the table; test/deliver/rate-limit.test.ts reads it back to hold that true.
 */

export interface DeliverDeps {
  deliveries: DeliveryStore;
  destinationState: DestinationStateStore;
  destinations: Map<string, ResolvedDestination>;
  /** Renders the due alerts of one destination into messages (lib/render). */
  render(destination: ResolvedDestination, alerts: DeliveryAlert[], now: Date): Rendered<Payload>[];
  renderNotice(destination: ResolvedDestination, notice: Notice, now: Date): Payload;
  /** Destinations that hear about a destination refusing for good. */
  opsDestinations: string[];
  /** The POST every send makes (post.ts). */
  post: HttpPost;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  owner: string;
  /** Where the console destination writes. */
  write(text: string): void;
  random?: () => number;
  sendTimeoutMs?: number;
  /** Test hook: called after a message was accepted and before it is recorded as sent. */
  checkpoint?(step: 'accepted', deliveryIds: string[]): void | Promise<void>;
}

export interface DeliveryPassOptions {
  /**
   * ms since the epoch: the last moment a send may start. A send started by then keeps its full
   * timeout, so the pass may end up to one send timeout (plus bookkeeping) after it.
   */
  deadline: number;
  /** Only these destinations (default all). */
  only?: string[];
  /** Due records read and rendered together (DEFAULT_CHUNK_SIZE); a digest covers at most one chunk. */
  chunkSize?: number;
}

export interface DestinationResult {
  destination: string;
  /**
   * `budget`: stopped at the deadline with deliveries left; `paused`: rate limited (now or by an
   * earlier run), nothing more is sent to it before `pausedUntil`.
   */
  status: 'done' | 'skipped' | 'budget' | 'paused' | 'lease_lost' | 'failed';
  messages: number;
  sent: number;
  retrying: number;
  dead: number;
  /** Due deliveries this pass left for the next (known when it stopped early). */
  left?: number;
  /** There may be more left than `left`: the pass had not read them all. */
  leftMore?: boolean;
  pausedUntil?: string;
  error?: string;
}

export interface DeliverySummary {
  destinations: DestinationResult[];
  sent: number;
  retrying: number;
  dead: number;
  /** Due deliveries left for the next pass by destinations that stopped early. */
  left: number;
}

/** Time kept after a send's timeout for recording its outcome and releasing the lease. */
export const SETTLE_MARGIN_MS = 2_000;

/**
 * The `deadline` to give a pass that must be over by `endBy` (a Lambda invocation's end, say):
 * room for one send's full timeout and its records after the last start.
 *
 * @example
 * runDeliveryPass(deps, { deadline: lastSendStart(deps, invocationEnd) })
 */
export function lastSendStart(deps: Pick<DeliverDeps, 'sendTimeoutMs'>, endBy: number): number {
  return endBy - (deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS) - SETTLE_MARGIN_MS;
}

/** A delivery record as the renderers take it. */
export function recordToAlert(record: DeliveryRecord): DeliveryAlert {
  return {
    kind: record.kind,
    key: record.key,
    source: record.source,
    item: record.item,
    deliveryId: record.id,
    destination: record.destination,
    routes: record.routes,
  } as DeliveryAlert;
}

export async function runDeliveryPass(
  deps: DeliverDeps,
  options: DeliveryPassOptions,
): Promise<DeliverySummary> {
  const names = [...deps.destinations.keys()].filter((n) => !options.only || options.only.includes(n));
  const results = await Promise.all(
    names.map((name) =>
      deliverTo(deps, deps.destinations.get(name) as ResolvedDestination, options).catch(
        (error: unknown): DestinationResult => {
          deps.logger.error('delivery to a destination failed', { destination: name, error });
          return {
            destination: name,
            status: 'failed',
            messages: 0,
            sent: 0,
            retrying: 0,
            dead: 0,
            error: String(error),
          };
        },
      ),
    ),
  );
  return {
    destinations: results,
    sent: results.reduce((n, r) => n + r.sent, 0),
    retrying: results.reduce((n, r) => n + r.retrying, 0),
    dead: results.reduce((n, r) => n + r.dead, 0),
    left: results.reduce((n, r) => n + (r.left ?? 0), 0),
  };
}

async function deliverTo(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  options: DeliveryPassOptions,
): Promise<DestinationResult> {
  const { clock } = deps;
  const log = deps.logger.child({ destination: destination.name });
  const result: DestinationResult = {
    destination: destination.name,
    status: 'done',
    messages: 0,
    sent: 0,
    retrying: 0,
    dead: 0,
  };
  const lease = await deps.destinationState.acquire(destination.name, deps.owner);
  if (!lease) {
    result.status = 'skipped';
    log.info('another run is delivering to this destination; skipping it');
    return result;
  }
  const alive = keepAlive(deps.destinationState.leases, lease, undefined, clock);
  const timeoutMs = deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const pace = paceFor(destination);
  let lastSentAt = lease.lastSentAt ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  try {
    if (await pausedAlready(deps, lease, result, log)) return result;
    // Ids already handled in this pass (sent, failed, or found not pending): each is tried at most once a pass.
    const handled = new Set<string>();
    while (result.status === 'done') {
      const read = await deps.deliveries.due(destination.name, chunkSize);
      // A full read may not be all that is due.
      const full = read.length >= chunkSize;
      const due = read.filter((r) => !handled.has(r.id));
      if (due.length === 0) break;
      // The index may lag behind the table: trust only what a consistent read still calls pending.
      const current = await deps.deliveries.getMany(due.map((r) => r.id));
      const live = due.flatMap((r) => {
        const now = current.get(r.id);
        return now && now.status === 'pending' ? [now] : [];
      });
      for (const r of due) handled.add(r.id);
      if (live.length === 0) continue;
      if (clock.now() > options.deadline) {
        stopEarly(result, 'budget', live.length, full);
        break;
      }
      const byId = new Map(live.map((r) => [r.id, r]));
      const queue = await renderSafely(deps, destination, live, log, byId);
      while (queue.length > 0) {
        const message = queue.shift() as Rendered<Payload>;
        const records = message.deliveryIds.flatMap((id) => byId.get(id) ?? []);
        if (records.length === 0) continue;
        if (
          records.length > 1 &&
          lease.tooLarge &&
          bodyBytes(destination, message, clock.now()) >= lease.tooLarge.bytes
        ) {
          // As big as a body this destination refused: split it now rather than after another 413.
          queue.unshift(...(await halves(deps, destination, records, log, byId)));
          continue;
        }
        const wait = paceWait(lastSentAt, pace, clock.now());
        // A send may start up to the deadline, not after: a wait that ends later ends the pass here.
        if (clock.now() + wait > options.deadline) {
          stopEarly(result, 'budget', pendingIn([message, ...queue], byId), full);
          break;
        }
        if (wait > 0) await clock.sleep(wait, alive.signal);
        const outcome = await send(destination, message.payload, message.deliveryIds, {
          post: deps.post,
          now: () => clock.now(),
          timeoutMs,
          signal: alive.signal,
          write: deps.write,
        });
        lastSentAt = clock.now();
        result.messages += 1;
        if (outcome.ok) await deps.checkpoint?.('accepted', message.deliveryIds);
        else if (outcome.tooLarge && records.length > 1) {
          // Too large is about this body, not its items: no attempt counted, the halves go instead.
          const bytes = bodyBytes(destination, message, clock.now());
          await deps.destinationState.noteTooLarge(lease, bytes, clock.now());
          log.info('destination refused a message as too large; splitting it', {
            status: outcome.status,
            bytes,
            deliveries: records.length,
          });
          queue.unshift(...(await halves(deps, destination, records, log, byId)));
          continue;
        }
        const paused = await settle(deps, destination, lease, records, outcome, result, log);
        if (paused) {
          // The rest waits for the pause, in the queue of every run: not sent, not touched.
          stopEarly(result, 'paused', pendingIn(queue, byId), full);
          result.pausedUntil = new Date(paused.until).toISOString();
          break;
        }
      }
    }
  } catch (error) {
    if (error instanceof LeaseLostError || alive.signal.reason instanceof LeaseLostError) {
      result.status = 'lease_lost';
      log.warn('the destination lease was lost; another run took over');
    } else {
      // A renewal that failed for another reason says so, rather than the abort it caused.
      throw alive.signal.reason instanceof LeaseRenewalError ? alive.signal.reason : error;
    }
  } finally {
    alive.stop();
    if (result.status !== 'lease_lost') await deps.destinationState.release(lease, lastSentAt || undefined);
  }
  return result;
}

/**
 * Renders all alerts. If that fails, finds the alerts that cannot be rendered on their own: they die
 * alone, recorded with the error, and the rest is rendered together again (so a digest stays a
 * digest); should that still fail, the rest goes one message per alert.
 */
async function renderSafely(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  records: DeliveryRecord[],
  log: Logger,
  byId: Map<string, DeliveryRecord>,
): Promise<Rendered<Payload>[]> {
  const now = new Date(deps.clock.now());
  const render = (batch: DeliveryRecord[]) => deps.render(destination, batch.map(recordToAlert), now);
  try {
    return render(records);
  } catch (error) {
    log.error('rendering a batch failed; looking for the alerts that cannot be rendered', { error });
  }
  const singles = new Map<string, Rendered<Payload>[]>();
  const unrenderable: DeliveryRecord[] = [];
  for (const record of records) {
    try {
      singles.set(record.id, render([record]));
    } catch (single) {
      record.status = 'dead';
      record.rateLimitedSince = undefined;
      record.lastError = `render failed: ${(single as Error)?.message ?? String(single)}`.slice(0, 500);
      byId.delete(record.id);
      unrenderable.push(record);
    }
  }
  if (unrenderable.length) {
    // Recorded before anything is sent, under the destination's lease, so none is retried forever.
    await deps.deliveries.save(unrenderable);
    deps.metrics.count('DeliveriesDead', unrenderable.length, { destination: destination.name });
    log.error('deliveries that cannot be rendered are dead', { deliveries: unrenderable.map((r) => r.id) });
  }
  const rest = records.filter((r) => singles.has(r.id));
  try {
    return rest.length ? render(rest) : [];
  } catch {
    return rest.flatMap((r) => singles.get(r.id) ?? []);
  }
}

/** Marks the pass as ended early for this destination, with what it leaves for the next. */
function stopEarly(result: DestinationResult, status: 'budget' | 'paused', left: number, more: boolean) {
  result.status = status;
  result.left = left;
  if (more) result.leftMore = true;
}

/** How many still-pending deliveries `messages` carry. */
function pendingIn(messages: readonly Rendered<Payload>[], byId: Map<string, DeliveryRecord>): number {
  const ids = new Set<string>();
  for (const m of messages)
    for (const id of m.deliveryIds) if (byId.get(id)?.status === 'pending') ids.add(id);
  return ids.size;
}

/** Bytes of the body a message is sent as (0 for the console, which has none). */
function bodyBytes(destination: ResolvedDestination, message: Rendered<Payload>, now: number): number {
  const request = buildRequest(destination, message.payload, message.deliveryIds, now);
  return request ? Buffer.byteLength(request.body) : 0;
}

/** The messages for each half of `records`, first half first. */
async function halves(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  records: DeliveryRecord[],
  log: Logger,
  byId: Map<string, DeliveryRecord>,
): Promise<Rendered<Payload>[]> {
  const middle = Math.ceil(records.length / 2);
  return [
    ...(await renderSafely(deps, destination, records.slice(0, middle), log, byId)),
    ...(await renderSafely(deps, destination, records.slice(middle), log, byId)),
  ];
}

/**
 * True (and the result says so) when an earlier pause of the destination still runs. A pause
 * written on a clock ahead of ours is restated on ours first, so it ends when it should here too.
 */
async function pausedAlready(
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
async function pauseDestination(
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

/**
 * Records the outcome of one message. Returns the pause when the destination is now paused (the
 * pass sends it nothing more), else undefined.
 */
async function settle(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  records: DeliveryRecord[],
  outcome: SendOutcome,
  result: DestinationResult,
  log: Logger,
): Promise<DestinationPause | undefined> {
  const now = deps.clock.now();
  const nowIso = new Date(now).toISOString();
  if (outcome.ok) {
    for (const r of records) {
      r.status = 'sent';
      r.sentAt = nowIso;
      r.attempts += 1;
      r.nextAttemptAt = undefined;
      r.lastError = undefined;
      r.rateLimitedSince = undefined;
    }
    await deps.deliveries.save(records);
    result.sent += records.length;
    deps.metrics.count('DeliveriesSent', records.length, { destination: destination.name });
    if (lease.refused) {
      log.info('destination accepts messages again', { previously: lease.refused.code });
      await deps.destinationState.clearRefused(lease);
    }
    await deps.destinationState.clearPause(lease);
    return undefined;
  }
  if (outcome.rateLimited) return rateLimited(deps, destination, lease, records, outcome, result, log);
  let dead = 0;
  for (const r of records) {
    r.attempts += 1;
    r.lastError = outcome.error.slice(0, 500);
    if (outcome.permanent || r.attempts >= MAX_ATTEMPTS) {
      r.status = 'dead';
      r.nextAttemptAt = undefined;
      // A re-queued delivery (deliveries retry) starts a new day of 429s, not the old one.
      r.rateLimitedSince = undefined;
      dead += 1;
    } else {
      r.nextAttemptAt = retryAt(now, retryDelayMs(r.attempts, outcome.retryAfterMs, deps.random));
    }
  }
  await deps.deliveries.save(records);
  result.dead += dead;
  result.retrying += records.length - dead;
  if (dead) deps.metrics.count('DeliveriesDead', dead, { destination: destination.name });
  if (records.length - dead)
    deps.metrics.count('DeliveriesFailed', records.length - dead, { destination: destination.name });
  log.warn(outcome.permanent ? 'destination refused the message; not retrying' : 'send failed; will retry', {
    status: outcome.status,
    error: outcome.error,
    deliveries: records.length,
    dead,
    nextAttemptAt: records.find((r) => r.status === 'pending')?.nextAttemptAt,
  });
  // One item too large says nothing of the destination: it is dead alone, without an ops report.
  if (
    outcome.permanent &&
    !outcome.tooLarge &&
    (await deps.destinationState.markRefused(
      lease,
      outcome.status ? `HTTP ${outcome.status}` : 'refused',
      new Date(now),
    ))
  ) {
    await reportRefusal(deps, destination, outcome, log);
  }
  // A server that said when to come back (a 5xx with Retry-After) gets nothing more before then.
  if (!outcome.permanent && outcome.retryAfterMs !== undefined)
    return pauseDestination(deps, lease, now, outcome.retryAfterMs);
  return undefined;
}

/**
 * A 429: the destination is paused for every run, and the message's deliveries wait for the end
 * of the pause without an attempt counted, unless they have been refused 429 for a day since
 * their first: then they are dead, reported like any other.
 */
async function rateLimited(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  records: DeliveryRecord[],
  outcome: SendOutcome & { ok: false },
  result: DestinationResult,
  log: Logger,
): Promise<DestinationPause> {
  const now = deps.clock.now();
  const pause = await pauseDestination(deps, lease, now, outcome.retryAfterMs);
  let dead = 0;
  for (const r of records) {
    const since = Date.parse(r.rateLimitedSince ?? '');
    if (!Number.isFinite(since)) r.rateLimitedSince = new Date(now).toISOString();
    if (Number.isFinite(since) && now - since >= RATE_LIMIT_GIVE_UP_MS) {
      r.status = 'dead';
      r.nextAttemptAt = undefined;
      r.rateLimitedSince = undefined;
      r.lastError = `${outcome.error.slice(0, 400)} (still rate limited 24 h after the first 429; giving up)`;
      dead += 1;
    } else {
      r.nextAttemptAt = new Date(pause.until).toISOString();
      r.lastError = outcome.error.slice(0, 500);
    }
  }
  await deps.deliveries.save(records);
  result.dead += dead;
  result.retrying += records.length - dead;
  if (dead) deps.metrics.count('DeliveriesDead', dead, { destination: destination.name });
  if (records.length - dead)
    deps.metrics.count('DeliveriesFailed', records.length - dead, { destination: destination.name });
  log.warn('destination rate limited; paused for every run, the 429 costs no attempt', {
    status: outcome.status,
    error: outcome.error,
    until: new Date(pause.until).toISOString(),
    pauses: pause.count,
    deliveries: records.length,
    dead,
  });
  return pause;
}

/** Tells operators, once, that a destination refuses for good. */
async function reportRefusal(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  outcome: SendOutcome & { ok: false },
  log: Logger,
) {
  deps.metrics.count('DestinationRefused', 1, { destination: destination.name });
  log.error(
    'destination refuses permanently; its deliveries are dead until it is fixed and they are retried',
    {
      status: outcome.status,
      error: outcome.error,
      hint: `fix the destination, then: exposure-alerts deliveries retry --all-dead`,
    },
  );
  const notice: Notice = {
    kind: 'ops',
    // No product name here: each renderer puts it where its kind of message shows it (notice.ts).
    title: `destination "${destination.name}" refuses deliveries`,
    text: `Destination "${destination.name}" (${destination.type}) answered ${outcome.error}. Its deliveries are marked dead and will not be retried. Fix the destination, then run: exposure-alerts deliveries retry --all-dead`,
  };
  for (const name of deps.opsDestinations) {
    const ops = deps.destinations.get(name);
    if (!ops || name === destination.name) continue;
    try {
      const payload = deps.renderNotice(ops, notice, new Date(deps.clock.now()));
      const sent = await send(ops, payload, [], {
        post: deps.post,
        now: () => deps.clock.now(),
        timeoutMs: deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
        write: deps.write,
      });
      if (!sent.ok) log.error('could not notify the ops destination', { ops: name, error: sent.error });
    } catch (error) {
      log.error('could not notify the ops destination', { ops: name, error });
    }
  }
}
