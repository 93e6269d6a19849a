/**
 * Longer than 300 lines because a single item, a digest and the identity lines share one event
 * shape and its size budget, which read best in one place.
 *
 * PagerDuty Events API v2 events for a batch of alerts bound for one PagerDuty destination
 * (docs/destinations/pagerduty.md): one `trigger` per item, or one per digest above the threshold.
 *
 * The `dedup_key` is what makes a repeat harmless: `event:<uid>` or `credential:<id>` (a digest:
 * its webhook Idempotency-Key, stable for the same items and destination), or `sha256:<hex>` of
 * that past 255 characters. A repeat of the same item or digest, such as the one send a crash
 * between send and record may repeat, joins the incident it opened while that is open.
 *
 * `summary` is read on a phone: severity, type, whom it concerns, what matched, at most 1,024
 * characters, one line, controls stripped. `custom_details` is the item itself, as the alert holds
 * it: the password policy was applied when the alert was made, so a masked or hidden password is
 * masked or hidden here too. A login with an identity verdict (its `_identity`) also has its one
 * line under `identity`, and its verdict in the summary; a digest's counts its verdicts. The routing key is a secret the sender adds; a rendered event never
 * holds it.
 */

import { createHash } from 'node:crypto';
import { verdictWords } from '../../identity/words.ts';
import { eventSeverity, type FollowUpAction, RESOLVING_ACTIONS } from '../../model.ts';
import { highlightPlain, lineText } from '../../render/escape.ts';
import { hashKind, identifierNames, plural } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  deliveryIdsOf,
  digestDomains,
  digestTypes,
  type EventDelivery,
  forTenant,
  highestSeverity,
  highlightsOf,
  planBatches,
  severityCounts,
} from '../../render/group.ts';
import { identityLine, verdictCounts, verdictOf } from '../../render/identity.ts';
import { webhookIdempotencyKey } from '../../render/keys.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { wellFormedDeep } from '../../text.ts';
import type { Severity } from '../../upstream/event-types.ts';
import type { PagerDutySeverity } from './types.ts';

/**
 * A PagerDuty Events API v2 event as rendered: everything but `routing_key`, a secret the sender
 * adds (so previews and logs never hold it). A `resolve` carries no `payload`.
 */
export interface PagerDutyEvent {
  event_action: 'trigger' | 'resolve';
  dedup_key: string;
  payload?: {
    summary: string;
    source: 'exposure-alerts';
    severity: PagerDutySeverity;
    timestamp: string;
    class: string;
    custom_details: unknown;
  };
  links?: { href: string; text: string }[];
  client: 'exposure-alerts';
}

export const PAGERDUTY_LIMITS = {
  summary: 1_024,
  dedupKey: 255,
  /** PagerDuty refuses an event over 512 KB. */
  bytes: 512 * 1024,
} as const;

/** What a digest's `custom_details` may take: its items are listed until this, the rest counted. */
const DIGEST_DETAILS_BYTES = 100_000;

/** Event severities on PagerDuty's scale (docs/destinations/pagerduty.md). */
export const PAGERDUTY_SEVERITY: Record<Severity, PagerDutySeverity> = {
  critical: 'critical',
  high: 'error',
  medium: 'warning',
  low: 'info',
  info: 'info',
};

export interface PagerDutyOptions {
  /** The severity a leaked credential pages with (the destination's `credentialSeverity`). */
  credentialSeverity: PagerDutySeverity;
}

/** The key as is when PagerDuty takes it, else `sha256:<hex>` of it. */
export function dedupKey(key: string): string {
  return key.length <= PAGERDUTY_LIMITS.dedupKey
    ? key
    : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** An ISO timestamp PagerDuty can read: the item's own when it parses, else the render time. */
function timestampOf(value: string | null | undefined, now: Date): string {
  const ms = value ? Date.parse(value) : Number.NaN;
  return new Date(Number.isNaN(ms) ? now.getTime() : ms).toISOString();
}

const summaryOf = (text: string) => lineText(text, PAGERDUTY_LIMITS.summary, () => '…');

function trigger(
  key: string,
  payload: NonNullable<PagerDutyEvent['payload']>,
  link: string | undefined,
): PagerDutyEvent {
  return {
    event_action: 'trigger',
    dedup_key: dedupKey(key),
    payload,
    links: link ? [{ href: link, text: 'Open in the web app' }] : [],
    client: 'exposure-alerts',
  };
}

function eventTrigger(alert: EventDelivery, opts: RenderOptions): PagerDutyEvent {
  const item = alert.item;
  const severity = eventSeverity(item);
  const names = identifierNames(item);
  const first = highlightsOf(alert)[0];
  const whom = names.length ? ` for ${lineText(names.join(', '), 200, () => '…')}` : '';
  const what = first ? `: ${highlightPlain(first.text)}` : '';
  return trigger(
    `event:${alert.key}`,
    {
      summary: summaryOf(
        forTenant(
          alert.tenant,
          `${severity.toUpperCase()} ${lineText(item.metadata.type, 60, () => '…')}${whom}${what}`,
          ': ',
        ),
      ),
      source: 'exposure-alerts',
      severity: PAGERDUTY_SEVERITY[severity],
      timestamp: timestampOf(item.metadata.matched_at, opts.now),
      class: lineText(item.metadata.type, 200, () => '…'),
      custom_details: wellFormedDeep(item),
    },
    eventLink(item, opts.appUrl),
  );
}

function credentialTrigger(
  alert: CredentialDelivery,
  opts: RenderOptions,
  pd: PagerDutyOptions,
): PagerDutyEvent {
  const item = alert.item;
  const leak = item.source?.name ?? item.source_id;
  // A login with a verdict: its words early in the summary (a phone may show no more).
  const verdict = verdictOf(alert);
  return trigger(
    `credential:${alert.key}`,
    {
      summary: summaryOf(
        forTenant(
          alert.tenant,
          `LEAKED CREDENTIAL${verdict ? ` (${verdictWords(verdict.verdict, verdict.reason)})` : ''} for ${lineText(item.identity_name, 300, () => '…')} (${hashKind(item)}) in ${leak}, domain ${item.domain}`,
          ': ',
        ),
      ),
      source: 'exposure-alerts',
      severity: pd.credentialSeverity,
      timestamp: timestampOf(item.imported_at, opts.now),
      class: 'leaked_credential',
      custom_details: wellFormedDeep(detailsOf(alert, opts)),
    },
    credentialLink(item, opts.appUrl),
  );
}

/**
 * An item as the details show it: the item itself, and for a login with a verdict its identity
 * line first, under `identity` (PagerDuty shows the details as a table: one short line reads where
 * `_identity`, kept as it is, is a block of JSON).
 */
function detailsOf(alert: DeliveryAlert, opts: RenderOptions): unknown {
  const line = identityLine(alert, opts);
  return line ? { identity: lineText(line, 300, () => '…'), ...alert.item } : alert.item;
}

/** Items listed until the budget, the rest counted. */
function listed(alerts: DeliveryAlert[], maxItems: number, opts: RenderOptions) {
  const items: unknown[] = [];
  let size = 0;
  for (const alert of alerts.slice(0, maxItems)) {
    const item = detailsOf(alert, opts);
    const bytes = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (size + bytes > DIGEST_DETAILS_BYTES) break;
    items.push(item);
    size += bytes;
  }
  return { items, notListed: alerts.length - items.length };
}

function digestTrigger(
  batch: Extract<Batch, { type: 'digest' }>,
  opts: RenderOptions,
  pd: PagerDutyOptions,
): PagerDutyEvent {
  const total = batch.alerts.length;
  const key = webhookIdempotencyKey(opts.destination, deliveryIdsOf(batch.alerts));
  const { items, notListed } = listed(batch.alerts, opts.digest.maxItems, opts);
  if (batch.kind === 'event') {
    const types = digestTypes(batch.alerts);
    return trigger(
      key,
      {
        summary: summaryOf(
          forTenant(
            batchTenant(batch),
            `EXPOSURE DIGEST ${plural(total, 'event')} (${severityCounts(batch.alerts)}): ${types.join(', ')}`,
            ': ',
          ),
        ),
        source: 'exposure-alerts',
        severity: PAGERDUTY_SEVERITY[highestSeverity(batch.alerts) ?? 'info'],
        timestamp: opts.now.toISOString(),
        class: 'exposure_digest',
        custom_details: wellFormedDeep({ kind: 'events', count: total, notListed, items }),
      },
      undefined,
    );
  }
  const domains = digestDomains(batch.alerts);
  // What the lookups found, in the summary before the domains (which may be clipped) and the details.
  const counts = verdictCounts(batch.alerts);
  return trigger(
    key,
    {
      summary: summaryOf(
        forTenant(
          batchTenant(batch),
          `LEAKED CREDENTIALS DIGEST ${plural(total, 'login')}${counts ? ` (${counts})` : ''}: ${domains.join(', ')}`,
          ': ',
        ),
      ),
      source: 'exposure-alerts',
      severity: pd.credentialSeverity,
      timestamp: opts.now.toISOString(),
      class: 'leaked_credentials_digest',
      custom_details: wellFormedDeep({
        kind: 'credentials',
        count: total,
        ...(counts ? { identity: counts } : {}),
        notListed,
        items,
      }),
    },
    undefined,
  );
}

/**
 * One trigger per item, or per digest (over `digest.threshold` alerts, one per kind). Credentials
 * are not grouped here: an incident per login is what the dedup_key rule asks for.
 */
export function renderPagerDuty(
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  pd: PagerDutyOptions,
): Rendered<PagerDutyEvent>[] {
  const batches: Batch[] =
    alerts.length > opts.digest.threshold
      ? planBatches(alerts, opts.digest)
      : alerts.map((alert) =>
          alert.kind === 'event'
            ? { type: 'event', alert }
            : {
                type: 'credentials',
                domain: alert.item.domain.toLowerCase(),
                sourceId: alert.item.source_id,
                alerts: [alert],
              },
        );
  return batches.map((batch) => {
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    const payload =
      batch.type === 'event'
        ? eventTrigger(batch.alert, opts)
        : batch.type === 'credentials'
          ? credentialTrigger(batch.alerts[0] as CredentialDelivery, opts, pd)
          : digestTrigger(batch, opts, pd);
    return { deliveryIds: deliveryIdsOf(covered), payload, summary: batchSummary(batch) };
  });
}

/** The `resolve` that closes what `event` opened (same dedup_key): `destinations test` sends it. */
export function resolveOf(event: PagerDutyEvent): PagerDutyEvent {
  return { event_action: 'resolve', dedup_key: event.dedup_key, client: 'exposure-alerts' };
}

/**
 * What an event breaks of PagerDuty's rules, as readable lines (`config validate` and the tests):
 * the event action, the dedup key's length, and a trigger's summary, source and severity.
 */
export function pagerDutyProblems(event: PagerDutyEvent): string[] {
  const problems: string[] = [];
  if (event.event_action !== 'trigger' && event.event_action !== 'resolve')
    problems.push(`event_action ${String(event.event_action)} is not trigger or resolve`);
  if (!event.dedup_key || event.dedup_key.length > PAGERDUTY_LIMITS.dedupKey)
    problems.push(
      `dedup_key has ${event.dedup_key?.length ?? 0} characters (1 to ${PAGERDUTY_LIMITS.dedupKey})`,
    );
  const bytes = Buffer.byteLength(JSON.stringify(event));
  // Room for the routing key the sender adds.
  if (bytes > PAGERDUTY_LIMITS.bytes - 100) problems.push(`event has ${bytes} bytes (limit 512 KB)`);
  if (event.event_action !== 'trigger') return problems;
  const p = event.payload;
  if (!p) return [...problems, 'a trigger has no payload'];
  if (!p.summary || [...p.summary].length > PAGERDUTY_LIMITS.summary)
    problems.push(
      `summary has ${[...(p.summary ?? '')].length} characters (1 to ${PAGERDUTY_LIMITS.summary})`,
    );
  if (!p.source) problems.push('payload.source is empty');
  if (!['critical', 'error', 'warning', 'info'].includes(p.severity))
    problems.push(`severity ${String(p.severity)} is not critical, error, warning or info`);
  return problems;
}

/** PagerDuty's resolve of an event's own incident (`event:<uid>`); undefined for other changes. */
export function pagerDutyResolve(alert: DeliveryAlert, action: FollowUpAction): PagerDutyEvent | undefined {
  if (alert.kind !== 'event' || !RESOLVING_ACTIONS.has(action.type)) return undefined;
  return { event_action: 'resolve', dedup_key: dedupKey(`event:${alert.key}`), client: 'exposure-alerts' };
}
