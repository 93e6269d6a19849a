/**
 * Follow-ups: "item K changed state (what, by whom, when): tell every destination that got it".
 *
 * `followUp` writes one record per destination that was sent the item and hears of actions,
 * keyed by (destination, item key, action id) with a conditional put, so the same action followed
 * up twice (a retry, a crash and a rerun) makes no second record. The records are deliveries like
 * any other: the delivery pass sends them (`sendFollowUps`), retries them, lets them die, and
 * `deliveries list` shows them. What each destination hears:
 * - a Slack app: the item's own message is edited in place (`chat.update`) to show the action, then
 *   a reply goes in its thread; an item sent inside a digest gets the reply on the digest's parent;
 *   a message too old to edit gets the reply alone, and a message deleted gets it in the channel
 *   (its thread is gone with it). The edit is written down before the
 *   reply, so a crash repeats at most the one request in flight (an edit repeats harmlessly);
 * - PagerDuty: `resolve` of `event:<uid>` on ignore or remediate, only for an event that had its own
 *   incident (one paged inside a digest gets nothing), and nothing on an undo;
 * - a webhook with `followUps: true`: a signed body of kind `action` with the item.
 * Other destinations (a Slack incoming webhook, Teams, e-mail, the console) get nothing.
 */
import type { Clock } from '../clock.ts';
import type { FollowUpAction, ItemKind } from '../model.ts';
import { pagerDutyResolve, slackFollowUp, webhookAction } from '../render/follow-up.ts';
import type { DeliveryRecords } from '../state/records/index.ts';
import { type DeliveryRecord, deliveryId, followUpId } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import { recordToAlert } from './messages.ts';
import type { SendOutcome } from './outcome.ts';
import { noteSent, type PassState, stopEarly, takeTurn } from './queue.ts';
import { send, sendRequest } from './senders.ts';
import { settle } from './settle.ts';
import { postMessage, UNEDITABLE_SLACK_ERRORS, updateMessage } from './slack-app.ts';

/** A thread reply refused because its parent is gone (deleted): the reply goes in the channel. */
const NO_THREAD: ReadonlySet<string> = new Set(['thread_not_found', 'message_not_found']);

/** Whether `destination` hears of actions on what it was sent. */
export function takesFollowUps(destination: ResolvedDestination | undefined): boolean {
  if (!destination) return false;
  return (
    (destination.type === 'slack' && destination.app !== undefined) ||
    destination.type === 'pagerduty' ||
    (destination.type === 'webhook' && destination.followUps === true)
  );
}

/** Whether its sent records keep their item: its follow-ups show the item again. */
export function keepsItems(destination: ResolvedDestination | undefined): boolean {
  return takesFollowUps(destination) && destination?.type !== 'pagerduty';
}

export interface FollowUpDeps {
  records: Pick<DeliveryRecords, 'createOnce' | 'queue'>;
  destinations: Map<string, ResolvedDestination>;
  clock: Clock;
}

export interface ItemChange {
  kind: ItemKind;
  key: string;
  action: FollowUpAction;
}

/**
 * Records the follow-ups of `change`: one pending record per destination that was sent the item
 * and hears of it, unless one exists for this action already. Returns those created.
 */
export async function followUp(deps: FollowUpDeps, change: ItemChange): Promise<DeliveryRecord[]> {
  const { kind, key, action } = change;
  const targets = [...deps.destinations.values()].filter(takesFollowUps);
  const found = await deps.records.queue.getMany(targets.map((d) => deliveryId(d.name, kind, key)));
  const now = new Date(deps.clock.now()).toISOString();
  const records: DeliveryRecord[] = [];
  for (const destination of targets) {
    const sent = found.get(deliveryId(destination.name, kind, key));
    if (sent?.status !== 'sent') continue;
    if (destination.type === 'pagerduty') {
      const own = !sent.inDigest && !sent.posted?.digest;
      if (!own || !pagerDutyResolve(recordToAlert(sent), action)) continue;
    }
    records.push({
      id: followUpId(destination.name, kind, key, action.id),
      destination: destination.name,
      kind,
      key,
      source: sent.source,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      routes: sent.routes,
      item: sent.item,
      createdAt: now,
      updatedAt: now,
      ...(sent.posted ? { posted: sent.posted } : {}),
      followUp: { action },
    });
  }
  return records.length ? deps.records.createOnce(records) : [];
}

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
  const alert = recordToAlert(record);
  const opts = deps.renderOptions(destination, now);
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
