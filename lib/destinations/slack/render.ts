/**
 * Slack Block Kit messages for a batch of alerts bound for one Slack destination.
 *
 * Every piece of upstream text goes through escape.ts (so it can never ping or forge a link), the
 * messages are built within Slack's limits (limits.ts, which also clips whatever is still
 * over and says so), and a password never appears: not even masked, only the login and the kind of
 * secret the upstream holds.
 *
 * A credential group that would not fit one compact message is split into numbered parts, each
 * covering exactly the logins it lists, so no login is counted as delivered without being shown.
 * With `actions.slack`, a Slack app's message gives each login with an identity verdict its own
 * section and an account menu beside it (identity-menu.ts); without either, nothing changes.
 */
import { eventSeverity } from '../../model.ts';
import {
  ellipsis,
  escapeSlack,
  highlightPlain,
  highlightToSlack,
  slackLines,
  slackText,
} from '../../render/escape.ts';
import {
  formatTime,
  hashKind,
  identifierNames,
  joinList,
  plural,
  SEVERITY_EMOJI,
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
  forTenant,
  highlightsOf,
  mostSevereFirst,
  planBatches,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { identityLine, verdictCounts } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { type Block, context, header, packSections, SECTION_BUDGET, section } from './blocks.ts';
import { actionButtons } from './buttons.ts';
import { identityMenu, jsonLength, MESSAGE_JSON_BUDGET, menuBlocks, menuParts } from './identity-menu.ts';
import { fitSlackPayload, SLACK_LIMITS, type SlackPayload } from './limits.ts';
import type { SlackOptions, SlackRenderOptions } from './types.ts';

/** Characters of listed lines per message: keeps the whole message well under ~12,000. */
export const LINES_BUDGET = 7_500;
const HIGHLIGHT_MAX = 1_000;
const URL_MAX = 1_500;

const fields = (pairs: [string, string][]): Block => ({
  type: 'section',
  fields: pairs.map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${value || '–'}` })),
});

/** `<url|label>`, or nothing when the URL is too long to be worth a link. */
export function slackLink(url: string | undefined, label: string): string | undefined {
  if (!url || url.length > URL_MAX) return undefined;
  return `<${escapeSlack(url)}|${slackText(label, 200)}>`;
}

export const listOf = (values: string[], max: number) =>
  joinList(values, max, (v) => slackText(v, 120, ellipsis));

function eventMessage(alert: EventDelivery, opts: SlackRenderOptions): SlackPayload {
  const item = alert.item;
  const severity = eventSeverity(item);
  const type = item.metadata.type;
  const highlights = highlightsOf(alert);
  const lines: string[] = [];
  let used = 0;
  for (const h of highlights) {
    const line = `*${slackText(h.field.replaceAll('*', ''), 80, ellipsis)}:* ${highlightToSlack(h.text, HIGHLIGHT_MAX, undefined, { lines: true })}`;
    if (used + line.length + 1 > SECTION_BUDGET) break;
    lines.push(line);
    used += line.length + 1;
  }
  if (lines.length < highlights.length) {
    lines.push(`_… (truncated, ${plural(highlights.length - lines.length, 'more highlight')} not shown)_`);
  }
  const names = identifierNames(item);
  const link = slackLink(eventLink(item, opts.appUrl), 'Open in the web app');
  const notes = item.tenant_metadata?.notes;
  const blocks: Block[] = [
    header(`${SEVERITY_EMOJI[severity]} ${severity.toUpperCase()} · ${forTenant(alert.tenant, type)}`),
    section(lines.length ? lines.join('\n') : '_No highlighted text._'),
    fields([
      ['Severity', slackText(severityText(item), 200)],
      ['Type', slackText(type, 200)],
      ['Identifiers', listOf(names, 1_000)],
      ['Tags', listOf(tagsOf(item), 1_000)],
      ['Created (estimated)', slackText(formatTime(item.metadata.estimated_created_at), 100)],
      ['Matched', slackText(formatTime(item.metadata.matched_at), 100)],
      ...(notes ? [['Notes', slackLines(notes, 500)] as [string, string]] : []),
    ]),
    section(link ?? '_No link to the web app for this item._'),
    context(
      `${alert.tenant ? `tenant ${slackText(alert.tenant.name, 200)} (${alert.tenant.id}) · ` : ''}uid ${slackText(item.metadata.uid, 400)} · source ${slackText(alert.source, 200)} · routes ${slackText(alert.routes.join(', '), 400)}`,
    ),
    ...(opts.buttons ? actionButtons(alert, opts.flags ?? {}, opts.webhook ? 'webhook' : 'app') : []),
  ];
  const first = highlights[0] ? `: ${highlightPlain(highlights[0].text)}` : '';
  const about = names.length ? ` for ${names.join(', ')}` : '';
  const text = slackText(
    forTenant(alert.tenant, `${severity.toUpperCase()} ${type} exposure${about}${first}`, ': '),
    500,
  );
  return { text, blocks };
}

/**
 * A login's identity verdict on the line under it (render/identity.ts), escaped as upstream text
 * since the provider's display name is in it; nothing for a login without a verdict. Part of the
 * login's own entry, so a section or a reply never separates the two and the budgets count both.
 */
export function verdictLine(alert: CredentialDelivery, opts: Pick<RenderOptions, 'identityLabel'>): string {
  const line = identityLine(alert, opts);
  return line ? `\n      ↳ ${slackText(line, 300, ellipsis)}` : '';
}

/** `*Identity:* 12 at risk, 30 rotated` for a digest's summary, when any login has a verdict. */
export function verdictSummary(alerts: CredentialDelivery[]): string {
  const counts = verdictCounts(alerts);
  return counts ? `\n*Identity:* ${slackText(counts, 500)}` : '';
}

function credentialLine(alert: CredentialDelivery, opts: SlackRenderOptions): string {
  const link = slackLink(credentialLink(alert.item, opts.appUrl), 'event');
  return `• ${slackText(alert.item.identity_name, 200)} (${slackText(hashKind(alert.item), 40, ellipsis)})${link ? ` ${link}` : ''}${verdictLine(alert, opts)}`;
}

/** Splits lines into chunks of at most `budget` characters (and at least one line each). */
function chunk<E extends { line: string }>(items: E[], budget: number): E[][] {
  const chunks: E[][] = [];
  let current: E[] = [];
  let size = 0;
  for (const entry of items) {
    if (current.length && size + entry.line.length + 1 > budget) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(entry);
    size += entry.line.length + 1;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

function credentialMessages(
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: SlackRenderOptions,
): Rendered<SlackPayload>[] {
  const entries = batch.alerts.map((alert) => {
    const menu = identityMenu(alert, opts);
    return { value: alert, line: credentialLine(alert, opts), ...(menu ? { menu } : {}) };
  });
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const leak = source?.name ?? batch.sourceId;
  const frame = (partNote: string, count: string, alerts: CredentialDelivery[]) => ({
    top: [
      header(forTenant(batchTenant(batch), `Leaked credentials · ${batch.domain}${partNote}`)),
      fields([
        ['Leak', slackText(leak, 500)],
        ['Logins', count],
        ['Breached', slackText(formatTime(source?.breached_at), 100)],
        ['Leaked', slackText(formatTime(source?.leaked_at), 100)],
        ['Domain', slackText(batch.domain, 300)],
        ['Source id', slackText(batch.sourceId, 300)],
      ]),
    ],
    bottom: context(
      `source ${slackText(alerts[0]?.source ?? '', 200)} · routes ${slackText(routesOf(alerts).join(', '), 400)} · passwords are never sent to Slack`,
    ),
  });
  // With account menus (identity-menu.ts) a part is also bounded by its blocks and its JSON: the
  // room is what the frame leaves, measured at its widest (and a margin for another part's source).
  const menus = entries.some((e) => e.menu);
  const widest = frame(' (part 9999 of 9999)', '99999 (99999 in this part)', batch.alerts);
  const parts = menus
    ? menuParts(entries, {
        blocks: SLACK_LIMITS.blocks - 3,
        chars: LINES_BUDGET,
        json: MESSAGE_JSON_BUDGET - jsonLength([...widest.top, widest.bottom]) - 400,
      })
    : chunk(entries, LINES_BUDGET);
  return parts.map((part, i) => {
    const partNote = parts.length > 1 ? ` (part ${i + 1} of ${parts.length})` : '';
    const alerts = part.map((e) => e.value);
    const { top, bottom } = frame(
      partNote,
      `${batch.alerts.length}${parts.length > 1 ? ` (${part.length} in this part)` : ''}`,
      alerts,
    );
    const blocks: Block[] = [
      ...top,
      ...(menus ? menuBlocks(part) : packSections(part.map((e) => e.line))),
      bottom,
    ];
    const text = slackText(
      forTenant(
        batchTenant(batch),
        `${plural(batch.alerts.length, 'leaked credential')} for ${batch.domain} in ${leak}${partNote}`,
        ': ',
      ),
      500,
    );
    return {
      deliveryIds: deliveryIdsOf(alerts),
      payload: fitSlackPayload({ text, blocks }),
      summary: `${batchSummary(batch)}${partNote}`,
    };
  });
}

export function eventDigestLine(alert: EventDelivery, opts: SlackRenderOptions): string {
  const severity = eventSeverity(alert.item);
  const names = listOf(identifierNames(alert.item), 120);
  const first = highlightsOf(alert)[0];
  const excerpt = first ? ` — ${highlightToSlack(first.text, 160, ellipsis)}` : '';
  const url = eventLink(alert.item, opts.appUrl);
  const link = url && url.length <= 300 ? ` ${slackLink(url, 'open')}` : '';
  return `${SEVERITY_EMOJI[severity]} *${severity.toUpperCase()}* ${slackText(alert.item.metadata.type, 60, ellipsis)}${names ? ` · ${names}` : ''}${excerpt}${link}`;
}

export function credentialDigestLine(alert: CredentialDelivery, opts: SlackRenderOptions): string {
  const leak = alert.item.source?.name ?? alert.item.source_id;
  return `• ${slackText(alert.item.identity_name, 120, ellipsis)} — ${slackText(alert.item.domain, 80, ellipsis)} — ${slackText(leak, 80, ellipsis)} (${slackText(hashKind(alert.item), 30, ellipsis)})${verdictLine(alert, opts)}`;
}

/**
 * Lines for at most `maxItems` alerts, and no more than fit the budget; the rest are counted, not
 * listed. Lines are made only until the budget is full: a digest of 5,000 shows about 40 of them.
 */
export function digestLines<T>(alerts: T[], line: (alert: T) => string, maxItems: number) {
  const shown: string[] = [];
  let size = 0;
  for (const alert of alerts.slice(0, maxItems)) {
    const next = line(alert);
    if (size + next.length + 1 > LINES_BUDGET) break;
    shown.push(next);
    size += next.length + 1;
  }
  return { shown, rest: alerts.length - shown.length };
}

function digestMessage(batch: Extract<Batch, { type: 'digest' }>, opts: SlackRenderOptions): SlackPayload {
  const total = batch.alerts.length;
  let title: string;
  let summary: string;
  let listed: { shown: string[]; rest: number };
  let fallback: string;
  if (batch.kind === 'event') {
    // Most severe first, so the lines that make the cut are the ones that matter.
    const sorted = mostSevereFirst(batch.alerts);
    const types = digestTypes(batch.alerts);
    title = forTenant(batchTenant(batch), `Exposure digest · ${plural(total, 'event')}`);
    summary = `*${plural(total, 'event')}*: ${severityCounts(batch.alerts)}\n*Types:* ${listOf(types, 1_000)}`;
    listed = digestLines(sorted, (a) => eventDigestLine(a, opts), opts.digest.maxItems);
    fallback = `${title}: ${severityCounts(batch.alerts)}`;
  } else {
    const domains = digestDomains(batch.alerts);
    const leaks = digestLeaks(batch.alerts);
    title = forTenant(batchTenant(batch), `Leaked credentials digest · ${plural(total, 'login')}`);
    const counts = verdictCounts(batch.alerts);
    summary = `*${plural(total, 'leaked login')}*${verdictSummary(batch.alerts)}\n*Domains:* ${listOf(domains, 1_000)}\n*Leaks:* ${listOf(leaks, 1_000)}`;
    listed = digestLines(batch.alerts, (a) => credentialDigestLine(a, opts), opts.digest.maxItems);
    fallback = `${title} across ${plural(domains.length, 'domain')}${counts ? `: ${counts}` : ''}`;
  }
  const { shown, rest } = listed;
  const blocks: Block[] = [
    header(title),
    section(summary),
    ...packSections(shown),
    ...(rest > 0 ? [section(`_… and ${plural(rest, 'more item')} not listed (${total} in all)._`)] : []),
    context(
      `routes ${slackText(routesOf(batch.alerts).join(', '), 400)}${batch.kind === 'credential' ? ' · passwords are never sent to Slack' : ''}`,
    ),
  ];
  return { text: slackText(fallback, 500), blocks };
}

/** Slack's render options from the shared ones (its own, from its face, in `kindOptions`). */
export function slackOptions(opts: RenderOptions<SlackOptions>): SlackRenderOptions {
  return { ...opts, ...(opts.kindOptions?.buttons ? { buttons: true } : {}) };
}

/**
 * One Slack message per event, per credential group, or per digest (over `digest.threshold`
 * alerts). Each Rendered lists exactly the alerts its message shows or, for a digest, counts.
 */
export function renderSlack(alerts: DeliveryAlert[], opts: SlackRenderOptions): Rendered<SlackPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch) => renderSlackBatch(batch, opts));
}

/** The messages of one batch (render/group.ts): an event, a credential group, or a digest. */
export function renderSlackBatch(batch: Batch, opts: SlackRenderOptions): Rendered<SlackPayload>[] {
  if (batch.type === 'credentials') return credentialMessages(batch, opts);
  const payload = batch.type === 'event' ? eventMessage(batch.alert, opts) : digestMessage(batch, opts);
  const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
  return [
    { deliveryIds: deliveryIdsOf(covered), payload: fitSlackPayload(payload), summary: batchSummary(batch) },
  ];
}
