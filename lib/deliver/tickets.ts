/**
 * No duplicate ticket from a crash or a timeout (Jira and ServiceNow). A ticket system has no
 * idempotency key, so before a create is sent, each of its records is marked with when
 * (`sendingAt`) and with the ticket it is for (`ticketPin`: the ticket's `exposure-` label and how
 * many records it lists). From then until the create is settled, the ticket is fixed: the renderer
 * puts records of one label together as one ticket, exactly as they were, whatever the threshold,
 * a silence made since (hold.ts lets them through) or the items that arrived since (they go into
 * tickets of their own); and the records go nowhere else. A create whose outcome is not known (the
 * run died before recording it, the request timed out, the server answered 5xx) is tried again no
 * sooner than UNKNOWN_OUTCOME_WAIT_MS after it was sent, and only after a search for its label
 * finds nothing: the search is eventually consistent, so one straight after the create could miss
 * it. A record that died with its mark on keeps it, so one re-queued searches before anything.
 *
 * A ticket's records may come back incomplete: some were not due with the others (a crash between
 * writes of their marks or outcomes, a chunk of the pass cut through them, only some re-queued). The
 * present ones then wait out the same 5 minutes and search the label: found, they are settled as
 * sent in it; not found, no create happened, so their mark is taken off and the next pass batches
 * them afresh (a mark is written on every record before the create is sent, so a record of the
 * ticket without one means it was never sent).
 *
 * What remains at risk: an index slower than those 5 minutes. A search that misses a ticket that
 * exists makes a second one: with the same items and label when the records came back whole, with
 * other groupings when they came back incomplete. A 4xx is a known outcome: the marks go, and a
 * digest refused as too large is split into new tickets.
 */
import { bodyOf } from '../destinations/kinds.ts';
import type { Rendered } from '../render/types.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { SendOutcome } from './outcome.ts';
import type { Payload, SendContext } from './senders.ts';
import type { DeliverDeps } from './types.ts';

export const UNKNOWN_OUTCOME_WAIT_MS = 5 * 60_000;

/**
 * What to do with a message to a ticket destination before sending it: send it (marked), leave it
 * for later (wait), settle it as sent in the ticket found, or leave it to the next pass to batch
 * afresh (released: its records were part of a ticket that was never made).
 */
export type TicketGate = { send: true } | { wait: true } | { found: string } | { released: true };

/**
 * Decides whether `records` may be created now: never tried (send, marked first), tried with an
 * unknown outcome less than 5 minutes ago (wait), or tried longer ago (search: found, or send when
 * the message is the fixed ticket whole, or released when only part of it came back).
 */
export async function beforeTicket(
  deps: Pick<DeliverDeps, 'deliveries' | 'clock'>,
  destination: ResolvedDestination,
  message: Rendered<Payload>,
  records: DeliveryRecord[],
  ctx: SendContext,
): Promise<TicketGate> {
  const now = deps.clock.now();
  const body = await bodyOf(destination);
  const label = body.labelOf?.(message.payload);
  const pin = records.find((r) => r.ticketPin)?.ticketPin;
  const tried = records.map((r) => Date.parse(r.sendingAt ?? '')).filter(Number.isFinite);
  if (tried.length || pin) {
    const since = tried.length ? Math.max(...tried) : 0;
    if (now - since < UNKNOWN_OUTCOME_WAIT_MS) {
      const due = new Date(since + UNKNOWN_OUTCOME_WAIT_MS).toISOString();
      for (const r of records) r.nextAttemptAt = due;
      await deps.deliveries.save(records);
      return { wait: true };
    }
    const wanted = pin?.label ?? label;
    const found = wanted && body.search ? await body.search(destination, wanted, ctx) : undefined;
    if (found === 'error') {
      for (const r of records) r.nextAttemptAt = new Date(now + 60_000).toISOString();
      await deps.deliveries.save(records);
      return { wait: true };
    }
    if (found) {
      // A follow-up comments on a ticket of several items, and moves only an item's own.
      if (pin && pin.items > 1) for (const r of records) r.inDigest = true;
      return { found };
    }
    const whole =
      pin !== undefined &&
      pin.label === label &&
      records.length === pin.items &&
      records.every((r) => r.ticketPin?.label === pin.label);
    if (pin && !whole) {
      for (const r of records) {
        r.sendingAt = undefined;
        r.ticketPin = undefined;
        r.nextAttemptAt = new Date(now).toISOString();
      }
      await deps.deliveries.save(records);
      return { released: true };
    }
  }
  for (const r of records) {
    r.sendingAt = new Date(now).toISOString();
    if (label) r.ticketPin = { label, items: records.length };
  }
  // Every mark is written before the create goes: a crash part way leaves the create unsent.
  await deps.deliveries.save(records);
  return { send: true };
}

/**
 * After an answer: a definite refusal (a 4xx) made nothing, so the mark goes; an unknown outcome
 * keeps it, and its retry waits at least the 5 minutes. Returns the records to save again.
 */
export function afterTicket(records: DeliveryRecord[], outcome: SendOutcome): DeliveryRecord[] {
  if (outcome.ok) return [];
  const known = outcome.status !== undefined && outcome.status >= 400 && outcome.status < 500;
  const changed: DeliveryRecord[] = [];
  for (const r of records) {
    if (known) {
      if (r.sendingAt || r.ticketPin) changed.push(r);
      r.sendingAt = undefined;
      r.ticketPin = undefined;
      continue;
    }
    const earliest = Date.parse(r.sendingAt ?? '') + UNKNOWN_OUTCOME_WAIT_MS;
    if (r.status === 'pending' && Number.isFinite(earliest) && Date.parse(r.nextAttemptAt ?? '') < earliest) {
      r.nextAttemptAt = new Date(earliest).toISOString();
      changed.push(r);
    }
  }
  return changed;
}
