/**
 * Mattermost posts for alerts and notices: Markdown `text`, every piece of upstream text in a code
 * span (markdown.ts says why that is the one safe place, and what our own words may hold), within
 * 16,383 characters a post.
 *
 * Why 16,383 matters more than a refusal: the server does not refuse a longer text, it splits it
 * into several posts, and a split in the middle of a code span would leave upstream text live in
 * both halves. So every post is built to fit, and `problems` checks it.
 *
 * An event is one post; a credential group one post, or numbered parts when its logins do not fit
 * one, each part covering exactly the logins it lists; over the threshold, a digest listing what
 * fits (at most `digest.maxItems`) and counting the rest. Every post names its tenant. A password
 * never appears, not even masked: only the login and the kind of secret the upstream holds.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { formatTime, hashKind, identifierNames, plural, severityText, tagsOf } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  countedList,
  deliveryIdsOf,
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
import { TEST_MARK } from '../../render/notice.ts';
import type { DeliveryAlert, Notice, Rendered, RenderOptions } from '../../render/types.ts';
import {
  boldCode,
  chars,
  code,
  codeList,
  highlight,
  linkLine,
  liveMarkup,
  MATTERMOST_MAX_CHARS,
} from './markdown.ts';
import type { MattermostDestination } from './types.ts';

/** An incoming webhook's JSON body, as we send it. */
export interface MattermostPayload {
  text: string;
  /** The channel's name (or `@user`) instead of the webhook's own channel, when configured. */
  channel?: string;
  /** The name shown on the post, when configured (the server must allow overriding it). */
  username?: string;
}

/** What a post may hold, kept under the limit by room for the notes a fitted post gains. */
const BUDGET = MATTERMOST_MAX_CHARS - 300;

const SEVERITY_WORD: Record<string, string> = {
  critical: 'CRITICAL',
  high: 'HIGH',
  medium: 'MEDIUM',
  low: 'LOW',
  info: 'INFO',
};
const severityWord = (s: string) => SEVERITY_WORD[s] ?? code(s, 20);

/** `` `Acme` · `` before the rest of a title about a `tenants` entry's items. */
const named = (tenant: TenantRef | undefined) => (tenant ? `${code(tenant.name, 100)} · ` : '');

function post(destination: MattermostDestination, text: string): MattermostPayload {
  return {
    text,
    ...(destination.channel ? { channel: destination.channel } : {}),
    ...(destination.username ? { username: destination.username } : {}),
  };
}

const footer = (what: string, alerts: DeliveryAlert[], tail = '') =>
  `${what} · routes ${codeList(routesOf(alerts), 400, 100)}${tail}`;

function eventText(alert: EventDelivery, opts: RenderOptions): string {
  const item = alert.item;
  const notes = item.tenant_metadata?.notes;
  const head = [
    `#### ${severityWord(eventSeverity(item))} · ${named(alert.tenant)}${code(item.metadata.type, 180)}`,
    `**Identifiers** ${codeList(identifierNames(item), 1_500)}`,
    `**Tags** ${codeList(tagsOf(item), 600, 100)}`,
    `**Severity** ${code(severityText(item), 60)} · **Created (estimated)** ${code(formatTime(item.metadata.estimated_created_at), 60)} · **Matched** ${code(formatTime(item.metadata.matched_at), 60)}`,
    `**Item** ${code(item.metadata.uid, 400)}`,
    ...(notes ? [`**Notes** ${code(notes, 1_000)}`] : []),
    '**What matched**',
  ].join('\n');
  const tail = `${footer(`source ${code(alert.source, 200)}`, [alert])}${linkLine(eventLink(item, opts.appUrl))}`;
  const lines = highlightsOf(alert).map((h) => `- ${code(h.field, 100)} ${highlight(h.text, 1_500)}`);
  const matched = lines.length
    ? fillLines(
        lines,
        BUDGET - head.length - tail.length - 3,
        (n) => `… and ${plural(n, 'more highlight')}, not shown`,
      ).text
    : 'No highlighted text.';
  // The blank line ends the list, so the footer is not read as part of its last item.
  return `${head}\n${matched}\n\n${tail}`;
}

/**
 * A login's identity verdict beside it, in a code span like any upstream text (the provider's
 * display name is in it, and the line's `:` and `→` are not words our own text may hold); nothing
 * for a login without a verdict. On the login's line, so the parts and the digest's fill count it.
 */
function verdictSpan(alert: CredentialDelivery, opts: RenderOptions): string {
  const line = identityLine(alert, opts);
  return line ? ` — ${code(line, 300)}` : '';
}

/** `**Identity** 12 at risk, 30 rotated` (our words and digits) for a digest's head, when any login has a verdict. */
function verdictHead(alerts: CredentialDelivery[]): string[] {
  const counts = verdictCounts(alerts);
  return counts ? [`**Identity** ${counts}`] : [];
}

const credentialLine = (alert: CredentialDelivery, opts: RenderOptions) =>
  `- ${code(alert.item.identity_name, 200)} (${code(hashKind(alert.item), 40)})${verdictSpan(alert, opts)}`;

function credentialPosts(
  destination: MattermostDestination,
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: RenderOptions,
): Rendered<MattermostPayload>[] {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const link = linkLine(batch.alerts.map((a) => credentialLink(a.item, opts.appUrl)).find(Boolean));
  const text = (part: string, logins: string, lines: string) =>
    [
      `#### ${named(batchTenant(batch))}Leaked credentials · ${code(batch.domain, 160)}${part}`,
      `**Leak** ${code(source?.name ?? batch.sourceId, 300)} · **Breached** ${code(formatTime(source?.breached_at), 60)} · **Leaked** ${code(formatTime(source?.leaked_at), 60)}`,
      `**Source id** ${code(batch.sourceId, 300)}`,
      `**Logins** ${logins}`,
      lines,
      '',
      `${footer(`source ${code(batch.alerts[0]?.source ?? '', 200)}`, batch.alerts, ' · passwords are never sent to Mattermost')}${link}`,
    ].join('\n');
  // The part note and the login count take a few characters more than this sample of them.
  const max = BUDGET - chars(text(' (part 1000 of 1000)', '100000 (10000 in this part)', ''));
  const line = (alert: CredentialDelivery) => credentialLine(alert, opts);
  const parts = partsWithin(batch.alerts, (alert) => line(alert).length + 1, max);
  return parts.map((part, i) => {
    const { partNote, logins } = partWords(batch.alerts.length, part.length, i, parts.length);
    return {
      deliveryIds: deliveryIdsOf(part),
      payload: post(destination, text(partNote, logins, part.map(line).join('\n'))),
      summary: `${batchSummary(batch)}${partNote}`,
    };
  });
}

function digestText(batch: Extract<Batch, { type: 'digest' }>, opts: RenderOptions): string {
  const rest = (n: number) => `… and ${n} more, not listed`;
  const tenant = named(batchTenant(batch));
  const where = `destination ${code(opts.destination, 200)}`;
  let head: string;
  let tail: string;
  let lines: string[];
  if (batch.kind === 'event') {
    const alerts = mostSevereFirst(batch.alerts);
    head = [
      `#### ${tenant}${plural(alerts.length, 'new event')} (${severityCounts(alerts)})`,
      `**Types** ${codeList(countedList(alerts.map((a) => a.item.metadata.type)), 1_500, 100)}`,
    ].join('\n');
    tail = footer(where, alerts);
    lines = alerts
      .slice(0, opts.digest.maxItems)
      .map(
        (a) =>
          `- **${severityWord(eventSeverity(a.item))}** ${code(a.item.metadata.type, 80)} · ${code(a.item.metadata.uid, 300)}`,
      );
  } else {
    const alerts = batch.alerts;
    head = [
      `#### ${tenant}${plural(alerts.length, 'leaked credential')}`,
      ...verdictHead(alerts),
      `**Domains** ${codeList(countedList(alerts.map((a) => a.item.domain.toLowerCase())), 1_500, 100)}`,
      `**Leaks** ${codeList(countedList(alerts.map((a) => a.item.source?.name ?? a.item.source_id)), 1_500, 100)}`,
    ].join('\n');
    tail = footer(where, alerts, ' · passwords are never sent to Mattermost');
    lines = alerts
      .slice(0, opts.digest.maxItems)
      .map(
        (a) =>
          `- ${code(a.item.identity_name, 120)} · ${code(a.item.domain, 80)} (${code(hashKind(a.item), 30)})${verdictSpan(a, opts)}`,
      );
  }
  const total = batch.alerts.length;
  const shown = fillLines(lines, BUDGET - head.length - tail.length - 3, (n) =>
    rest(n + total - lines.length),
  );
  const counted =
    shown.shown === lines.length && lines.length < total ? `\n${rest(total - lines.length)}` : '';
  return `${head}\n${shown.text}${counted}\n\n${tail}`;
}

/**
 * One post per event, per credential group (or part of one), or per digest (over
 * `digest.threshold` alerts). Each Rendered lists exactly the alerts its post shows or counts.
 */
export function renderMattermost(
  destination: MattermostDestination,
  alerts: DeliveryAlert[],
  opts: RenderOptions,
): Rendered<MattermostPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch): Rendered<MattermostPayload>[] => {
    if (batch.type === 'credentials') return credentialPosts(destination, batch, opts);
    const text = batch.type === 'event' ? eventText(batch.alert, opts) : digestText(batch, opts);
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    return [
      { deliveryIds: deliveryIdsOf(covered), payload: post(destination, text), summary: batchSummary(batch) },
    ];
  });
}

/**
 * A test message (the test mark first thing) or an operator notice. Its text may quote a
 * receiver's answer, so each of its lines is a code span like upstream text.
 */
export function mattermostNotice(
  destination: MattermostDestination,
  notice: Notice,
  opts: RenderOptions,
): MattermostPayload {
  const lines = notice.text
    .split(/\r?\n/)
    .filter((l) => l.trim())
    .map((l) => code(l, 2_000));
  const body = fillLines(lines, 8_000, (n) => `… and ${plural(n, 'more line')}`).text;
  const head =
    notice.kind === 'test'
      ? `#### ${code(TEST_MARK)}\n${boldCode(notice.title, 300)}`
      : `#### exposure-alerts · ${code(notice.title, 300)}`;
  const foot = `destination ${code(opts.destination, 200)} · ${code(opts.now.toISOString(), 40)}`;
  return post(destination, `${head}\n${body || '—'}\n${foot}`);
}

/** What Mattermost would split or refuse, or what would be live in a post (`config validate`, the tests). */
export function mattermostProblems(payload: MattermostPayload): string[] {
  const problems: string[] = [];
  if (typeof payload.text !== 'string' || !payload.text.trim()) return ['no text'];
  const n = chars(payload.text);
  if (n > MATTERMOST_MAX_CHARS)
    problems.push(`text of ${n} characters, over 16,383 (the server would split it into several posts)`);
  for (const live of liveMarkup(payload.text)) problems.push(`live Markdown: ${live}`);
  return problems;
}
