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
 * - a webhook with `followUps: true`: a signed body of kind `action` with the item;
 * - Jira: a comment on the item's issue, and its `doneTransition` on ignore or remediate when the
 *   issue is the item's own (an issue listing several items gets the comment alone, naming the item);
 * - ServiceNow: a work note on the item's incident (naming the item when it lists several).
 * Other destinations (a Slack incoming webhook, Teams, e-mail, the console) get nothing.
 *
 * This module makes the records (it is all the API needs: its bundle stays free of renderers);
 * follow-up-send.ts sends them.
 */

/** A destination that hears of actions: its name, and whether it is PagerDuty (own incidents only). */
export interface FollowUpTarget {
  name: string;
  pagerduty: boolean;
  /** A ticket destination: only an item whose record names its ticket gets the comment. */
  ticket?: boolean;
}

import type { Clock } from '../clock.ts';
import { type FollowUpAction, type ItemKind, RESOLVING_ACTIONS } from '../model.ts';
import type { RecordAccess } from '../state/records/once.ts';
import { type DeliveryRecord, deliveryId, followUpId } from '../state/records/record.ts';

export interface FollowUpDeps {
  records: RecordAccess;
  /** The destinations that hear of actions: the runtime's, or the catalog the pollers publish (the API). */
  targets(): Promise<FollowUpTarget[]>;
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
  const targets = await deps.targets();
  const found = await deps.records.getMany(targets.map((d) => deliveryId(d.name, kind, key)));
  const now = new Date(deps.clock.now()).toISOString();
  const records: DeliveryRecord[] = [];
  for (const destination of targets) {
    const sent = found.get(deliveryId(destination.name, kind, key));
    if (sent?.status !== 'sent') continue;
    if (destination.pagerduty) {
      // Only an event's own incident is resolved, and only by ignore or remediate.
      const own = !sent.inDigest && !sent.posted?.digest;
      if (!own || kind !== 'event' || !RESOLVING_ACTIONS.has(action.type)) continue;
    }
    if (destination.ticket && !sent.ticket) continue;
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
      ...(sent.ticket ? { ticket: sent.ticket } : {}),
      followUp: { action },
    });
  }
  return records.length ? deps.records.createOnce(records) : [];
}
