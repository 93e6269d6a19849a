/**
 * The delivery pass: for every destination at once, take its lease, read the pending deliveries
 * that are due (from the sparse index, then confirmed with a consistent read, since an index can
 * lag), render them (digests over the threshold; messages.ts), send at the destination's pace, and
 * record the outcome (settle.ts): sent, retry later, or dead, by the rule in retry.ts.
 *
 * - Rate limits: a 429 (which costs no attempt), or a 5xx with `Retry-After` (which counts one),
 *   pauses the destination for every run (pause.ts), and the pass sends it nothing more meanwhile.
 * - Too large: a message of several items answered 413 is split in halves, and the halves are sent
 *   (now, or by the next pass, which splits any body as big as one refused before sending it), down
 *   to one item; a single item answered 413 is dead.
 * - Time: `deadline` is the last moment a send may start. A send in flight keeps its full timeout
 *   (cutting it short could deliver it and still record a failure: a duplicate next time). The pace
 *   wait never exceeds the pace, whatever `lastSentAt` another run's clock wrote.
 *
 * - Silences: the pass reads the active ones once, at its start; a due delivery one of them matches
 *   is recorded silenced instead of sent (hold.ts).
 *
 * A destination that refuses permanently is reported to operators once (notify.ts), until a later
 * send succeeds. A slow or dead destination holds up nobody: each has its own lease and loop, and
 * every request has a timeout.
 */

import type { Rendered } from '../render/types.ts';
import type { Holding } from '../rules/silences.ts';
import { keepAlive, LeaseLostError, LeaseRenewalError } from '../state/lease.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import { holdBack, holdWaiting } from './hold.ts';
import { bodyBytes, halves, renderSafely } from './messages.ts';
import { pausedAlready } from './pause.ts';
import { type Payload, send, sendContext, sendTimeoutMs } from './senders.ts';
import { settle } from './settle.ts';
import type { DeliverDeps, DeliveryPassOptions, DeliverySummary, DestinationResult } from './types.ts';

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

/**
 * Minimum spacing between two messages to one destination: Slack and Teams take about one a second
 * per URL, PagerDuty 120 events a minute per routing key (destinations-facts.md). Destinations that
 * share a Teams URL or a routing key each keep that many times the spacing, so together they keep
 * within the one limit. The spacing runs from the end of one send to the start of the next.
 */
export function paceFor(destination: ResolvedDestination): number {
  switch (destination.type) {
    case 'slack':
      return 1_000;
    case 'teams':
      return 1_000 * destination.sharing;
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
  return endBy - sendTimeoutMs(deps) - SETTLE_MARGIN_MS;
}

export async function runDeliveryPass(
  deps: DeliverDeps,
  options: DeliveryPassOptions,
): Promise<DeliverySummary> {
  const names = [...deps.destinations.keys()].filter((n) => !options.only || options.only.includes(n));
  // Once, at the start: a silence made or ended during the pass counts from the next one.
  const silences = names.length ? ((await deps.silences?.active()) ?? []) : [];
  const results = await Promise.all(
    names.map((name) =>
      deliverTo(deps, deps.destinations.get(name) as ResolvedDestination, options, silences).catch(
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
  silences: readonly Holding[],
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
  const ctx = sendContext(deps, alive.signal);
  const pace = paceFor(destination);
  let lastSentAt = lease.lastSentAt ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  try {
    // Before anything is sent, and even while the destination is paused: a silence holds back
    // every matching delivery that waits for a retry, not only those due now (hold.ts).
    if (silences.length) await holdWaiting(deps, destination.name, silences, result, log);
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
      const pending = due.flatMap((r) => {
        const now = current.get(r.id);
        return now && now.status === 'pending' ? [now] : [];
      });
      for (const r of due) handled.add(r.id);
      // What a silence holds back is recorded silenced, never sent (hold.ts).
      const { held, rest: live } = holdBack(pending, silences, clock.now());
      if (held.length) {
        await deps.deliveries.save(held);
        result.silenced = (result.silenced ?? 0) + held.length;
        log.info('deliveries held back by a silence', { deliveries: held.length });
      }
      if (live.length === 0) continue;
      if (clock.now() > options.deadline) {
        stopEarly(result, 'budget', live.length, full);
        break;
      }
      const byId = new Map(live.map((r) => [r.id, r]));
      const chunk = { deps, destination, log, byId };
      const queue = await renderSafely(chunk, live);
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
          queue.unshift(...(await halves(chunk, records)));
          continue;
        }
        const wait = paceWait(lastSentAt, pace, clock.now());
        // A send may start up to the deadline, not after: a wait that ends later ends the pass here.
        if (clock.now() + wait > options.deadline) {
          stopEarly(result, 'budget', pendingIn([message, ...queue], byId), full);
          break;
        }
        if (wait > 0) await clock.sleep(wait, alive.signal);
        const outcome = await send(destination, message.payload, message.deliveryIds, ctx);
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
          queue.unshift(...(await halves(chunk, records)));
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
