/**
 * Splunk HTTP Event Collector (docs/destinations/splunk.md): every item as one HEC event, no digests (a
 * SIEM wants every item, structured). `time` from the item (when it was matched, or imported), and
 * `event` the item as the password policy left it, with its key, kind, severity, routes and
 * destination, so a search can find and dedupe the rare repeat by key. Many events to a request,
 * each request under 1 MB.
 */
import { eventSeverity } from '../../model.ts';
import { deliveryIdsOf } from '../../render/group.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { wellFormedDeep } from '../../text.ts';

/** One Splunk HEC event; a request is several, written one after another. */
export interface HecEvent {
  time: number;
  source: 'exposure-alerts';
  sourcetype: string;
  index?: string;
  event: unknown;
}

/** HEC's default limit on a request's body is 1 MB; a request stays under it with room. */
export const HEC_MAX_BYTES = 1_000_000 - 10_000;

function timeOf(alert: DeliveryAlert, now: Date): number {
  const at = alert.kind === 'event' ? alert.item.metadata.matched_at : alert.item.imported_at;
  const ms = Date.parse(at ?? '');
  return (Number.isFinite(ms) ? ms : now.getTime()) / 1000;
}

export function hecEvent(
  alert: DeliveryAlert,
  opts: RenderOptions,
  sourcetype: string,
  index?: string,
): HecEvent {
  return {
    time: timeOf(alert, opts.now),
    source: 'exposure-alerts',
    sourcetype,
    ...(index ? { index } : {}),
    event: wellFormedDeep({
      key: alert.key,
      ...(alert.tenant ? { tenant: { id: alert.tenant.id, name: alert.tenant.name } } : {}),
      kind: alert.kind,
      severity: alert.kind === 'event' ? eventSeverity(alert.item) : 'credential',
      routes: alert.routes,
      destination: opts.destination,
      source: alert.source,
      item: alert.item,
    }),
  };
}

/** Every item, in order, as many to a request as fit under HEC_MAX_BYTES. */
export function renderSplunk(
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  target: { sourcetype: string; index?: string },
): Rendered<{ events: HecEvent[] }>[] {
  const out: Rendered<{ events: HecEvent[] }>[] = [];
  let batch: DeliveryAlert[] = [];
  let events: HecEvent[] = [];
  let bytes = 0;
  const flush = () => {
    if (!batch.length) return;
    out.push({
      deliveryIds: deliveryIdsOf(batch),
      payload: { events },
      summary: `splunk events x${batch.length}`,
    });
    batch = [];
    events = [];
    bytes = 0;
  };
  for (const alert of alerts) {
    const event = hecEvent(alert, opts, target.sourcetype, target.index);
    const size = Buffer.byteLength(JSON.stringify(event)) + 1;
    if (batch.length && bytes + size > HEC_MAX_BYTES) flush();
    batch.push(alert);
    events.push(event);
    bytes += size;
  }
  flush();
  return out;
}
