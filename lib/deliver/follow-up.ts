/**
 * Follow-ups: "item K changed state (what, by whom, when): tell every destination that got it".
 *
 * `followUp` writes one record per destination that was sent the item and hears of actions,
 * keyed by (destination, item key, action id) with a conditional put, so the same action followed
 * up twice (a retry, a crash and a rerun) makes no second record. The records are deliveries like
 * any other: the delivery pass sends them (`sendFollowUps`), retries them, lets them die, and
 * `deliveries list` shows them. How a destination hears is its kind's (its face's `followUps`, its
 * body's `followUp`; docs/actions.md): its message edited and replied to, an `incident` resolved
 * (only an event's own, by ignore or remediate), a `ticket` commented (only an item whose record
 * names its ticket), an `action` body; a destination whose kind says none gets nothing.
 *
 * This module makes the records (it is all the API needs: its bundle stays free of renderers);
 * follow-up-send.ts sends them.
 */

import type { Clock } from '../clock.ts';
import type { FollowUpStyle } from '../destinations/kind.ts';
import { type FollowUpAction, type ItemKind, RESOLVING_ACTIONS } from '../model.ts';
import type { RecordAccess } from '../state/records/once.ts';
import { type DeliveryRecord, deliveryId, followUpId } from '../state/records/record.ts';

/** A destination that hears of actions: its name, and how (its kind's `followUps`, above). */
export interface FollowUpTarget {
  name: string;
  style: FollowUpStyle;
}

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
    if (destination.style === 'incident') {
      // Only an event's own incident is resolved, and only by ignore or remediate.
      const own = !sent.inDigest && !sent.posted?.digest;
      if (!own || kind !== 'event' || !RESOLVING_ACTIONS.has(action.type)) continue;
    }
    if (destination.style === 'ticket' && !sent.ticket) continue;
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
