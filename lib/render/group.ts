/**
 * How one call's alerts become messages, shared by the Slack, e-mail and console renderers
 * (docs/configuration.md, `digest`): over `threshold` alerts, one digest per kind present; at or
 * below it, each event alone and credentials grouped by (domain, source). Every alert lands in
 * exactly one batch, in the order its kind or group first appears.
 */
import type { DeliveryAlert, TenantRef } from '../model.ts';
import { eventSeverity } from '../model.ts';
import { takeTurns } from '../turns.ts';
import { type Severity, severityRank } from '../upstream/event-types.ts';

export type EventDelivery = Extract<DeliveryAlert, { kind: 'event' }>;
export type CredentialDelivery = Extract<DeliveryAlert, { kind: 'credential' }>;

export type Batch =
  | { type: 'event'; alert: EventDelivery }
  | {
      type: 'credentials';
      domain: string;
      sourceId: string;
      sourceName?: string;
      alerts: CredentialDelivery[];
    }
  | { type: 'digest'; kind: 'event'; alerts: EventDelivery[] }
  | { type: 'digest'; kind: 'credential'; alerts: CredentialDelivery[] };

/**
 * The alerts of each tenant apart, in the order each tenant first appears: a message is about one
 * tenant, and names it (docs/configuration.md). One group when none has a tenant.
 */
export function byTenant<T extends { tenant?: TenantRef }>(alerts: readonly T[]): T[][] {
  const groups = new Map<number | undefined, T[]>();
  for (const alert of alerts) {
    const list = groups.get(alert.tenant?.id);
    if (list) list.push(alert);
    else groups.set(alert.tenant?.id, [alert]);
  }
  return [...groups.values()];
}

/** The tenant a batch is about (planBatches never mixes tenants in one). */
export function batchTenant(batch: Batch): TenantRef | undefined {
  return batch.type === 'event' ? batch.alert.tenant : batch.alerts[0]?.tenant;
}

/** `text` after the tenant's name, for a message about a `tenants` entry's items. */
export function forTenant(tenant: TenantRef | undefined, text: string, between = ' · '): string {
  return tenant ? `${tenant.name}${between}${text}` : text;
}

/**
 * Each tenant's alerts batched on their own (digests count per tenant), the tenants taking turns:
 * the first message of each, then the second of each, so one tenant's flood does not hold back
 * another's alerts (docs/configuration.md).
 */
export function planBatches(alerts: DeliveryAlert[], digest: { threshold: number }): Batch[] {
  const tenants = byTenant(alerts);
  return tenants.length > 1 ? takeTurns(tenants.map((own) => planOne(own, digest))) : planOne(alerts, digest);
}

/**
 * For tickets (Jira, ServiceNow): first, the items fixed to a ticket whose create may have
 * happened (`ticketLabel`), each label's items as one ticket, exactly as they were, whatever the
 * threshold says now; then the rest: one batch per item, or, for a tenant with more than
 * `threshold` of them, that tenant's digests; the tenants taking turns. A ticket is never a group
 * of logins.
 */
export function ticketBatches(alerts: DeliveryAlert[], digest: { threshold: number }): Batch[] {
  const pinned = new Map<string, DeliveryAlert[]>();
  const free: DeliveryAlert[] = [];
  for (const alert of alerts) {
    if (!alert.ticketLabel) free.push(alert);
    else pinned.set(alert.ticketLabel, [...(pinned.get(alert.ticketLabel) ?? []), alert]);
  }
  const plan = (own: DeliveryAlert[]): Batch[] =>
    own.length > digest.threshold ? planOne(own, digest) : own.map(single);
  const tenants = byTenant(free);
  return [
    ...[...pinned.values()].flatMap(asOneTicket),
    ...(tenants.length > 1 ? takeTurns(tenants.map(plan)) : plan(free)),
  ];
}

/** An item as a ticket of its own. */
function single(alert: DeliveryAlert): Batch {
  return alert.kind === 'event'
    ? { type: 'event', alert }
    : { type: 'credentials', domain: alert.item.domain, sourceId: alert.item.source_id, alerts: [alert] };
}

/**
 * The items of one fixed ticket as that ticket: one item alone, several as a digest. (Its items are
 * of one kind, having been one batch; should they not be, each kind is a batch, whose label then
 * differs from the fixed one, and the sender searches for the fixed one instead of sending it.)
 */
function asOneTicket(alerts: DeliveryAlert[]): Batch[] {
  if (alerts.length === 1) return [single(alerts[0] as DeliveryAlert)];
  const events = alerts.filter((a): a is EventDelivery => a.kind === 'event');
  const credentials = alerts.filter((a): a is CredentialDelivery => a.kind === 'credential');
  const batches: Batch[] = [];
  if (events.length) batches.push({ type: 'digest', kind: 'event', alerts: events });
  if (credentials.length) batches.push({ type: 'digest', kind: 'credential', alerts: credentials });
  return batches;
}

function planOne(alerts: DeliveryAlert[], digest: { threshold: number }): Batch[] {
  if (alerts.length > digest.threshold) {
    const events = alerts.filter((a): a is EventDelivery => a.kind === 'event');
    const credentials = alerts.filter((a): a is CredentialDelivery => a.kind === 'credential');
    const batches: Batch[] = [];
    const eventsFirst = alerts[0]?.kind !== 'credential';
    const eventDigest: Batch = { type: 'digest', kind: 'event', alerts: events };
    const credentialDigest: Batch = { type: 'digest', kind: 'credential', alerts: credentials };
    for (const batch of eventsFirst ? [eventDigest, credentialDigest] : [credentialDigest, eventDigest]) {
      if (batch.alerts.length) batches.push(batch);
    }
    return batches;
  }
  const batches: Batch[] = [];
  const groups = new Map<string, Extract<Batch, { type: 'credentials' }>>();
  for (const alert of alerts) {
    if (alert.kind === 'event') {
      batches.push({ type: 'event', alert });
      continue;
    }
    const domain = alert.item.domain.toLowerCase();
    const sourceId = alert.item.source_id;
    const key = JSON.stringify([domain, sourceId]);
    const group = groups.get(key);
    if (group) {
      group.alerts.push(alert);
      group.sourceName ??= alert.item.source?.name;
    } else {
      const created: Extract<Batch, { type: 'credentials' }> = {
        type: 'credentials',
        domain,
        sourceId,
        ...(alert.item.source?.name ? { sourceName: alert.item.source.name } : {}),
        alerts: [alert],
      };
      groups.set(key, created);
      batches.push(created);
    }
  }
  return batches;
}

export function deliveryIdsOf(alerts: DeliveryAlert[]): string[] {
  return alerts.map((a) => a.deliveryId);
}

export function highestSeverity(alerts: EventDelivery[]): Severity | undefined {
  let best: Severity | undefined;
  for (const alert of alerts) {
    const severity = eventSeverity(alert.item);
    if (best === undefined || severityRank(severity) > severityRank(best)) best = severity;
  }
  return best;
}

/** Counts per value, most frequent first (ties in first-seen order). */
export function countBy<T>(values: T[]): [T, number][] {
  const counts = new Map<T, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/** `value (count)` for each value, most frequent first: the type, domain and leak lists of digests. */
export function countedList(values: string[]): string[] {
  return countBy(values).map(([value, n]) => `${value} (${n})`);
}

/** What a digest counts: event types, or the domains and leaks of credentials. */
export const digestTypes = (alerts: EventDelivery[]) => countedList(alerts.map((a) => a.item.metadata.type));
export const digestDomains = (alerts: CredentialDelivery[]) =>
  countedList(alerts.map((a) => a.item.domain.toLowerCase()));
export const digestLeaks = (alerts: CredentialDelivery[]) =>
  countedList(alerts.map((a) => a.item.source?.name ?? a.item.source_id));

/** Events most severe first, in arrival order within a severity: the lines a digest lists first. */
export function mostSevereFirst(alerts: EventDelivery[]): EventDelivery[] {
  return alerts
    .map((alert, i) => ({ alert, i, rank: severityRank(eventSeverity(alert.item)) }))
    .sort((a, b) => b.rank - a.rank || a.i - b.i)
    .map((e) => e.alert);
}

/** Severity counts from critical down, skipping zeros: `2 critical, 5 high`. */
export function severityCounts(alerts: EventDelivery[]): string {
  const counts = new Map<Severity, number>();
  for (const a of alerts) {
    const s = eventSeverity(a.item);
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => severityRank(b[0]) - severityRank(a[0]))
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
}

/** The sorted union of the routes of `alerts`. */
export function routesOf(alerts: DeliveryAlert[]): string[] {
  return [...new Set(alerts.flatMap((a) => a.routes))].sort();
}

/** Highlight strings of an event, field by field, in the upstream's order. */
export function highlightsOf(alert: EventDelivery): { field: string; text: string }[] {
  return Object.entries(alert.item.highlights ?? {}).flatMap(([field, texts]) =>
    texts.map((text) => ({ field, text })),
  );
}

/** A short log line for a batch: kind, count and keys, never item text or passwords. */
export function batchSummary(batch: Batch): string {
  const clip = (s: string) => (s.length > 120 ? `${s.slice(0, 117)}...` : s);
  const safe = (s: string) => clip(s.replace(/[^\w.@:/%+~-]/g, '?'));
  switch (batch.type) {
    case 'event':
      return `event ${eventSeverity(batch.alert.item)} ${safe(batch.alert.item.metadata.type)} ${safe(batch.alert.key)}`;
    case 'credentials':
      return `${batch.alerts.length} credential${batch.alerts.length === 1 ? '' : 's'} ${safe(batch.domain)} source ${safe(batch.sourceId)}`;
    default:
      return `digest of ${batch.alerts.length} ${batch.kind === 'event' ? 'events' : 'credentials'}`;
  }
}

/**
 * `items` in order, in as few parts as fit `max` (a part's size is the sum of its items' sizes;
 * an item larger than `max` is a part alone), each item in exactly one part: a credential group
 * too long for one message, split so every login is listed once.
 */
export function partsWithin<T>(items: readonly T[], size: (item: T) => number, max: number): T[][] {
  const parts: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length && used + n > max) {
      parts.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += n;
  }
  if (current.length) parts.push(current);
  return parts;
}

/** How a part of a split group names itself: ` (part 2 of 3)`, and `45 (20 in this part)` logins. */
export function partWords(total: number, size: number, index: number, parts: number) {
  return {
    partNote: parts > 1 ? ` (part ${index + 1} of ${parts})` : '',
    logins: `${total}${parts > 1 ? ` (${size} in this part)` : ''}`,
  };
}

/**
 * `lines` joined until `max` characters, then one line from `rest` counting the lines left out
 * (room kept for it); the text and how many lines it shows. A digest's list in a message of
 * bounded size.
 */
export function fillLines(
  lines: string[],
  max: number,
  rest: (n: number) => string,
): { text: string; shown: number } {
  let text = '';
  let shown = 0;
  for (const line of lines) {
    const more = lines.length - shown - 1;
    const reserve = more > 0 ? rest(more).length + 1 : 0;
    if (text.length + line.length + 1 + reserve > max) break;
    text += `${text ? '\n' : ''}${line}`;
    shown++;
  }
  if (shown < lines.length) text += `${text ? '\n' : ''}${rest(lines.length - shown)}`;
  return { text, shown };
}
