/**
 * The delivery pass: for every destination at once, take its lease, read the pending deliveries
 * that are due (from the sparse index, then confirmed with a consistent read, since an index can
 * lag), render them (digests over the threshold), send at the destination's pace, and record the
 * outcome: sent, retry later (exponential backoff with jitter from 1 s to 5 min, or exactly the
 * `Retry-After` the destination asked for), or dead after 8 attempts or a permanent refusal.
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
import type { DestinationLease, DestinationStateStore } from '../state/destinations.ts';
import { keepAlive, LeaseLostError } from '../state/lease.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { HttpPost } from './post.ts';
import { DEFAULT_SEND_TIMEOUT_MS, type Payload, type SendOutcome, send } from './senders.ts';

export const MAX_ATTEMPTS = 8;
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 300_000;
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

/** When to try again after a failed attempt number `attempts` (1-based). */
export function retryDelayMs(
  attempts: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.max(0, retryAfterMs);
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

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
  fetch: HttpPost;
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
  /** ms since the epoch; no send starts unless it can finish (timeout) before it. */
  deadline: number;
  /** Only these destinations (default all). */
  only?: string[];
  /** Due records read and rendered together (DEFAULT_CHUNK_SIZE); a digest covers at most one chunk. */
  chunkSize?: number;
}

export interface DestinationResult {
  destination: string;
  status: 'done' | 'skipped' | 'budget' | 'lease_lost' | 'failed';
  messages: number;
  sent: number;
  retrying: number;
  dead: number;
  error?: string;
}

export interface DeliverySummary {
  destinations: DestinationResult[];
  sent: number;
  retrying: number;
  dead: number;
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
  const alive = keepAlive(deps.destinationState.leases, lease);
  const timeoutMs = deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const pace = paceFor(destination);
  let lastSentAt = lease.lastSentAt ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const timeLeft = () => options.deadline - clock.now() > timeoutMs + pace;
  try {
    // Ids already handled in this pass (sent, failed, or found not pending): each is tried at most once a pass.
    const handled = new Set<string>();
    while (timeLeft()) {
      const due = (await deps.deliveries.due(destination.name, chunkSize)).filter((r) => !handled.has(r.id));
      if (due.length === 0) break;
      // The index may lag behind the table: trust only what a consistent read still calls pending.
      const current = await deps.deliveries.getMany(due.map((r) => r.id));
      const live = due.flatMap((r) => {
        const now = current.get(r.id);
        return now && now.status === 'pending' ? [now] : [];
      });
      for (const r of due) handled.add(r.id);
      if (live.length === 0) continue;
      const byId = new Map(live.map((r) => [r.id, r]));
      const messages = await renderSafely(deps, destination, live, log, byId);
      for (const message of messages) {
        if (!timeLeft()) {
          result.status = 'budget';
          break;
        }
        const records = message.deliveryIds.flatMap((id) => byId.get(id) ?? []);
        if (records.length === 0) continue;
        const wait = lastSentAt + pace - clock.now();
        if (wait > 0) await clock.sleep(wait, alive.signal);
        const outcome = await send(destination, message.payload, message.deliveryIds, {
          fetch: deps.fetch,
          now: () => clock.now(),
          timeoutMs,
          signal: alive.signal,
          write: deps.write,
        });
        lastSentAt = clock.now();
        result.messages += 1;
        if (outcome.ok) await deps.checkpoint?.('accepted', message.deliveryIds);
        await settle(deps, destination, lease, records, outcome, result, log);
      }
      if (result.status === 'budget') break;
    }
    if (result.status === 'done' && !timeLeft()) result.status = 'budget';
  } catch (error) {
    if (error instanceof LeaseLostError || alive.signal.reason instanceof LeaseLostError) {
      result.status = 'lease_lost';
      log.warn('the destination lease was lost; another run took over');
    } else {
      throw error;
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

async function settle(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  records: DeliveryRecord[],
  outcome: SendOutcome,
  result: DestinationResult,
  log: Logger,
): Promise<void> {
  const now = deps.clock.now();
  const nowIso = new Date(now).toISOString();
  if (outcome.ok) {
    for (const r of records) {
      r.status = 'sent';
      r.sentAt = nowIso;
      r.attempts += 1;
      r.nextAttemptAt = undefined;
      r.lastError = undefined;
    }
    await deps.deliveries.save(records);
    result.sent += records.length;
    deps.metrics.count('DeliveriesSent', records.length, { destination: destination.name });
    if (lease.refused) {
      log.info('destination accepts messages again', { previously: lease.refused.code });
      await deps.destinationState.clearRefused(lease);
    }
    return;
  }
  let dead = 0;
  for (const r of records) {
    r.attempts += 1;
    r.lastError = outcome.error.slice(0, 500);
    if (outcome.permanent || r.attempts >= MAX_ATTEMPTS) {
      r.status = 'dead';
      r.nextAttemptAt = undefined;
      dead += 1;
    } else {
      r.nextAttemptAt = new Date(
        now + retryDelayMs(r.attempts, outcome.retryAfterMs, deps.random),
      ).toISOString();
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
  if (
    outcome.permanent &&
    (await deps.destinationState.markRefused(
      lease,
      outcome.status ? `HTTP ${outcome.status}` : 'refused',
      new Date(now),
    ))
  ) {
    await reportRefusal(deps, destination, outcome, log);
  }
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
    title: `exposure-alerts: destination "${destination.name}" refuses deliveries`,
    text: `Destination "${destination.name}" (${destination.type}) answered ${outcome.error}. Its deliveries are marked dead and will not be retried. Fix the destination, then run: exposure-alerts deliveries retry --all-dead`,
  };
  for (const name of deps.opsDestinations) {
    const ops = deps.destinations.get(name);
    if (!ops || name === destination.name) continue;
    try {
      const payload = deps.renderNotice(ops, notice, new Date(deps.clock.now()));
      const sent = await send(ops, payload, [], {
        fetch: deps.fetch,
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
