/**
 * A compact terminal rendering, for the `console` destination, the demo config and `preview`.
 * Same grouping and digest rules as Slack. Every piece of upstream text has its control
 * characters stripped (escape.ts `stripControl`), so an item cannot move the cursor, recolour or
 * retitle the terminal; ANSI codes come only from here, and only when `color` is true.
 *
 * An event shows its key, what `events ignore` and the other event actions take: the upstream's
 * uid, after its tenant's id for an item of a `tenants` entry (`1001:<uid>`), since the link alone
 * hides it behind URL encoding.
 *
 * Credentials show the stored `hash` as it is in the item: the password policy was applied
 * upstream of the renderers, so this is masked, absent (`hidden`) or, by explicit opt-in, clear.
 */
import { eventSeverity } from '../../model.ts';
import { ellipsis, highlightToPlain, lineText } from '../../render/escape.ts';
import { formatTime, hashKind, identifierNames, plural, severityText, tagsOf } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  deliveryIdsOf,
  type EventDelivery,
  highlightsOf,
  planBatches,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { identityLine, verdictCounts, verdictOf } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { type Severity, severityRank } from '../../upstream/event-types.ts';
import type { ConsoleOptions } from './types.ts';

/** The terminal's render options: the shared ones and its own. */
export type ConsoleRenderOptions = RenderOptions & ConsoleOptions;

const CODES = {
  bold: ['\x1b[1m', '\x1b[22m'],
  dim: ['\x1b[2m', '\x1b[22m'],
  red: ['\x1b[31m', '\x1b[39m'],
  yellow: ['\x1b[33m', '\x1b[39m'],
  blue: ['\x1b[34m', '\x1b[39m'],
  magenta: ['\x1b[35m', '\x1b[39m'],
} as const;

type Paint = (style: keyof typeof CODES, text: string) => string;

function painter(color: boolean): Paint {
  return (style, text) => (color && text ? `${CODES[style][0]}${text}${CODES[style][1]}` : text);
}

const SEVERITY_STYLE: Record<Severity, keyof typeof CODES> = {
  critical: 'magenta',
  high: 'red',
  medium: 'yellow',
  low: 'blue',
  info: 'dim',
};

function severityLabel(severity: Severity, paint: Paint): string {
  return paint('bold', paint(SEVERITY_STYLE[severity], `[${severity.toUpperCase()}]`));
}

function marks(color: boolean) {
  return color ? { open: CODES.bold[0], close: CODES.bold[1] } : { open: '*', close: '*' };
}

const text = (raw: string, max = 300) => lineText(raw, max, ellipsis);

function eventBlock(alert: EventDelivery, opts: ConsoleRenderOptions, paint: Paint): string {
  const item = alert.item;
  const names = identifierNames(item);
  const tags = tagsOf(item);
  const lines = [
    [
      severityLabel(eventSeverity(item), paint),
      paint('bold', text(item.metadata.type, 60)),
      names.length ? text(names.join(', '), 200) : '',
      tags.length ? paint('dim', text(tags.map((t) => `#${t}`).join(' '), 200)) : '',
    ]
      .filter(Boolean)
      .join('  '),
  ];
  const first = highlightsOf(alert)[0];
  if (first)
    lines.push(
      `  ${text(first.field, 40)}: ${highlightToPlain(first.text, 300, marks(opts.color), ellipsis)}`,
    );
  lines.push(
    paint(
      'dim',
      text(
        `  severity ${severityText(item)} · created ${formatTime(item.metadata.estimated_created_at)} · matched ${formatTime(item.metadata.matched_at)} · routes ${alert.routes.join(', ')}`,
        600,
      ),
    ),
  );
  const link = eventLink(item, opts.appUrl);
  if (link) lines.push(`  ${text(link, 2_000)}`);
  lines.push(`  uid ${text(alert.key, 2_000)}`);
  return lines.join('\n');
}

function passwordText(alert: CredentialDelivery): string {
  const hash = (alert.item as { hash?: unknown }).hash;
  return typeof hash === 'string' ? text(hash, 200) : '(password hidden)';
}

/**
 * A login's identity verdict on the line under it, controls stripped like upstream text (the
 * provider's display name is in it); red for a live account whose password may be the leaked one.
 */
function verdictLine(alert: CredentialDelivery, opts: ConsoleRenderOptions, paint: Paint): string {
  const line = identityLine(alert, opts);
  if (!line) return '';
  const shown = `    ↳ ${text(line, 300)}`;
  return `\n${verdictOf(alert)?.verdict === 'at_risk' ? paint('red', shown) : paint('dim', shown)}`;
}

function credentialLine(
  alert: CredentialDelivery,
  opts: ConsoleRenderOptions,
  paint: Paint,
  tail = '',
): string {
  const link = credentialLink(alert.item, opts.appUrl);
  return `  ${text(alert.item.identity_name, 200)}  ${passwordText(alert)}  ${paint('dim', `(${text(hashKind(alert.item), 40)})`)}${link ? `  ${text(link, 2_000)}` : ''}${tail}${verdictLine(alert, opts, paint)}`;
}

function credentialBlock(
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: ConsoleRenderOptions,
  paint: Paint,
): string {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const leak = source?.name ?? batch.sourceId;
  const head = `${paint('bold', paint('red', '[CREDENTIALS]'))} ${plural(batch.alerts.length, 'leaked login')} for ${paint('bold', text(batch.domain, 200))} in "${text(leak, 200)}"`;
  const when = paint(
    'dim',
    text(
      `  breached ${formatTime(source?.breached_at)} · leaked ${formatTime(source?.leaked_at)} · source ${batch.sourceId} · routes ${routesOf(batch.alerts).join(', ')}`,
      600,
    ),
  );
  return [head, when, ...batch.alerts.map((a) => credentialLine(a, opts, paint))].join('\n');
}

function digestBlock(
  batch: Extract<Batch, { type: 'digest' }>,
  opts: ConsoleRenderOptions,
  paint: Paint,
): string {
  const total = batch.alerts.length;
  const max = opts.digest.maxItems;
  const lines: string[] = [];
  if (batch.kind === 'event') {
    lines.push(`${paint('bold', '[DIGEST]')} ${plural(total, 'event')}: ${severityCounts(batch.alerts)}`);
    const sorted = [...batch.alerts].sort(
      (a, b) => severityRank(eventSeverity(b.item)) - severityRank(eventSeverity(a.item)),
    );
    for (const alert of sorted.slice(0, max)) {
      const first = highlightsOf(alert)[0];
      const excerpt = first ? ` — ${highlightToPlain(first.text, 100, marks(opts.color), ellipsis)}` : '';
      const link = eventLink(alert.item, opts.appUrl);
      lines.push(
        `  ${severityLabel(eventSeverity(alert.item), paint)} ${text(alert.item.metadata.type, 60)} ${text(identifierNames(alert.item).join(', '), 120)}${excerpt}  uid ${text(alert.key, 2_000)}${link ? `  ${paint('dim', text(link, 2_000))}` : ''}`,
      );
    }
  } else {
    const counts = verdictCounts(batch.alerts);
    lines.push(
      `${paint('bold', '[DIGEST]')} ${plural(total, 'leaked login')}${counts ? ` · identity: ${counts}` : ''}`,
    );
    for (const alert of batch.alerts.slice(0, max)) {
      lines.push(credentialLine(alert, opts, paint, `  ${text(alert.item.domain, 100)}`));
    }
  }
  if (total > max) lines.push(`  … and ${plural(total - max, 'more item')} not listed (${total} in all)`);
  lines.push(paint('dim', `  routes ${text(routesOf(batch.alerts).join(', '), 200)}`));
  return lines.join('\n');
}

/** One block of terminal text per event, per credential group, or per digest. */
export function renderConsole(alerts: DeliveryAlert[], opts: ConsoleRenderOptions): Rendered<string>[] {
  const paint = painter(opts.color);
  return planBatches(alerts, opts.digest).map((batch) => {
    const body =
      batch.type === 'event'
        ? eventBlock(batch.alert, opts, paint)
        : batch.type === 'credentials'
          ? credentialBlock(batch, opts, paint)
          : digestBlock(batch, opts, paint);
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    const tenant = batchTenant(batch);
    // A `tenants` entry's items say whose they are, first thing.
    const named = tenant ? `${paint('bold', `[${lineText(tenant.name, 60, ellipsis)}]`)} ${body}` : body;
    return { deliveryIds: deliveryIdsOf(covered), payload: `${named}\n`, summary: batchSummary(batch) };
  });
}
