/**
 * Microsoft Sentinel (docs/destinations/sentinel.md): every item as one record of the Logs Ingestion API's
 * JSON array, no digests, each request under 1 MB. A record: `TimeGenerated` from the item, its
 * key, kind, severity, routes and destination, and the item as the password policy left it.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { deliveryIdsOf } from '../../render/group.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { wellFormedDeep } from '../../text.ts';

/** One record for Microsoft Sentinel's Logs Ingestion API. */
export interface SentinelRecord {
  TimeGenerated: string;
  Key: string;
  /** `{id, name}` of the `tenants` entry the item was found for (named as docs/configuration.md names it). */
  tenant?: TenantRef;
  Kind: string;
  Severity: string;
  Routes: string[];
  Destination: string;
  Source: string;
  Item: unknown;
}

/** The Logs Ingestion API takes 1 MB a request; a request stays under it with room. */
export const SENTINEL_MAX_BYTES = 1_000_000 - 10_000;

export function sentinelRecord(alert: DeliveryAlert, opts: RenderOptions): SentinelRecord {
  const at = alert.kind === 'event' ? alert.item.metadata.matched_at : alert.item.imported_at;
  const ms = Date.parse(at ?? '');
  return wellFormedDeep({
    TimeGenerated: new Date(Number.isFinite(ms) ? ms : opts.now.getTime()).toISOString(),
    Key: alert.key,
    ...(alert.tenant ? { tenant: { id: alert.tenant.id, name: alert.tenant.name } } : {}),
    Kind: alert.kind,
    Severity: alert.kind === 'event' ? eventSeverity(alert.item) : 'credential',
    Routes: alert.routes,
    Destination: opts.destination,
    Source: alert.source,
    Item: alert.item,
  });
}

/** Every item, in order, as many records to a request as fit under SENTINEL_MAX_BYTES. */
export function renderSentinel(
  alerts: DeliveryAlert[],
  opts: RenderOptions,
): Rendered<{ records: SentinelRecord[] }>[] {
  const out: Rendered<{ records: SentinelRecord[] }>[] = [];
  let batch: DeliveryAlert[] = [];
  let records: SentinelRecord[] = [];
  let bytes = 2;
  for (const alert of alerts) {
    const record = sentinelRecord(alert, opts);
    const size = Buffer.byteLength(JSON.stringify(record)) + 1;
    if (batch.length && bytes + size > SENTINEL_MAX_BYTES) {
      out.push({
        deliveryIds: deliveryIdsOf(batch),
        payload: { records },
        summary: `sentinel records x${batch.length}`,
      });
      batch = [];
      records = [];
      bytes = 2;
    }
    batch.push(alert);
    records.push(record);
    bytes += size;
  }
  if (batch.length)
    out.push({
      deliveryIds: deliveryIdsOf(batch),
      payload: { records },
      summary: `sentinel records x${batch.length}`,
    });
  return out;
}
