/**
 * Microsoft Teams messages for a batch of alerts bound for one Teams destination: an Adaptive Card
 * in the Workflows `attachments` wrapper, laid out like the Slack message (a header with the
 * effective severity, what matched with highlights in bold, who it concerns, where it was found,
 * one button to the item). card.ts holds the rules that make upstream text inert there and
 * keep a card under Teams' 28,000 bytes; this module only decides what goes where.
 *
 * Grouping and digests are Slack's (group.ts): credentials grouped by domain and source (a group
 * too big for one card is split into numbered parts, each covering exactly the logins it lists),
 * and a digest lists what fits and counts the rest. A password never appears, not even masked:
 * only the login and the kind of secret the upstream holds.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { parseHighlight } from '../../render/escape.ts';
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
} from '../../render/group.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import type { CardElement, TeamsPayload } from './card.ts';
import {
  bytesOf,
  COLOR,
  fact,
  footer,
  HIGHLIGHT_BYTES,
  label,
  linkRun,
  listOf,
  loginWithVerdict,
  NOTE_RESERVE,
  note,
  openUrl,
  rich,
  run,
  subtle,
  TEAMS_BUDGET_BYTES,
  teamsMessage,
  URL_MAX,
  upstreamRuns,
  upstreamText,
  usable,
  within,
} from './card.ts';
import { digestCard } from './digest.ts';
import { fitTeamsPayload } from './limits.ts';

/** The tenant's name and a separator, first in a card's header, for a `tenants` entry's items. */
function tenantRuns(tenant: TenantRef | undefined) {
  return tenant
    ? [...upstreamText(tenant.name, 200, { weight: 'Bolder', size: 'Large' }), run(' · ', { size: 'Large' })]
    : [];
}

function eventCard(alert: EventDelivery, opts: RenderOptions): TeamsPayload {
  const item = alert.item;
  const severity = eventSeverity(item);
  const header = rich([
    run(severity.toUpperCase(), { weight: 'Bolder', size: 'Large', color: COLOR[severity] }),
    run(' · ', { size: 'Large' }),
    ...tenantRuns(alert.tenant),
    ...upstreamText(item.metadata.type, 400, { weight: 'Bolder', size: 'Large' }),
  ]);
  const notes = item.tenant_metadata?.notes;
  const who = [
    label('Who it concerns'),
    fact('Identifiers', listOf(identifierNames(item), 1_000), 3_000),
    fact('Tags', listOf(tagsOf(item), 500), 1_500),
  ];
  const where = [
    label('Where it was found'),
    fact('Severity', severityText(item), 300),
    fact('Item', item.metadata.uid, 1_200),
    fact('Created (estimated)', formatTime(item.metadata.estimated_created_at), 300),
    fact('Matched', formatTime(item.metadata.matched_at), 300),
    ...(notes ? [fact('Notes', notes, 2_000)] : []),
  ];
  const end = footer(`source ${alert.source} · routes ${alert.routes.join(', ')}`);
  const url = usable(eventLink(item, opts.appUrl), URL_MAX);
  const actions = url ? [openUrl(url, 'Open in the web app')] : [];
  const fixed = [header, label('What matched'), ...who, ...where, end];
  const room = TEAMS_BUDGET_BYTES - bytesOf(teamsMessage(fixed, actions)) - NOTE_RESERVE;
  const highlights = highlightsOf(alert);
  let left = room;
  const lines = within(highlights, room, (h) => {
    const line = rich([
      ...upstreamText(h.field, 240, subtle),
      run(': ', subtle),
      ...upstreamRuns(parseHighlight(h.text), Math.max(0, Math.min(HIGHLIGHT_BYTES, left - 400))),
    ]);
    left -= bytesOf(line) + 1;
    return line;
  });
  if (!highlights.length) lines.push(note('No highlighted text.'));
  else if (lines.length < highlights.length)
    lines.push(
      note(`… (truncated, ${plural(highlights.length - lines.length, 'more highlight')} not shown)`),
    );
  return fitTeamsPayload(
    teamsMessage([header, label('What matched'), ...lines, ...who, ...where, end], actions),
  );
}

function credentialLine(alert: CredentialDelivery, opts: RenderOptions): CardElement {
  const line = rich(
    [
      run('• '),
      ...upstreamText(alert.item.identity_name, 600),
      run(' ('),
      ...upstreamText(hashKind(alert.item), 120, subtle),
      run(')'),
      ...linkRun(credentialLink(alert.item, opts.appUrl), 'event'),
    ],
    'None',
  );
  return loginWithVerdict(line, alert, opts);
}

function credentialCards(
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: RenderOptions,
): Rendered<TeamsPayload>[] {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const leak = source?.name ?? batch.sourceId;
  const header = (part: string) =>
    rich([
      ...tenantRuns(batchTenant(batch)),
      run('Leaked credentials · ', { weight: 'Bolder', size: 'Large', color: 'Attention' }),
      ...upstreamText(batch.domain, 600, { weight: 'Bolder', size: 'Large' }),
      run(part, { size: 'Large' }),
    ]);
  const where = [
    label('Where it was found'),
    fact('Leak', leak, 1_500),
    fact('Breached', formatTime(source?.breached_at), 300),
    fact('Leaked', formatTime(source?.leaked_at), 300),
    fact('Source id', batch.sourceId, 600),
  ];
  const end = footer(
    `source ${batch.alerts[0]?.source ?? ''} · routes ${routesOf(batch.alerts).join(', ')} · passwords are never sent to Teams`,
  );
  const url = usable(batch.alerts.map((a) => credentialLink(a.item, opts.appUrl)).find(Boolean), URL_MAX);
  const actions = url ? [openUrl(url, 'Open the leak in the web app')] : [];
  // The part note and the login count take a few bytes more than this sample of them.
  const fixed = [
    header(' (part 1000 of 1000)'),
    ...where,
    label('Who it concerns'),
    fact('Logins', '100000 (10000 in this part)', 100),
    end,
  ];
  const room = TEAMS_BUDGET_BYTES - bytesOf(teamsMessage(fixed, actions));
  const parts: { alerts: CredentialDelivery[]; lines: CardElement[] }[] = [];
  let current: (typeof parts)[number] = { alerts: [], lines: [] };
  let left = room;
  for (const alert of batch.alerts) {
    const line = credentialLine(alert, opts);
    const size = bytesOf(line) + 1;
    if (current.lines.length && size > left) {
      parts.push(current);
      current = { alerts: [], lines: [] };
      left = room;
    }
    current.alerts.push(alert);
    current.lines.push(line);
    left -= size;
  }
  if (current.alerts.length) parts.push(current);
  return parts.map((part, i) => {
    const partNote = parts.length > 1 ? ` (part ${i + 1} of ${parts.length})` : '';
    const logins = `${batch.alerts.length}${parts.length > 1 ? ` (${part.alerts.length} in this part)` : ''}`;
    const body = [
      header(partNote),
      ...where,
      label('Who it concerns'),
      fact('Logins', logins, 100),
      ...part.lines,
      end,
    ];
    return {
      deliveryIds: deliveryIdsOf(part.alerts),
      payload: fitTeamsPayload(teamsMessage(body, actions)),
      summary: `${batchSummary(batch)}${partNote}`,
    };
  });
}

/**
 * One Teams message per event, per credential group (or part of one), or per digest (over
 * `digest.threshold` alerts). Each Rendered lists exactly the alerts its card shows or counts.
 */
export function renderTeams(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<TeamsPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch): Rendered<TeamsPayload>[] => {
    if (batch.type === 'credentials') return credentialCards(batch, opts);
    const payload = batch.type === 'event' ? eventCard(batch.alert, opts) : digestCard(batch, opts);
    const covered = batch.type === 'event' ? [batch.alert] : batch.alerts;
    return [{ deliveryIds: deliveryIdsOf(covered), payload, summary: batchSummary(batch) }];
  });
}
