/**
 * Discord webhook messages (docs/destinations/discord.md): one embed a message, laid out like the Slack
 * message (the effective severity and the event type as the title, linked to the item; what
 * matched with highlights in bold; who it concerns and where it was found as fields). Upstream text
 * is Markdown-escaped wherever Discord renders Markdown (escape.ts), every message says
 * `allowed_mentions: {"parse": []}`, and every embed is built within Discord's limits, which
 * `discordProblems` checks (limits.ts). A password never appears, not even masked: only the login and the kind
 * of secret the upstream holds.
 *
 * Grouping and digests are Slack's (group.ts): a credential group too long for one embed is split
 * into numbered parts, each covering exactly the logins it lists; a digest lists what fits and
 * counts the rest.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { ellipsis, lineText } from '../../render/escape.ts';
import {
  formatTime,
  hashKind,
  identifierNames,
  joinList,
  plural,
  severityText,
  tagsOf,
} from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  deliveryIdsOf,
  digestDomains,
  digestLeaks,
  digestTypes,
  type EventDelivery,
  fillLines,
  highlightsOf,
  mostSevereFirst,
  partsWithin,
  partWords,
  planBatches,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { identityLine, verdictCounts } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import type { Severity } from '../../upstream/event-types.ts';
import { discordText, highlightToDiscord } from './escape.ts';
import { DISCORD_LIMITS, type DiscordEmbed, type DiscordPayload, embedChars } from './limits.ts';

/** Room kept under the total for the notes a fitted embed may gain. */
const TOTAL_BUDGET = DISCORD_LIMITS.total - 100;
const URL_MAX = 2_000;

const COLOR: Record<Severity, number> = {
  critical: 0xb71c1c,
  high: 0xe65100,
  medium: 0xf9a825,
  low: 0x1565c0,
  info: 0x757575,
};
const CREDENTIAL_COLOR = 0xb71c1c;

/** `Acme · `, escaped, before the rest of a title about a `tenants` entry's items. */
const named = (tenant: TenantRef | undefined) =>
  tenant ? `${discordText(tenant.name, 60, ellipsis)} · ` : '';

/** A message of one embed, whose mentions Discord never parses. */
export function discordMessage(embed: DiscordEmbed): DiscordPayload {
  return { embeds: [embed], allowed_mentions: { parse: [] } };
}

const field = (name: string, value: string, inline = false) => ({
  name,
  value: value || '—',
  ...(inline ? { inline } : {}),
});
const list = (values: string[], max: number) => joinList(values, max, (v) => discordText(v, 200, ellipsis));
const footer = (text: string) => ({ text: lineText(text, 1_000, ellipsis) });
const link = (url: string | undefined) => (url && url.length <= URL_MAX ? { url } : {});
const isoTime = (value: string | null | undefined) => {
  const ms = Date.parse(value ?? '');
  return Number.isFinite(ms) ? { timestamp: new Date(ms).toISOString() } : {};
};

/** The description's room once the rest of the embed is counted. */
function room(embed: DiscordEmbed): number {
  return Math.min(DISCORD_LIMITS.description, TOTAL_BUDGET - embedChars({ ...embed, description: '' }));
}

function eventEmbed(alert: EventDelivery, opts: RenderOptions): DiscordEmbed {
  const item = alert.item;
  const severity = eventSeverity(item);
  const notes = item.tenant_metadata?.notes;
  const embed: DiscordEmbed = {
    title: `${severity.toUpperCase()} · ${named(alert.tenant)}${discordText(item.metadata.type, 180, ellipsis)}`,
    ...link(eventLink(item, opts.appUrl)),
    color: COLOR[severity],
    fields: [
      field('Identifiers', list(identifierNames(item), 1_000)),
      field('Tags', list(tagsOf(item), 500)),
      field('Severity', discordText(severityText(item), 100), true),
      field('Created (estimated)', formatTime(item.metadata.estimated_created_at), true),
      field('Matched', formatTime(item.metadata.matched_at), true),
      field('Item', discordText(item.metadata.uid, 400, ellipsis)),
      ...(notes ? [field('Notes', discordText(notes, 600, undefined, { lines: true }))] : []),
    ],
    footer: footer(`source ${alert.source} · routes ${alert.routes.join(', ')}`),
    ...isoTime(item.metadata.matched_at),
  };
  const highlights = highlightsOf(alert).map(
    (h) => `${discordText(h.field, 100, ellipsis)}: ${highlightToDiscord(h.text, 600)}`,
  );
  const matched = highlights.length
    ? fillLines(
        highlights,
        room(embed) - 20,
        (n) => `… (truncated, ${plural(n, 'more highlight')} not shown)`,
      ).text
    : 'No highlighted text.';
  return { ...embed, description: `**What matched**\n${matched}` };
}

/**
 * A login's identity verdict on the line under it, Markdown-escaped as upstream text (the
 * provider's display name is in it); part of the login's entry, so the parts and the digest's fill
 * count it. Nothing for a login without a verdict.
 */
function verdictLine(alert: CredentialDelivery, opts: RenderOptions): string {
  const line = identityLine(alert, opts);
  return line ? `\n  ↳ ${discordText(line, 300, ellipsis)}` : '';
}

/** The digest's count of verdicts (our words and digits), first among its fields, when any login has one. */
function verdictField(alerts: CredentialDelivery[]) {
  const counts = verdictCounts(alerts);
  return counts ? [field('Identity', counts)] : [];
}

function credentialLine(alert: CredentialDelivery, opts: RenderOptions): string {
  return `• ${discordText(alert.item.identity_name, 200, ellipsis)} (${discordText(hashKind(alert.item), 40, ellipsis)})${verdictLine(alert, opts)}`;
}

function credentialEmbeds(
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: RenderOptions,
): Rendered<DiscordPayload>[] {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const embed = (part: string, logins: string, description: string): DiscordEmbed => ({
    title: `${named(batchTenant(batch))}Leaked credentials · ${discordText(batch.domain, 160, ellipsis)}${part}`,
    ...link(batch.alerts.map((a) => credentialLink(a.item, opts.appUrl)).find(Boolean)),
    color: CREDENTIAL_COLOR,
    description,
    fields: [
      field('Leak', discordText(source?.name ?? batch.sourceId, 300, ellipsis)),
      field('Breached', formatTime(source?.breached_at), true),
      field('Leaked', formatTime(source?.leaked_at), true),
      field('Logins', logins, true),
      field('Source id', discordText(batch.sourceId, 300, ellipsis)),
    ],
    footer: footer(
      `source ${batch.alerts[0]?.source ?? ''} · routes ${routesOf(batch.alerts).join(', ')} · passwords are never sent to Discord`,
    ),
  });
  // The part note and the login count take a few characters more than this sample of them.
  const max = room(embed(' (part 1000 of 1000)', '100000 (10000 in this part)', ''));
  const line = (alert: CredentialDelivery) => credentialLine(alert, opts);
  const parts = partsWithin(batch.alerts, (alert) => line(alert).length + 1, max);
  return parts.map((part, i) => {
    const { partNote, logins } = partWords(batch.alerts.length, part.length, i, parts.length);
    return {
      deliveryIds: deliveryIdsOf(part),
      payload: discordMessage(embed(partNote, logins, part.map(line).join('\n'))),
      summary: `${batchSummary(batch)}${partNote}`,
    };
  });
}

function digestEmbed(batch: Extract<Batch, { type: 'digest' }>, opts: RenderOptions): DiscordEmbed {
  const rest = (n: number) => `… and ${n} more, not listed`;
  if (batch.kind === 'event') {
    const alerts = mostSevereFirst(batch.alerts);
    const embed: DiscordEmbed = {
      title: `${named(batchTenant(batch))}${plural(alerts.length, 'new event')} (${severityCounts(alerts)})`,
      color: COLOR[eventSeverity((alerts[0] as EventDelivery).item)],
      fields: [field('Types', list(digestTypes(alerts), 1_000))],
      footer: footer(`destination ${opts.destination} · routes ${routesOf(alerts).join(', ')}`),
    };
    const lines = alerts
      .slice(0, opts.digest.maxItems)
      .map(
        (a) =>
          `• **${eventSeverity(a.item).toUpperCase()}** ${discordText(a.item.metadata.type, 80, ellipsis)} · ${discordText(a.item.metadata.uid, 160, ellipsis)}`,
      );
    const shown = fillLines(lines, room(embed), (n) => rest(n + alerts.length - lines.length));
    const tail = shown.shown === lines.length && lines.length < alerts.length;
    return {
      ...embed,
      description: tail ? `${shown.text}\n${rest(alerts.length - lines.length)}` : shown.text,
    };
  }
  const alerts = batch.alerts;
  const embed: DiscordEmbed = {
    title: `${named(batchTenant(batch))}${plural(alerts.length, 'leaked credential')}`,
    color: CREDENTIAL_COLOR,
    fields: [
      ...verdictField(alerts),
      field('Domains', list(digestDomains(alerts), 1_000)),
      field('Leaks', list(digestLeaks(alerts), 1_000)),
    ],
    footer: footer(
      `destination ${opts.destination} · routes ${routesOf(alerts).join(', ')} · passwords are never sent to Discord`,
    ),
  };
  const lines = alerts
    .slice(0, opts.digest.maxItems)
    .map(
      (a) =>
        `• ${discordText(a.item.identity_name, 120, ellipsis)} · ${discordText(a.item.domain, 80, ellipsis)} (${discordText(hashKind(a.item), 30, ellipsis)})${verdictLine(a, opts)}`,
    );
  const shown = fillLines(lines, room(embed), (n) => rest(n + alerts.length - lines.length));
  const tail = shown.shown === lines.length && lines.length < alerts.length;
  return {
    ...embed,
    description: tail ? `${shown.text}\n${rest(alerts.length - lines.length)}` : shown.text,
  };
}

/**
 * One Discord message per event, per credential group (or part of one), or per digest (over
 * `digest.threshold` alerts). Each Rendered lists exactly the alerts its embed shows or counts.
 */
export function renderDiscord(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<DiscordPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch): Rendered<DiscordPayload>[] => {
    if (batch.type === 'credentials') return credentialEmbeds(batch, opts);
    const embed = batch.type === 'event' ? eventEmbed(batch.alert, opts) : digestEmbed(batch, opts);
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    return [
      { deliveryIds: deliveryIdsOf(covered), payload: discordMessage(embed), summary: batchSummary(batch) },
    ];
  });
}
