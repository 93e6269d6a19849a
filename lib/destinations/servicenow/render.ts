/**
 * ServiceNow incidents: one per item (a digest: one listing what fits, each with its link to the
 * web app, and counting the rest). `short_description` one line of at most 160 characters; the
 * description plain text (ServiceNow shows it as typed); `correlation_id` the same
 * `exposure-<16 hex>` label as a Jira issue's, short and safe in a `sysparm_query`, which a raw uid
 * is not; urgency and impact from the severity. No password, however masked.
 */
import { eventSeverity } from '../../model.ts';
import { lineText, stripControl } from '../../render/escape.ts';
import { formatTime, hashKind, identifierNames, severityText, tagsOf } from '../../render/format.ts';
import {
  batchSummary,
  batchTenant,
  deliveryIdsOf,
  forTenant,
  highlightsOf,
  ticketBatches,
} from '../../render/group.ts';
import { identityLine, verdictCounts } from '../../render/identity.ts';
import { exposureLabel, webhookIdempotencyKey } from '../../render/keys.ts';
import { alertLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';

/** An incident's fields (the sender adds the assignment group). */
export interface IncidentContent {
  short_description: string;
  description: string;
  correlation_id: string;
  correlation_display: 'exposure-alerts';
  urgency: '1' | '2' | '3';
  impact: '1' | '2' | '3';
  category: 'security';
}

export const SHORT_DESCRIPTION_MAX = 160;
const DESCRIPTION_BUDGET = 20_000;

const LEVEL: Record<string, '1' | '2' | '3'> = { critical: '1', high: '1', medium: '2', low: '3', info: '3' };

/**
 * Upstream text on one line, controls out: the description is one line per field, so a line break
 * (or an escape sequence) in any value, `hash_type` as much as a forum post, cannot forge a field.
 */
const one = (s: string) => stripControl(s);

function describe(alert: DeliveryAlert, opts: RenderOptions): string {
  const link = alertLink(alert, opts.appUrl);
  if (alert.kind === 'credential') {
    const item = alert.item;
    // The login's identity verdict, one line like the rest (the provider's display name is in it).
    const verdict = identityLine(alert, opts);
    return [
      `Login: ${one(item.identity_name)}`,
      ...(verdict ? [`Identity: ${one(verdict)}`] : []),
      `Secret: ${one(hashKind(item))} (never sent to tickets)`,
      `Leak: ${one(item.source?.name ?? item.source_id)}`,
      `Domain: ${one(item.domain)}`,
      `Imported: ${one(formatTime(item.imported_at))}`,
      ...(link ? [`Open in the web app: ${link}`] : []),
    ].join('\n');
  }
  const item = alert.item;
  const lines = highlightsOf(alert).map((h) => `${one(h.field)}: ${one(h.text.replace(/<\/?mark>/g, ''))}`);
  return [
    ...lines,
    `Severity: ${severityText(item)}`,
    `Type: ${one(item.metadata.type)}`,
    `Identifiers: ${one(identifierNames(item).join(', '))}`,
    `Tags: ${one(tagsOf(item).join(', '))}`,
    `Matched: ${one(formatTime(item.metadata.matched_at))}`,
    `uid: ${one(item.metadata.uid)}`,
    ...(link ? [`Open in the web app: ${link}`] : []),
  ]
    .join('\n')
    .slice(0, DESCRIPTION_BUDGET);
}

function title(alert: DeliveryAlert): string {
  if (alert.kind === 'credential')
    return `Leaked credential: ${alert.item.identity_name} in ${alert.item.source?.name ?? alert.item.source_id}`;
  const names = identifierNames(alert.item);
  return `${eventSeverity(alert.item).toUpperCase()} ${alert.item.metadata.type}${names.length ? ` for ${names.join(', ')}` : ''}`;
}

const oneLine = (s: string) => lineText(s, SHORT_DESCRIPTION_MAX, () => '…');
/** `: 12 at risk, 30 rotated` after a digest's count, when any login has a verdict. */
const summaryCounts = (items: DeliveryAlert[]) => {
  const counts = verdictCounts(items);
  return counts ? `: ${counts}` : '';
};
const levelOf = (alert: DeliveryAlert) =>
  alert.kind === 'event' ? (LEVEL[eventSeverity(alert.item)] ?? '2') : '2';

export function renderServiceNow(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<IncidentContent>[] {
  const batches = ticketBatches(alerts, opts.digest);
  return batches.map((batch): Rendered<IncidentContent> => {
    const items = batch.type === 'event' ? [batch.alert] : batch.alerts;
    const one = items.length === 1 ? (items[0] as DeliveryAlert) : undefined;
    const ids = deliveryIdsOf(items);
    const level = items.map(levelOf).sort()[0] ?? '2';
    let description = '';
    if (one) description = describe(one, opts);
    else {
      const lines: string[] = [];
      for (const a of items) {
        // Each item with its own link, so an analyst can open any of them.
        const link = alertLink(a, opts.appUrl);
        const identity = identityLine(a, opts);
        const verdict = identity ? ` — ${lineText(identity, 300, () => '…')}` : '';
        const line = `${oneLine(title(a))}${verdict}${link ? ` · ${link}` : ''}`;
        if (description.length + line.length > DESCRIPTION_BUDGET) break;
        lines.push(line);
        description += `${line}\n`;
      }
      const counts = verdictCounts(items);
      description = `${counts ? `Identity: ${counts}\n` : ''}${items.length} items, one per line:\n${lines.join('\n')}${lines.length < items.length ? `\n… and ${items.length - lines.length} more items not listed (${items.length} in all).` : ''}`;
    }
    return {
      deliveryIds: ids,
      summary: batchSummary(batch),
      payload: {
        short_description: oneLine(
          forTenant(
            batchTenant(batch),
            one ? title(one) : `${items.length} exposure alerts${summaryCounts(items)}`,
            ': ',
          ),
        ),
        description,
        correlation_id: exposureLabel(
          one
            ? `${opts.destination}:${one.key}`
            : `${opts.destination}:${webhookIdempotencyKey(opts.destination, ids)}`,
        ),
        correlation_display: 'exposure-alerts',
        urgency: level,
        impact: level,
        category: 'security',
      },
    };
  });
}
