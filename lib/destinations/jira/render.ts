/**
 * Jira issues (Jira Cloud): one issue per item, or one per digest listing its items, each with its
 * link. A one-line summary of at most 255 characters; an ADF description in which upstream text
 * only ever sits in text nodes (ADF text is literal: it cannot format, link or mention), one line
 * per node so a line break in it cannot forge another field; our own links to the web app as link
 * marks on our own words; and the label `exposure-<16 hex>` (SHA-256 of `<destination>:<item key>`,
 * or of `<destination>:<the digest's Idempotency-Key>`) that finds the issue again. No password,
 * however masked, goes into a ticket: the login and the kind of secret.
 */
import { eventSeverity } from '../../model.ts';
import { lineText, parseHighlight, stripControl } from '../../render/escape.ts';
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

/** Atlassian Document Format, as far as this writes it. */
export type Mark = { type: 'strong' } | { type: 'link'; attrs: { href: string } };
export type AdfText = { type: 'text'; text: string; marks?: Mark[] };
export type AdfNode = { type: 'paragraph'; content: AdfText[] } | { type: 'rule' };

export interface AdfDoc {
  version: 1;
  type: 'doc';
  content: AdfNode[];
}

/** What a Jira issue is made of (the sender adds the project and the issue type). */
export interface JiraContent {
  summary: string;
  description: AdfDoc;
  labels: string[];
}

export const JIRA_SUMMARY_MAX = 255;
/** Characters of upstream text in one description (Jira's field holds 32,767 characters). */
const DESCRIPTION_BUDGET = 20_000;

/**
 * Upstream text as one text node: controls out, line breaks as spaces (each node is one line, so no
 * value can forge another), never empty (ADF refuses an empty text node).
 */
export function text(value: string, marks?: Mark[]): AdfText {
  const clean = stripControl(value) || '–';
  return marks ? { type: 'text', text: clean, marks } : { type: 'text', text: clean };
}

const paragraph = (...content: AdfText[]): AdfNode => ({ type: 'paragraph', content });
/** Our words, linking to the item in the web app: upstream text is never a link's anchor. */
const openLink = (href: string, words = 'open'): AdfText => text(words, [{ type: 'link', attrs: { href } }]);
const label = (name: string) => text(`${name}: `, [{ type: 'strong' }]);

export function adfDoc(content: AdfNode[]): AdfDoc {
  return { version: 1, type: 'doc', content };
}

function eventNodes(alert: Extract<DeliveryAlert, { kind: 'event' }>, opts: RenderOptions): AdfNode[] {
  const item = alert.item;
  const nodes: AdfNode[] = [];
  let used = 0;
  for (const h of highlightsOf(alert)) {
    if (used > DESCRIPTION_BUDGET) break;
    // The matched words in bold: our mark, on the upstream's text, which stays text.
    const runs = parseHighlight(h.text)
      .filter((s) => s.text !== '')
      .map((s) => text(s.text.slice(0, 2_000), s.marked ? [{ type: 'strong' }] : undefined));
    used += h.text.length;
    if (runs.length) nodes.push(paragraph(label(h.field), ...runs));
  }
  const link = alertLink(alert, opts.appUrl);
  nodes.push(
    paragraph(label('Severity'), text(severityText(item))),
    paragraph(label('Type'), text(item.metadata.type)),
    paragraph(label('Identifiers'), text(identifierNames(item).join(', ').slice(0, 2_000))),
    paragraph(label('Tags'), text(tagsOf(item).join(', '))),
    paragraph(label('Matched'), text(formatTime(item.metadata.matched_at))),
    paragraph(label('uid'), text(item.metadata.uid)),
    ...(link ? [paragraph(openLink(link, 'Open in the web app'))] : []),
  );
  return nodes;
}

function credentialNodes(
  alert: Extract<DeliveryAlert, { kind: 'credential' }>,
  opts: RenderOptions,
): AdfNode[] {
  const item = alert.item;
  const link = alertLink(alert, opts.appUrl);
  const verdict = identityLine(alert, opts);
  return [
    paragraph(label('Login'), text(item.identity_name)),
    // The login's identity verdict, text like the rest (the provider's display name is in it).
    ...(verdict ? [paragraph(label('Identity'), text(verdict))] : []),
    paragraph(label('Secret'), text(`${hashKind(item)} (never sent to tickets)`)),
    paragraph(label('Leak'), text(item.source?.name ?? item.source_id)),
    paragraph(label('Domain'), text(item.domain)),
    paragraph(label('Imported'), text(formatTime(item.imported_at))),
    ...(link ? [paragraph(openLink(link, 'Open in the web app'))] : []),
  ];
}

function summaryOf(alert: DeliveryAlert): string {
  if (alert.kind === 'credential') {
    const item = alert.item;
    return `Leaked credential: ${item.identity_name} (${hashKind(item)}) in ${item.source?.name ?? item.source_id}`;
  }
  const item = alert.item;
  const names = identifierNames(item);
  return `${eventSeverity(item).toUpperCase()} ${item.metadata.type}${names.length ? ` for ${names.join(', ')}` : ''}`;
}

const oneLine = (s: string) => lineText(s, JIRA_SUMMARY_MAX, () => '…');

/** One issue per item, or per digest (over `digest.threshold`): each lists exactly its items. */
export function renderJira(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<JiraContent>[] {
  const batches = ticketBatches(alerts, opts.digest);
  return batches.flatMap((batch): Rendered<JiraContent>[] => {
    if (batch.type === 'event' || (batch.type === 'credentials' && batch.alerts.length === 1)) {
      const alert = batch.type === 'event' ? batch.alert : (batch.alerts[0] as DeliveryAlert);
      return [
        {
          deliveryIds: [alert.deliveryId],
          summary: batchSummary(batch),
          payload: {
            summary: oneLine(forTenant(alert.tenant, summaryOf(alert), ': ')),
            description: adfDoc(
              alert.kind === 'event' ? eventNodes(alert, opts) : credentialNodes(alert, opts),
            ),
            labels: [exposureLabel(`${opts.destination}:${alert.key}`)],
          },
        },
      ];
    }
    const items = batch.alerts;
    const ids = deliveryIdsOf(items);
    const key = webhookIdempotencyKey(opts.destination, ids);
    // What fits Jira's description (32,767 characters), in order; the rest counted.
    const listed: AdfNode[] = [];
    let used = 0;
    for (const a of items) {
      // Each item with its own link, so an analyst can open any of them; a login with its verdict.
      const line = oneLine(summaryOf(a));
      const link = alertLink(a, opts.appUrl);
      const identity = identityLine(a, opts);
      const verdict = identity ? lineText(identity, 300, () => '…') : undefined;
      const size = line.length + (link?.length ?? 0) + (verdict?.length ?? 0);
      if (used + size > DESCRIPTION_BUDGET) break;
      used += size;
      listed.push(
        paragraph(
          text(line),
          ...(verdict ? [text(' — '), text(verdict)] : []),
          ...(link ? [text(' · '), openLink(link)] : []),
        ),
      );
    }
    if (listed.length < items.length)
      listed.push(
        paragraph(
          text(`… and ${items.length - listed.length} more items not listed (${items.length} in all).`),
        ),
      );
    // What the lookups found, in the summary (before the kinds, which may be clipped) and the head.
    const counts = verdictCounts(items);
    return [
      {
        deliveryIds: ids,
        summary: batchSummary(batch),
        payload: {
          summary: oneLine(
            `${batchTenant(batch) ? `${batchTenant(batch)?.name}: ` : ''}${items.length} exposure alerts${counts ? ` (${counts})` : ''}: ${[...new Set(items.map((a) => summaryOf(a).split(' for ')[0]))].slice(0, 5).join('; ')}`,
          ),
          description: adfDoc([
            ...(counts ? [paragraph(label('Identity'), text(counts))] : []),
            paragraph(text(`${items.length} items, one per line:`)),
            { type: 'rule' },
            ...listed,
          ]),
          labels: [exposureLabel(`${opts.destination}:${key}`)],
        },
      },
    ];
  });
}

/** A comment for a follow-up, or a test: plain lines, each a text node. */
export function jiraComment(lines: string[]): AdfDoc {
  return adfDoc(lines.map((line) => paragraph(text(line))));
}
