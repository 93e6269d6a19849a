/**
 * From due delivery records to the messages the pass sends: rendering that survives an alert that
 * cannot be rendered (it dies alone, the rest still goes, a digest staying a digest), the halves a
 * message too large for its destination is split into, and a message's size on the wire.
 */

import type { Logger } from '../log.ts';
import type { DeliveryAlert } from '../model.ts';
import type { Rendered } from '../render/types.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import { type Payload, requestFor } from './senders.ts';
import type { DeliverDeps } from './types.ts';

/** The due records of one destination the pass reads and renders together, and what it renders them with. */
export interface Chunk {
  deps: DeliverDeps;
  destination: ResolvedDestination;
  log: Logger;
  /** The chunk's live records by id: a record that dies rendering leaves it. */
  byId: Map<string, DeliveryRecord>;
}

/** A delivery record as the renderers take it, with its tenant when `tenantOf` knows one. */
export function recordToAlert(record: DeliveryRecord, tenantOf?: DeliverDeps['tenantOf']): DeliveryAlert {
  const tenant = tenantOf?.(record.source);
  return {
    kind: record.kind,
    key: record.key,
    source: record.source,
    ...(tenant ? { tenant } : {}),
    item: record.item,
    deliveryId: record.id,
    destination: record.destination,
    routes: record.routes,
    ...(record.ticketPin && !record.followUp ? { ticketLabel: record.ticketPin.label } : {}),
  } as DeliveryAlert;
}

/**
 * Renders all alerts. If that fails, finds the alerts that cannot be rendered on their own: they die
 * alone, recorded with the error, and the rest is rendered together again (so a digest stays a
 * digest); should that still fail, the rest goes one message per alert.
 */
export async function renderSafely(chunk: Chunk, records: DeliveryRecord[]): Promise<Rendered<Payload>[]> {
  const { deps, destination, log, byId } = chunk;
  const now = new Date(deps.clock.now());
  const render = (batch: DeliveryRecord[]) =>
    deps.render(
      destination,
      batch.map((r) => recordToAlert(r, deps.tenantOf)),
      now,
    );
  try {
    return await render(records);
  } catch (error) {
    log.error('rendering a batch failed; looking for the alerts that cannot be rendered', { error });
  }
  const singles = new Map<string, Rendered<Payload>[]>();
  const unrenderable: DeliveryRecord[] = [];
  for (const record of records) {
    try {
      singles.set(record.id, await render([record]));
    } catch (single) {
      record.status = 'dead';
      record.rateLimitedSince = undefined;
      record.lastError = `render failed: ${(single as Error)?.message ?? String(single)}`.slice(0, 500);
      byId.delete(record.id);
      unrenderable.push(record);
    }
  }
  if (unrenderable.length) {
    // Recorded before anything is sent, under the destination's lease, so none is retried forever.
    await deps.deliveries.save(unrenderable);
    deps.metrics.count('DeliveriesDead', unrenderable.length, { destination: destination.name });
    log.error('deliveries that cannot be rendered are dead', { deliveries: unrenderable.map((r) => r.id) });
  }
  const rest = records.filter((r) => singles.has(r.id));
  try {
    return rest.length ? await render(rest) : [];
  } catch {
    return rest.flatMap((r) => singles.get(r.id) ?? []);
  }
}

/** The messages for each half of `records`, first half first. */
export async function halves(chunk: Chunk, records: DeliveryRecord[]): Promise<Rendered<Payload>[]> {
  const middle = Math.ceil(records.length / 2);
  return [
    ...(await renderSafely(chunk, records.slice(0, middle))),
    ...(await renderSafely(chunk, records.slice(middle))),
  ];
}

/** Bytes of the body a message is sent as (0 for the console, which has none). */
export async function bodyBytes(
  destination: ResolvedDestination,
  message: Rendered<Payload>,
  now: number,
): Promise<number> {
  const request = await requestFor(destination, message.payload, message.deliveryIds, now);
  return request ? Buffer.byteLength(request.body) : 0;
}
