/**
 * Sending follow-ups (follow-up.ts makes their records), in the delivery pass, one at a time at
 * the destination's pace, each outcome recorded as any delivery's (settle.ts):
 * - a Slack app: `chat.update` of the item's own message (not of a digest's parent), written down
 *   once done, then the reply in its thread; a message too old to edit gets the reply alone, a
 *   deleted one gets it in the channel;
 * - PagerDuty: the resolve of `event:<uid>`;
 * - a webhook: the signed body of kind `action`;
 * - Jira and ServiceNow: a comment (a work note); on a ticket that lists several items it names the
 *   item, and only an item's own issue goes through `doneTransition`.
 */

import { postMessage, UNEDITABLE_SLACK_ERRORS, updateMessage } from '../destinations/slack/app.ts';
import { RESOLVING_ACTIONS } from '../model.ts';
import { type DeliveryRecord, deliveryId } from '../state/records/record.ts';
import { recordToAlert } from './messages.ts';
import type { SendOutcome } from './outcome.ts';
import { noteSent, type PassState, stopEarly, takeTurn } from './queue.ts';
import { readAs, send, sendRequest } from './senders.ts';
import { settle } from './settle.ts';

/** A thread reply refused because its parent is gone (deleted): the reply goes in the channel. */
const NO_THREAD: ReadonlySet<string> = new Set(['thread_not_found', 'message_not_found']);

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
  const now = new Date(deps.clock.now());
  const alert = recordToAlert(record, deps.tenantOf);
  const opts = deps.renderOptions(destination, now);
  // Loaded when a follow-up is first sent: a function that never sends one never loads it.
  const { pagerDutyResolve, slackFollowUp, webhookAction } = await import('../render/follow-up.ts');
  if (destination.type === 'slack' && destination.app) {
    const { app } = destination;
    const posted = record.posted;
    const { edit, reply } = slackFollowUp(alert, action, opts);
    if (posted && !posted.digest && !record.followUp?.edited && record.item) {
      if (!(await takeTurn(state))) return 'budget';
      const edited = await sendRequest(destination, updateMessage(app, posted, edit), ctx);
      noteSent(state);
      if (edited.ok) {
        record.followUp = { action, edited: true };
        await deps.deliveries.save([record]);
      } else if (!UNEDITABLE_SLACK_ERRORS.has(edited.error.replace(/^slack /, ''))) {
        return edited;
      } else {
        // Over for good: a retry of the reply does not try the edit again.
        record.followUp = { action, edited: true };
        log.info('the message is gone or too old to edit; the follow-up is a thread reply alone', {
          error: edited.error,
          delivery: record.id,
        });
      }
    }
    if (!(await takeTurn(state))) return 'budget';
    let replied = await sendRequest(destination, postMessage(app, reply, posted), ctx);
    noteSent(state);
    if (!replied.ok && posted && NO_THREAD.has(replied.error.replace(/^slack /, ''))) {
      // The message it would reply to is gone: the news goes in the channel itself.
      log.info('the message to reply to is gone; the follow-up goes in the channel', {
        error: replied.error,
        delivery: record.id,
      });
      if (!(await takeTurn(state))) return 'budget';
      replied = await sendRequest(destination, postMessage(app, reply), ctx);
      noteSent(state);
    }
    // The follow-up's record keeps the place of the message it followed up, not of its reply.
    return replied.ok ? { ok: true, status: replied.status } : replied;
  }
  if (destination.type === 'jira') return jiraFollowUp(state, record, action);
  if (destination.type === 'servicenow') return incidentFollowUp(state, record, action);
  const payload =
    destination.type === 'pagerduty'
      ? pagerDutyResolve(alert, action)
      : destination.type === 'webhook'
        ? webhookAction(alert, action, opts)
        : undefined;
  if (!payload) return { ok: false, permanent: true, error: `${destination.type} takes no follow-ups` };
  if (!(await takeTurn(state))) return 'budget';
  const outcome = await send(destination, payload, [record.id], ctx);
  noteSent(state);
  return outcome;
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

/** The note's lines: on a ticket that lists several items, first which one it is about. */
async function noteLines(
  own: boolean,
  record: DeliveryRecord,
  action: NonNullable<DeliveryRecord['followUp']>['action'],
): Promise<string[]> {
  const { actionWords } = await import('../render/follow-up.ts');
  const { stripControl } = await import('../render/escape.ts');
  return [
    ...(own ? [] : [`About the ${record.kind === 'event' ? 'event' : 'leaked credential'} ${record.key}:`]),
    actionWords(action),
    ...(action.reason ? [`Reason: ${action.reason}`] : []),
  ].map((line) => stripControl(line));
}

/**
 * A comment on the item's issue; then, on ignore or remediate, its `doneTransition` (best effort),
 * only when the issue is the item's own: one listing several items stays open for the others.
 */
async function jiraFollowUp(
  state: PassState,
  record: DeliveryRecord,
  action: NonNullable<DeliveryRecord['followUp']>['action'],
): Promise<SendOutcome | 'budget'> {
  const { destination, ctx, log } = state;
  if (destination.type !== 'jira' || !record.ticket)
    return { ok: false, permanent: true, error: 'no issue to comment on' };
  const own = await ownTicket(state, record);
  if (!(await takeTurn(state))) return 'budget';
  const issue = `${destination.url}/rest/api/3/issue/${encodeURIComponent(record.ticket)}`;
  const json = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    Authorization: destination.authorization,
  };
  const { jiraComment } = await import('../destinations/jira/render.ts');
  const lines = await noteLines(own, record, action);
  const commented = await sendRequest(
    destination,
    { url: `${issue}/comment`, headers: json, body: JSON.stringify({ body: jiraComment(lines) }) },
    ctx,
  );
  noteSent(state);
  if (!commented.ok || !destination.doneTransition || !RESOLVING_ACTIONS.has(action.type) || !own)
    return commented;
  // The transition by its name, as the workflow has it now; a workflow without it is said, not retried.
  try {
    const res = await fetch(`${issue}/transitions`, {
      headers: json,
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    const { transitions = [] } = (await res.json()) as { transitions?: { id?: string; name?: string }[] };
    const wanted = destination.doneTransition.toLowerCase();
    const to = transitions.find((t) => t.name?.toLowerCase() === wanted);
    if (!to?.id) {
      log.warn('the issue has no such transition now; left as it is', {
        issue: record.ticket,
        transition: destination.doneTransition,
      });
      return commented;
    }
    const moved = await fetch(`${issue}/transitions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ transition: { id: to.id } }),
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    await moved.body?.cancel();
    if (!moved.ok)
      log.warn('the issue refused its transition; left as it is', {
        issue: record.ticket,
        status: moved.status,
      });
  } catch (error) {
    log.warn('could not move the issue through its transition; left as it is', {
      issue: record.ticket,
      error,
    });
  }
  return commented;
}

/** A work note on the item's incident (`PATCH` of `work_notes`). */
async function incidentFollowUp(
  state: PassState,
  record: DeliveryRecord,
  action: NonNullable<DeliveryRecord['followUp']>['action'],
): Promise<SendOutcome | 'budget'> {
  const { destination, ctx } = state;
  if (destination.type !== 'servicenow' || !record.ticket)
    return { ok: false, permanent: true, error: 'no incident to note on' };
  const own = await ownTicket(state, record);
  if (!(await takeTurn(state))) return 'budget';
  const note = (await noteLines(own, record, action)).join('\n');
  try {
    const res = await fetch(
      `${destination.url}/api/now/table/${destination.table}/${encodeURIComponent(record.ticket)}`,
      {
        method: 'PATCH',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          Authorization: destination.authorization,
        },
        body: JSON.stringify({ work_notes: note }),
        signal: AbortSignal.timeout(ctx.timeoutMs),
      },
    );
    const text = await res.text();
    noteSent(state);
    return readAs(destination, { status: res.status, body: text, headers: res.headers }, ctx.now());
  } catch (error) {
    noteSent(state);
    return { ok: false, permanent: false, error: `network error: ${(error as Error)?.message ?? 'unknown'}` };
  }
}
