/**
 * Sending what a pass rendered for one destination: each message at the destination's pace, its
 * outcome recorded (settle.ts), a message too large split in halves, a digest to a Slack app sent
 * as a thread (thread.ts), and the stop at the deadline or a pause. The pass (pass.ts) reads,
 * confirms and renders; this sends.
 */
import { kindOf } from '../destinations/kinds.ts';
import type { Logger } from '../log.ts';
import type { Rendered } from '../render/types.ts';
import type { DestinationLease } from '../state/destinations.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ThreadStore } from '../state/threads.ts';
import type { ResolvedDestination } from './destinations.ts';
import { bodyBytes, halves } from './messages.ts';
import type { SendOutcome } from './outcome.ts';
import { paceFor, paceWait } from './pace.ts';
import { type Payload, type SendContext, send, sendContext } from './senders.ts';
import { settle } from './settle.ts';
import { sendThread, type ThreadSend } from './thread.ts';
import type { DeliverDeps, DeliveryPassOptions, DestinationResult } from './types.ts';

/** What one destination's pass carries from message to message. */
export interface PassState {
  deps: DeliverDeps;
  destination: ResolvedDestination;
  lease: DestinationLease;
  result: DestinationResult;
  log: Logger;
  options: DeliveryPassOptions;
  ctx: SendContext;
  pace: number;
  /** When the last message went (the pace runs from it; the lease keeps it for the next run). */
  lastSentAt: number;
  /** Not before then: the destination said its rate was spent (an acceptance's `holdMs`). */
  holdUntil?: number;
  signal: AbortSignal;
  /** Its kind sends digests as threads (thread.ts); undefined for every other destination. */
  threads?: ThreadSend & { threads: ThreadStore };
}

export function passState(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  lease: DestinationLease,
  result: DestinationResult,
  log: Logger,
  options: DeliveryPassOptions,
  signal: AbortSignal,
): PassState {
  const state: PassState = {
    deps,
    destination,
    lease,
    result,
    log,
    options,
    ctx: sendContext(deps, signal),
    pace: paceFor(destination),
    lastSentAt: lease.lastSentAt ?? 0,
    signal,
  };
  if (kindOf(destination.type).threads?.(destination)) {
    state.threads = {
      destination,
      threads: deps.threads,
      ctx: state.ctx,
      turn: () => takeTurn(state),
      sent: () => noteSent(state),
      checkpoint: deps.threadCheckpoint,
    };
  }
  return state;
}

/**
 * Waits for the destination's pace before a message. False, without waiting, when the wait would
 * end past the deadline: the message is left for the next pass.
 */
export async function takeTurn(state: PassState): Promise<boolean> {
  const { clock } = state.deps;
  const wait = turnWait(state, clock.now());
  if (clock.now() + wait > state.options.deadline) return false;
  if (wait > 0) await clock.sleep(wait, state.signal);
  return true;
}

/** The wait for the next message: the pace, or longer when the destination asked for more. */
function turnWait(state: PassState, now: number): number {
  return Math.max(paceWait(state.lastSentAt, state.pace, now), (state.holdUntil ?? 0) - now);
}

/** Notes that a message went: the pace runs from now. */
export function noteSent(state: PassState): void {
  state.lastSentAt = state.deps.clock.now();
  state.result.messages += 1;
}

/**
 * Sends `queue` (rendered from the records of `byId`) at the destination's pace, records each
 * outcome, splits what is too large, and stops at the deadline or a pause: 'stop' then.
 */
export async function sendAll(
  state: PassState,
  queue: Rendered<Payload>[],
  byId: Map<string, DeliveryRecord>,
  full: boolean,
): Promise<'stop' | 'go'> {
  const { deps, destination, lease, result, log, options } = state;
  const { clock } = deps;
  const chunk = { deps, destination, log, byId };
  const paused = async (records: DeliveryRecord[], outcome: SendOutcome): Promise<boolean> => {
    const pause = await settle(deps, destination, lease, records, outcome, result, log);
    if (!pause) return false;
    // The rest waits for the pause, in the queue of every run: not sent, not touched.
    stopEarly(result, 'paused', pendingIn(queue, byId), full);
    result.pausedUntil = new Date(pause.until).toISOString();
    return true;
  };
  while (queue.length > 0) {
    const message = queue.shift() as Rendered<Payload>;
    const records = message.deliveryIds.flatMap((id) => byId.get(id) ?? []);
    if (records.length === 0) continue;
    if (message.thread && state.threads) {
      const out = await sendThread(state.threads, message);
      if ('budget' in out) {
        stopEarly(result, 'budget', pendingIn([message, ...queue], byId), full);
        return 'stop';
      }
      if (out.ok) {
        await deps.checkpoint?.('accepted', message.deliveryIds);
        await settle(deps, destination, lease, records, { ok: true, posted: out.posted }, result, log);
        await state.threads.threads.finish(destination.name, out.key);
        continue;
      }
      if (out.outcome.tooLarge && out.parentRefused && records.length > 1) {
        // A parent too long for Slack: each half of the digest is a thread of its own.
        queue.unshift(...(await halves(chunk, records)));
        continue;
      }
      if (await paused(records, out.outcome)) return 'stop';
      continue;
    }
    if (
      records.length > 1 &&
      lease.tooLarge &&
      (await bodyBytes(destination, message, clock.now())) >= lease.tooLarge.bytes
    ) {
      // As big as a body this destination refused: split it now rather than after another 413.
      queue.unshift(...(await halves(chunk, records)));
      continue;
    }
    const wait = turnWait(state, clock.now());
    // A send may start up to the deadline, not after: a wait that ends later ends the pass here.
    if (clock.now() + wait > options.deadline) {
      stopEarly(result, 'budget', pendingIn([message, ...queue], byId), full);
      return 'stop';
    }
    if (wait > 0) await clock.sleep(wait, state.signal);
    // Loaded only by a pass that sends to a ticket destination.
    const tickets = ticketing(destination) ? await import('./tickets.ts') : undefined;
    if (tickets && ticketing(destination)) {
      // No duplicate ticket: a create of unknown outcome waits, then searches (tickets.ts).
      const gate = await tickets.beforeTicket(deps, destination, message, records, state.ctx);
      if ('wait' in gate || 'released' in gate) continue;
      if ('found' in gate) {
        await settle(deps, destination, lease, records, { ok: true, ticket: gate.found }, result, log);
        continue;
      }
    }
    const outcome = await send(destination, message.payload, message.deliveryIds, state.ctx);
    state.lastSentAt = clock.now();
    result.messages += 1;
    if (outcome.ok && outcome.holdMs) state.holdUntil = state.lastSentAt + outcome.holdMs;
    if (outcome.ok) await deps.checkpoint?.('accepted', message.deliveryIds);
    else if (outcome.tooLarge && records.length > 1) {
      // Too large is about this body, not its items: no attempt counted, the halves go instead.
      const bytes = await bodyBytes(destination, message, clock.now());
      await deps.destinationState.noteTooLarge(lease, bytes, clock.now());
      // Refused, so not created: the halves are tickets of their own (tickets.ts).
      const unmarked = tickets ? tickets.afterTicket(records, outcome) : [];
      if (unmarked.length) await deps.deliveries.save(unmarked);
      log.info('destination refused a message as too large; splitting it', {
        status: outcome.status,
        bytes,
        deliveries: records.length,
      });
      queue.unshift(...(await halves(chunk, records)));
      continue;
    }
    const stop = await paused(records, outcome);
    if (tickets) {
      const again = tickets.afterTicket(records, outcome);
      if (again.length) await deps.deliveries.save(again);
    }
    if (stop) return 'stop';
  }
  return 'go';
}

const ticketing = (destination: ResolvedDestination) => kindOf(destination.type).tickets !== undefined;

/** Marks the pass as ended early for this destination, with what it leaves for the next. */
export function stopEarly(
  result: DestinationResult,
  status: 'budget' | 'paused',
  left: number,
  more: boolean,
) {
  result.status = status;
  result.left = left;
  if (more) result.leftMore = true;
}

/** How many still-pending deliveries `messages` carry. */
export function pendingIn(messages: readonly Rendered<Payload>[], byId: Map<string, DeliveryRecord>): number {
  const ids = new Set<string>();
  for (const m of messages)
    for (const id of m.deliveryIds) if (byId.get(id)?.status === 'pending') ids.add(id);
  return ids.size;
}
