/**
 * Holding back deliveries that wait for a retry (docs/runbook.md): a silence made while a
 * delivery waits for its next attempt holds it back too, exactly as if the silence had been there
 * when the item was polled. With the silences it read at its start, the delivery pass first looks
 * at everything that waits (due or not: a retry due after the silence ends waited during it), then
 * at what is due; a held delivery is recorded `silenced`, with the silence named in its note, and
 * is never sent, even after the silence ends: it was silenced on purpose. Not held: a delivery to a
 * ticket whose create may already have happened (tickets.ts), which stays in that ticket.
 */
import type { Logger } from '../log.ts';
import type { Alert } from '../model.ts';
import { type Holding, silencedNote, silenceFor } from '../rules/silences.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { DeliverDeps, DestinationResult } from './types.ts';

/** `records` split into those a silence holds back (as their silenced records) and the rest. */
export function holdBack(
  records: readonly DeliveryRecord[],
  silences: readonly Holding[],
  now: number,
  tenantOf?: DeliverDeps['tenantOf'],
): { held: DeliveryRecord[]; rest: DeliveryRecord[] } {
  if (silences.length === 0) return { held: [], rest: [...records] };
  const held: DeliveryRecord[] = [];
  const rest: DeliveryRecord[] = [];
  for (const record of records) {
    // A pending record always holds its item; one that somehow does not is left to be sent as is.
    // A follow-up is news of what someone did about an item already sent: no silence holds it.
    // Nor one fixed to a ticket whose create may have happened: that ticket stays as it was (tickets.ts).
    if (record.followUp || record.sendingAt || record.item === null || typeof record.item !== 'object') {
      rest.push(record);
      continue;
    }
    const tenant = tenantOf?.(record.source);
    const alert = {
      kind: record.kind,
      key: record.key,
      source: record.source,
      ...(tenant ? { tenant } : {}),
      item: record.item,
    } as Alert;
    const hit = silenceFor(silences, alert, now);
    if (!hit) {
      rest.push(record);
      continue;
    }
    const { nextAttemptAt: _next, rateLimitedSince: _since, ...kept } = record;
    held.push({ ...kept, status: 'silenced', note: silencedNote(hit) });
  }
  return { held, rest };
}

/** The most waiting deliveries one pass looks at for a silence, per destination: the rest, next pass. */
export const HOLD_SWEEP_LIMIT = 2_000;

/** Records silenced every waiting delivery of `destination` a silence matches (one index read, bounded). */
export async function holdWaiting(
  deps: Pick<DeliverDeps, 'deliveries' | 'clock' | 'tenantOf'>,
  destination: string,
  silences: readonly Holding[],
  result: DestinationResult,
  log: Logger,
): Promise<void> {
  const waiting = await deps.deliveries.waiting(destination, HOLD_SWEEP_LIMIT);
  if (waiting.length === 0) return;
  // The index may lag behind the table: hold only what a consistent read still calls pending.
  const current = await deps.deliveries.getMany(waiting.map((r) => r.id));
  const pending = waiting.flatMap((r) => {
    const now = current.get(r.id);
    return now && now.status === 'pending' ? [now] : [];
  });
  const { held } = holdBack(pending, silences, deps.clock.now(), deps.tenantOf);
  if (held.length === 0) return;
  await deps.deliveries.save(held);
  result.silenced = (result.silenced ?? 0) + held.length;
  log.info('waiting deliveries held back by a silence', { deliveries: held.length });
}
