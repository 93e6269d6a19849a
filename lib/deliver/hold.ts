/**
 * Holding back deliveries that wait for a retry (interface.md section 6): a silence made while a
 * delivery waits for its next attempt holds it back too, exactly as if the silence had been there
 * when the item was polled. The delivery pass asks this of what is due, with the silences it read
 * at its start; a held delivery is recorded `silenced`, with the silence named in its note, and is
 * never sent, even after the silence ends: it was silenced on purpose.
 */
import type { Alert } from '../model.ts';
import { type Holding, silencedNote, silenceFor } from '../rules/silences.ts';
import type { DeliveryRecord } from '../state/records/record.ts';

/** `records` split into those a silence holds back (as their silenced records) and the rest. */
export function holdBack(
  records: readonly DeliveryRecord[],
  silences: readonly Holding[],
  now: number,
): { held: DeliveryRecord[]; rest: DeliveryRecord[] } {
  if (silences.length === 0) return { held: [], rest: [...records] };
  const held: DeliveryRecord[] = [];
  const rest: DeliveryRecord[] = [];
  for (const record of records) {
    // A pending record always holds its item; one that somehow does not is left to be sent as is.
    if (record.item === null || typeof record.item !== 'object') {
      rest.push(record);
      continue;
    }
    const alert = { kind: record.kind, key: record.key, source: record.source, item: record.item } as Alert;
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
