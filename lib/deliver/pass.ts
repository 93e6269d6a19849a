/**
 * The delivery pass: for every destination at once, take its lease, read the pending deliveries
 * that are due (from the sparse index, then confirmed with a consistent read, since an index can
 * lag), render them (digests over the threshold; messages.ts), send at the destination's pace
 * (queue.ts), and record the outcome (settle.ts): sent, retry later, or dead, by the rule in
 * retry.ts. A Slack app's digest a crash left half posted as a thread is resumed first, with
 * exactly its records (thread.ts).
 *
 * - Rate limits: a 429 (which costs no attempt), or a 5xx with `Retry-After` (which counts one),
 *   pauses the destination for every run (pause.ts), and the pass sends it nothing more meanwhile.
 * - Too large: a message of several items answered 413 is split in halves, and the halves are sent
 *   (now, or by the next pass, which splits any body as big as one refused before sending it), down
 *   to one item; a single item answered 413 is dead.
 * - Time: `deadline` is the last moment a send may start. A send in flight keeps its full timeout
 *   (cutting it short could deliver it and still record a failure: a duplicate next time). The pace
 *   wait never exceeds the pace, whatever `lastSentAt` another run's clock wrote. A `stop` (Ctrl-C)
 *   is the deadline come early: the send in flight is recorded, no other starts (the CLI waits 3 s
 *   for it, then stops as a crash would, naming the destination: cli/run.ts).
 *
 * - Silences: the pass reads the active ones once, at its start; a due delivery one of them matches
 *   is recorded silenced instead of sent (hold.ts). A follow-up (news of an action on an item that
 *   was sent) is never held: it is sent first, alone (follow-up.ts).
 *
 * A destination that refuses permanently is reported to operators once (notify.ts), until a later
 * send succeeds. A slow or dead destination holds up nobody: each has its own lease and loop, and
 * every request has a timeout.
 *
 * What sends (rendering, the queue, settling, threads, holds) is loaded with the first message due,
 * silence to apply, pause or thread (sending.ts): most passes only read, and load none of it.
 */

import { kindOf } from '../destinations/kinds.ts';
import { lazily } from '../lazy.ts';
import type { Holding } from '../rules/silences.ts';
import { pauseLeft } from '../state/destinations.ts';
import { keepAlive, LeaseLostError, LeaseRenewalError } from '../state/lease.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { PassState } from './queue.ts';
import { sendTimeoutMs } from './send-timeout.ts';
import type { DeliverDeps, DeliveryPassOptions, DeliverySummary, DestinationResult } from './types.ts';

/** The send path (sending.ts), loaded when a pass first has more to do than read. */
const sending = lazily("the delivery pass's send path (deliver/sending.ts)", () => import('./sending.ts'));

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

/**
 * The options with `stop` folded into the deadline: once stopped, every check of the deadline
 * (here, in queue.ts and follow-up-send.ts) sees it passed, so the pass ends at the same safe
 * points, between sends.
 */
function withStop(options: DeliveryPassOptions): DeliveryPassOptions {
  const { stop } = options;
  if (!stop) return options;
  const deadline = options.deadline;
  return {
    ...options,
    get deadline() {
      return stop.aborted ? Number.NEGATIVE_INFINITY : deadline;
    },
  };
}

export async function runDeliveryPass(
  deps: DeliverDeps,
  given: DeliveryPassOptions,
): Promise<DeliverySummary> {
  const options = withStop(given);
  const names = [...deps.destinations.keys()].filter((n) => !options.only || options.only.includes(n));
  // An action a crash interrupted is finished first: its follow-ups are due in this pass.
  if (deps.finishActions && !options.only)
    await deps.finishActions(options.deadline).catch((error: unknown) => {
      deps.logger.warn('could not finish interrupted actions; the next pass tries again', { error });
    });
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
  // Made with the send path, when there is first something to send.
  let state: PassState | undefined;
  const sender = async () => {
    const send = await sending();
    state ??= send.passState(deps, destination, lease, result, log, options, alive.signal);
    return { send, state };
  };
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  try {
    // Before anything is sent, and even while the destination is paused: a silence holds back
    // every matching delivery that waits for a retry, not only those due now (hold.ts).
    if (silences.length) await (await sending()).holdWaiting(deps, destination.name, silences, result, log);
    if (
      pauseLeft(lease.pause, clock.now()) > 0 &&
      (await (await sending()).pausedAlready(deps, lease, result, log))
    )
      return result;
    // Ids already handled in this pass (sent, failed, or found not pending): each is tried at most once a pass.
    const handled = new Set<string>();
    // A digest a crash left half posted as a Slack thread goes on first, with exactly its records.
    if (kindOf(destination.type).threads?.(destination)) {
      const { send, state } = await sender();
      const { resume } = state.threads
        ? await send.openThreads(state.threads.threads, destination.name, (ids) =>
            deps.deliveries.getMany(ids),
          )
        : { resume: [] };
      for (const records of resume) {
        for (const r of records) handled.add(r.id);
        const byId = new Map(records.map((r) => [r.id, r]));
        if (
          (await send.sendAll(
            state,
            await send.renderSafely({ deps, destination, log, byId }, records),
            byId,
            false,
          )) === 'stop'
        )
          break;
      }
    }
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
      if (pending.length === 0) continue;
      const { send, state } = await sender();
      // What a silence holds back is recorded silenced, never sent (hold.ts).
      const { held, rest: live } = send.holdBack(pending, silences, clock.now(), deps.tenantOf);
      if (held.length) {
        await deps.deliveries.save(held);
        result.silenced = (result.silenced ?? 0) + held.length;
        log.info('deliveries held back by a silence', { deliveries: held.length });
      }
      if (live.length === 0) continue;
      if (clock.now() > options.deadline) {
        send.stopEarly(result, 'budget', live.length, full);
        break;
      }
      // Follow-ups first: someone just acted and is looking at the message (follow-up.ts).
      const followUps = live.filter((r) => r.followUp);
      // Loaded when there are follow-ups to send: most passes have none.
      if (followUps.length) {
        const { sendFollowUps } = await import('./follow-up-send.ts');
        if ((await sendFollowUps(state, followUps, full)) === 'stop') break;
      }
      const alerts = live.filter((r) => !r.followUp);
      if (alerts.length === 0) continue;
      const byId = new Map(alerts.map((r) => [r.id, r]));
      const messages = await send.renderSafely({ deps, destination, log, byId }, alerts);
      if ((await send.sendAll(state, messages, byId, full)) === 'stop') break;
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
    if (result.status !== 'lease_lost')
      await deps.destinationState.release(lease, (state?.lastSentAt ?? lease.lastSentAt) || undefined);
  }
  return result;
}
