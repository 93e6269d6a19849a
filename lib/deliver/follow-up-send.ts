/**
 * Sending follow-ups (follow-up.ts makes their records), in the delivery pass, one at a time at
 * the destination's pace, each outcome recorded as any delivery's (settle.ts). What a follow-up is
 * depends on the kind (its body's `followUp`: a Slack app edits its message and replies in its
 * thread, PagerDuty resolves the incident, a webhook gets an `action` body, a ticket a note); this
 * gives it the record, the item, the pace and the store, and knows no kind.
 */

import type { FollowUpSend } from '../destinations/kind.ts';
import { bodyOf } from '../destinations/kinds.ts';
import { type DeliveryRecord, deliveryId } from '../state/records/record.ts';
import { recordToAlert } from './messages.ts';
import type { SendOutcome } from './outcome.ts';
import { noteSent, type PassState, stopEarly, takeTurn } from './queue.ts';
import { send, sendRequest } from './senders.ts';
import { settle } from './settle.ts';

/**
 * Sends due follow-ups of one destination, each at the destination's pace, and records each
 * outcome as any delivery's (settle.ts). 'stop' when the deadline or a pause ended the pass.
 */
export async function sendFollowUps(
  state: PassState,
  records: readonly DeliveryRecord[],
  full: boolean,
): Promise<'stop' | 'go'> {
  const { deps, destination, lease, result, log } = state;
  for (const [i, record] of records.entries()) {
    const outcome = await sendOne(state, record);
    if (outcome === 'budget') {
      stopEarly(result, 'budget', records.length - i, full);
      return 'stop';
    }
    const pause = await settle(deps, destination, lease, [record], outcome, result, log);
    if (pause) {
      stopEarly(result, 'paused', records.length - i - 1, full);
      result.pausedUntil = new Date(pause.until).toISOString();
      return 'stop';
    }
  }
  return 'go';
}

async function sendOne(state: PassState, record: DeliveryRecord): Promise<SendOutcome | 'budget'> {
  const { deps, destination, ctx, log } = state;
  const action = record.followUp?.action;
  if (!action) return { ok: false, permanent: true, error: 'not a follow-up' };
  const body = await bodyOf(destination);
  if (!body.followUp) return { ok: false, permanent: true, error: `${destination.type} takes no follow-ups` };
  /** One message at the destination's pace: 'budget' when no turn comes in time. */
  const paced = async (sending: () => Promise<SendOutcome>): Promise<SendOutcome | 'budget'> => {
    if (!(await takeTurn(state))) return 'budget';
    try {
      return await sending();
    } finally {
      noteSent(state);
    }
  };
  const f: FollowUpSend<unknown> = {
    record,
    action,
    alert: recordToAlert(record, deps.tenantOf),
    opts: deps.renderOptions(destination, new Date(deps.clock.now())),
    ctx,
    log,
    send: (payload) => paced(() => send(destination, payload, [record.id], ctx)),
    request: (request) => paced(() => sendRequest(destination, request, ctx)),
    turn: () => takeTurn(state),
    sent: () => noteSent(state),
    save: () => deps.deliveries.save([record]),
    ownTicket: () => ownTicket(state, record),
  };
  return body.followUp(destination, f);
}

/**
 * Whether the ticket of `record` is its item's own (lists no other item), as the item's delivery
 * record says; an item whose record is gone counts as shared, so nothing closes a digest's ticket.
 */
async function ownTicket(state: PassState, record: DeliveryRecord): Promise<boolean> {
  if (record.inDigest) return false;
  const id = deliveryId(record.destination, record.kind, record.key);
  const sent = (await state.deps.deliveries.getMany([id])).get(id);
  return sent !== undefined && !sent.inDigest && sent.ticket === record.ticket;
}
