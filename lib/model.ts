/**
 * The few shapes that travel through the whole product: an alert (an upstream item with the
 * password policy already applied, and where it came from) and an alert on its way to one
 * destination.
 *
 * Flow: upstream page -> Alert (poll/) -> routing decision (rules/) -> delivery record (state/)
 * -> DeliveryAlert -> rendered message (render/) -> sender (deliver/).
 */
import type { Credential, EventItem } from './upstream/schemas.ts';

export type ItemKind = 'event' | 'credential';

/** A tenant of the config's `tenants` (docs/configuration.md), as alerts carry it. */
export interface TenantRef {
  id: number;
  name: string;
}

/** How long a delivery record (the dedupe marker) is kept: an item seen again later is new again. */
export const RECORD_RETENTION_DAYS = 90;

/**
 * A stream's id and the `sources` value routes match on: `tenant`, `group:<id>`,
 * `credentials:<domain>`, and a tenant's `tenant:<tenant>`, `group:<tenant>:<id>`,
 * `credentials:<tenant>:<domain>`.
 */
export type SourceId = string;

export interface EventAlert {
  kind: 'event';
  /** `metadata.uid`; `<tenant id>:<uid>` for an item of a `tenants` entry (poll/ids.ts). */
  key: string;
  source: SourceId;
  /** The `tenants` entry it was found for; none for the top-level sources. */
  tenant?: TenantRef;
  item: EventItem;
}

export interface CredentialAlert {
  kind: 'credential';
  /** The credential's `id`, as a string; `<tenant id>:<id>` for an item of a `tenants` entry. */
  key: string;
  source: SourceId;
  tenant?: TenantRef;
  /** The credential with the password policy applied: `hash` masked, removed, or (opt-in) clear. */
  item: Credential;
}

export type Alert = EventAlert | CredentialAlert;

/** An alert bound for one destination, as the delivery pass hands it to a renderer. */
export type DeliveryAlert = Alert & {
  /** Id of the delivery record (`<destination>~<kind>~<key>`), stable for this pair. */
  deliveryId: string;
  destination: string;
  /** Names of the routes that chose this destination for this item. */
  routes: string[];
  /**
   * A ticket destination: the label of the ticket this item is fixed to, a create of which may have
   * happened. The renderer puts it with the others of that label, in one ticket, and nowhere else.
   */
  ticketLabel?: string;
};

/**
 * What changed about an item that was alerted, and who changed it: an action on it (ignore,
 * remediate, their undo, or any later kind), which every destination that got the item hears of
 * once (deliver/follow-up.ts).
 */
export interface FollowUpAction {
  /** Unique per action: a follow-up's record is keyed by (destination, item key, this id). */
  id: string;
  /** `ignore`, `remediate`, `unignore`, `unremediate`, or another word for a later kind of action. */
  type: string;
  /** Who acted: `slack:<user id>`, an API client's name, `cli:<user>`. */
  by: string;
  /** ISO time of the action. */
  at: string;
  reason?: string;
  /** The item's flags as this action left them, as far as we know (its message shows the undo). */
  flags?: { ignored?: boolean; remediated?: boolean };
}

/** Actions that close an event's own PagerDuty incident (an undo leaves it resolved). */
export const RESOLVING_ACTIONS: ReadonlySet<string> = new Set(['ignore', 'remediate']);

export function eventSeverity(item: EventItem): NonNullable<EventItem['metadata']['severity']> {
  return item.tenant_metadata?.severity?.override ?? item.metadata.severity;
}
