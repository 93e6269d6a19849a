/**
 * E-mail for a batch of alerts: a subject, a plain-text part and an HTML part, with the same
 * grouping and digest rules as Slack. Upstream text is HTML-escaped in the HTML part and stripped
 * of control characters everywhere (a newline in a subject would be a header injection).
 *
 * Passwords: like Slack, the mail names each leaked login and the kind of secret the upstream
 * holds, never the value, even masked. Mail is forwarded and archived far beyond the SOC; the
 * webhook and the console are where the policy-masked value is available.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { ellipsis, highlightToHtml, highlightToPlain, htmlText, lineText } from '../../render/escape.ts';
import { formatTime, hashKind, identifierNames, plural, severityText, tagsOf } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  countBy,
  deliveryIdsOf,
  type EventDelivery,
  forTenant,
  highestSeverity,
  highlightsOf,
  planBatches,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { identityLine, verdictCounts } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { severityRank } from '../../upstream/event-types.ts';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** Bounds that keep a mail readable; the web app has the rest. */
const HIGHLIGHT_MAX = 5_000;
const VALUE_MAX = 1_000;

/** Builds the text and HTML parts side by side, so they always say the same thing. */
class Mail {
  private readonly text: string[] = [];
  private readonly html: string[] = [];

  heading(raw: string): this {
    this.text.push(lineText(raw, 300), '='.repeat(Math.min(60, lineText(raw, 300).length)), '');
    this.html.push(`<h2 style="margin:0 0 12px;font-size:18px">${htmlText(raw, 300)}</h2>`);
    return this;
  }

  paragraph(raw: string): this {
    this.text.push(lineText(raw, VALUE_MAX), '');
    this.html.push(`<p style="margin:0 0 12px">${htmlText(raw, VALUE_MAX)}</p>`);
    return this;
  }

  highlights(items: { field: string; text: string }[]): this {
    if (!items.length) return this;
    for (const h of items) {
      this.text.push(`${lineText(h.field, 80)}: ${highlightToPlain(h.text, HIGHLIGHT_MAX)}`);
      this.html.push(
        `<p style="margin:0 0 8px"><b>${htmlText(h.field, 80)}:</b> ${highlightToHtml(h.text, HIGHLIGHT_MAX)}</p>`,
      );
    }
    this.text.push('');
    return this;
  }

  rows(rows: [string, string][]): this {
    const width = Math.max(...rows.map(([label]) => label.length)) + 1;
    for (const [label, value] of rows)
      this.text.push(`${`${label}:`.padEnd(width)} ${lineText(value, VALUE_MAX)}`);
    this.text.push('');
    this.html.push(
      '<table style="border-collapse:collapse;margin:0 0 12px">',
      ...rows.map(
        ([label, value]) =>
          `<tr><td style="padding:2px 12px 2px 0;color:#555;vertical-align:top">${htmlText(label)}</td><td style="padding:2px 0">${htmlText(value, VALUE_MAX)}</td></tr>`,
      ),
      '</table>',
    );
    return this;
  }

  /**
   * A list whose items may carry highlight text (`<mark>` kept), a link, and a line under them
   * (`under`: a login's identity verdict, escaped as upstream text).
   */
  list(items: { raw: string; highlight?: string; url?: string; under?: string }[]): this {
    for (const item of items) {
      const excerpt = item.highlight
        ? ` — ${highlightToPlain(item.highlight, 200, undefined, ellipsis)}`
        : '';
      const under = item.under ? `\n  ${lineText(item.under, 300, ellipsis)}` : '';
      this.text.push(`- ${lineText(item.raw, 400)}${excerpt}${item.url ? `\n  ${item.url}` : ''}${under}`);
    }
    this.text.push('');
    this.html.push(
      '<ul style="margin:0 0 12px;padding-left:20px">',
      ...items.map((item) => {
        const excerpt = item.highlight ? ` — ${highlightToHtml(item.highlight, 200, ellipsis)}` : '';
        const link = item.url ? ` <a href="${htmlText(item.url)}">open</a>` : '';
        const under = item.under
          ? `<br><span style="color:#555">${htmlText(item.under, 300, ellipsis)}</span>`
          : '';
        return `<li>${htmlText(item.raw, 400)}${excerpt}${link}${under}</li>`;
      }),
      '</ul>',
    );
    return this;
  }

  link(url: string | undefined, label: string): this {
    if (!url) return this;
    this.text.push(`${label}: ${url}`, '');
    this.html.push(`<p style="margin:0 0 12px"><a href="${htmlText(url)}">${htmlText(label)}</a></p>`);
    return this;
  }

  footer(raw: string): this {
    this.text.push('--', lineText(raw, VALUE_MAX));
    this.html.push(`<p style="margin:16px 0 0;color:#777;font-size:12px">${htmlText(raw, VALUE_MAX)}</p>`);
    return this;
  }

  build(subject: string): EmailContent {
    return {
      subject: lineText(subject, 200, ellipsis),
      text: `${this.text.join('\n').trimEnd()}\n`,
      html: [
        '<!doctype html>',
        '<html><head><meta charset="utf-8"></head>',
        '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;color:#111">',
        ...this.html,
        '</body></html>',
      ].join('\n'),
    };
  }
}

/** `[Acme] ` before a subject about a `tenants` entry's items. */
const tenantTag = (tenant: TenantRef | undefined) => (tenant ? `[${tenant.name}] ` : '');

function eventMail(alert: EventDelivery, opts: RenderOptions): EmailContent {
  const item = alert.item;
  const severity = eventSeverity(item);
  const type = item.metadata.type;
  const names = identifierNames(item);
  const notes = item.tenant_metadata?.notes;
  return new Mail()
    .heading(forTenant(alert.tenant, `${severity.toUpperCase()} · ${type} exposure`))
    .highlights(highlightsOf(alert))
    .rows([
      ['Severity', severityText(item)],
      ['Type', type],
      ['Identifiers', names.join(', ') || '–'],
      ['Tags', tagsOf(item).join(', ') || '–'],
      ['Created (estimated)', formatTime(item.metadata.estimated_created_at)],
      ['Matched', formatTime(item.metadata.matched_at)],
      ...(notes ? [['Notes', notes] as [string, string]] : []),
      ['uid', item.metadata.uid],
    ])
    .link(eventLink(item, opts.appUrl), 'Open in the web app')
    .footer(
      `exposure-alerts · ${opts.destination} · source ${alert.source} · routes ${alert.routes.join(', ')}`,
    )
    .build(
      `${tenantTag(alert.tenant)}[${severity.toUpperCase()}] 1 ${type} event${names.length ? ` · ${names.join(', ')}` : ''}`,
    );
}

function credentialMail(batch: Extract<Batch, { type: 'credentials' }>, opts: RenderOptions): EmailContent {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const leak = source?.name ?? batch.sourceId;
  const count = plural(batch.alerts.length, 'leaked credential');
  return new Mail()
    .heading(forTenant(batchTenant(batch), `${count} for ${batch.domain}`))
    .rows([
      ['Leak', leak],
      ['Breached', formatTime(source?.breached_at)],
      ['Leaked', formatTime(source?.leaked_at)],
      ['Domain', batch.domain],
      ['Source id', batch.sourceId],
      ['Logins', String(batch.alerts.length)],
    ])
    .list(
      batch.alerts.map((a) => ({
        raw: `${a.item.identity_name} (${hashKind(a.item)})`,
        url: credentialLink(a.item, opts.appUrl),
        ...verdictUnder(a, opts),
      })),
    )
    .footer(
      `exposure-alerts · ${opts.destination} · routes ${routesOf(batch.alerts).join(', ')} · passwords are not sent by e-mail`,
    )
    .build(`${tenantTag(batchTenant(batch))}[LEAKED CREDENTIALS] ${count}: ${batch.domain} (${leak})`);
}

function digestMail(batch: Extract<Batch, { type: 'digest' }>, opts: RenderOptions): EmailContent {
  const total = batch.alerts.length;
  const max = opts.digest.maxItems;
  const mail = new Mail();
  let subject: string;
  if (batch.kind === 'event') {
    // Most severe first (a stable sort keeps arrival order within a severity).
    const alerts = [...batch.alerts].sort(
      (a, b) => severityRank(eventSeverity(b.item)) - severityRank(eventSeverity(a.item)),
    );
    const types = countBy(batch.alerts.map((a) => a.item.metadata.type));
    const typeList = types.slice(0, 3).map(([t]) => t);
    const moreTypes = types.length > 3 ? `, +${types.length - 3} more types` : '';
    subject = `${tenantTag(batchTenant(batch))}[${(highestSeverity(batch.alerts) ?? 'info').toUpperCase()}] ${plural(total, 'exposure event')}: ${typeList.join(', ')}${moreTypes}`;
    mail
      .heading(forTenant(batchTenant(batch), `Exposure digest: ${plural(total, 'event')}`))
      .paragraph(
        `By severity: ${severityCounts(batch.alerts)}. By type: ${types.map(([t, n]) => `${t} (${n})`).join(', ')}.`,
      )
      .list(
        alerts.slice(0, max).map((a) => ({
          raw: `${eventSeverity(a.item).toUpperCase()} ${a.item.metadata.type} · ${identifierNames(a.item).join(', ')}`,
          highlight: highlightsOf(a)[0]?.text,
          url: eventLink(a.item, opts.appUrl),
        })),
      );
  } else {
    const domains = countBy(batch.alerts.map((a) => a.item.domain.toLowerCase()));
    // What the lookups found, in the subject (before the domains, which may be clipped) and first
    // thing in the mail.
    const counts = verdictCounts(batch.alerts);
    subject = `${tenantTag(batchTenant(batch))}[LEAKED CREDENTIALS] ${plural(total, 'leaked credential')}${counts ? ` (${counts})` : ''}: ${domains
      .slice(0, 3)
      .map(([d]) => d)
      .join(', ')}${domains.length > 3 ? `, +${domains.length - 3} more domains` : ''}`;
    mail.heading(forTenant(batchTenant(batch), `Leaked credentials digest: ${plural(total, 'login')}`));
    if (counts) mail.paragraph(`Identity: ${counts}.`);
    mail
      .paragraph(`By domain: ${domains.map(([d, n]) => `${d} (${n})`).join(', ')}.`)
      .list(batch.alerts.slice(0, max).map((a: CredentialDelivery) => credentialDigestItem(a, opts)));
  }
  if (total > max) mail.paragraph(`… and ${plural(total - max, 'more item')} not listed (${total} in all).`);
  return mail
    .footer(`exposure-alerts · ${opts.destination} · routes ${routesOf(batch.alerts).join(', ')}`)
    .build(subject);
}

function credentialDigestItem(a: CredentialDelivery, opts: RenderOptions) {
  return {
    raw: `${a.item.identity_name} — ${a.item.domain} — ${a.item.source?.name ?? a.item.source_id} (${hashKind(a.item)})`,
    url: credentialLink(a.item, opts.appUrl),
    ...verdictUnder(a, opts),
  };
}

/** A login's identity verdict, as the line under it in a list; nothing without one. */
function verdictUnder(a: CredentialDelivery, opts: RenderOptions): { under?: string } {
  const line = identityLine(a, opts);
  return line ? { under: line } : {};
}

/** One e-mail per event, per credential group, or per digest (over `digest.threshold` alerts). */
export function renderEmail(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<EmailContent>[] {
  return planBatches(alerts, opts.digest).map((batch) => {
    const payload =
      batch.type === 'event'
        ? eventMail(batch.alert, opts)
        : batch.type === 'credentials'
          ? credentialMail(batch, opts)
          : digestMail(batch, opts);
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    return { deliveryIds: deliveryIdsOf(covered), payload, summary: batchSummary(batch) };
  });
}
