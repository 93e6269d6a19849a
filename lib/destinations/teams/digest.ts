/**
 * The Teams digest card (over `digest.threshold` alerts in one pass): counts by severity and type
 * (or by domain and leak), then one line per alert, most severe first, until `maxItems` or the
 * byte budget, and the rest counted in the same card. Built from card.ts like the others.
 */
import { eventSeverity } from '../../model.ts';
import { parseHighlight } from '../../render/escape.ts';
import { hashKind, identifierNames, plural } from '../../render/format.ts';
import {
  type Batch,
  batchTenant,
  type CredentialDelivery,
  digestDomains,
  digestLeaks,
  digestTypes,
  type EventDelivery,
  forTenant,
  highlightsOf,
  mostSevereFirst,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { verdictCounts } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { RenderOptions } from '../../render/types.ts';
import type { CardElement, TeamsPayload } from './card.ts';
import {
  bytesOf,
  COLOR,
  excerptNote,
  fact,
  footer,
  label,
  linkRun,
  listOf,
  loginWithVerdict,
  NOTE_RESERVE,
  note,
  rich,
  run,
  subtle,
  TEAMS_BUDGET_BYTES,
  teamsMessage,
  upstreamRuns,
  upstreamText,
  within,
} from './card.ts';
import { fitTeamsPayload } from './limits.ts';

function eventDigestLine(alert: EventDelivery, opts: RenderOptions): CardElement {
  const severity = eventSeverity(alert.item);
  const names = identifierNames(alert.item);
  const first = highlightsOf(alert)[0];
  return rich(
    [
      run(severity.toUpperCase(), { weight: 'Bolder', color: COLOR[severity] }),
      run(' '),
      ...upstreamText(alert.item.metadata.type, 180, {}, excerptNote),
      ...(names.length ? [run(' · '), ...upstreamText(listOf(names, 120), 400, {}, excerptNote)] : []),
      ...(first ? [run(' — '), ...upstreamRuns(parseHighlight(first.text), 500, excerptNote)] : []),
      ...linkRun(eventLink(alert.item, opts.appUrl), 'open'),
    ],
    'None',
  );
}

function credentialDigestLine(alert: CredentialDelivery, opts: RenderOptions): CardElement {
  const leak = alert.item.source?.name ?? alert.item.source_id;
  const line = rich(
    [
      run('• '),
      ...upstreamText(alert.item.identity_name, 360, {}, excerptNote),
      run(' — '),
      ...upstreamText(alert.item.domain, 240, {}, excerptNote),
      run(' — '),
      ...upstreamText(leak, 240, {}, excerptNote),
      run(' ('),
      ...upstreamText(hashKind(alert.item), 90, subtle, excerptNote),
      run(')'),
      ...linkRun(credentialLink(alert.item, opts.appUrl), 'event'),
    ],
    'None',
  );
  return loginWithVerdict(line, alert, opts);
}

export function digestCard(batch: Extract<Batch, { type: 'digest' }>, opts: RenderOptions): TeamsPayload {
  const total = batch.alerts.length;
  let title: string;
  let summary: CardElement[];
  let lines: (room: number) => CardElement[];
  if (batch.kind === 'event') {
    // Most severe first, so the lines that make the cut are the ones that matter.
    const sorted = mostSevereFirst(batch.alerts);
    const types = digestTypes(batch.alerts);
    title = forTenant(batchTenant(batch), `Exposure digest · ${plural(total, 'event')}`);
    summary = [
      rich([run('By severity: ', subtle), run(severityCounts(batch.alerts))]),
      fact('Types', listOf(types, 1_000), 2_500),
    ];
    lines = (room) => within(sorted.slice(0, opts.digest.maxItems), room, (a) => eventDigestLine(a, opts));
  } else {
    const domains = digestDomains(batch.alerts);
    const leaks = digestLeaks(batch.alerts);
    title = forTenant(batchTenant(batch), `Leaked credentials digest · ${plural(total, 'login')}`);
    const counts = verdictCounts(batch.alerts);
    summary = [
      ...(counts ? [fact('Identity', counts, 600)] : []),
      fact('Domains', listOf(domains, 1_000), 2_500),
      fact('Leaks', listOf(leaks, 1_000), 2_500),
    ];
    lines = (room) =>
      within(batch.alerts.slice(0, opts.digest.maxItems), room, (a) => credentialDigestLine(a, opts));
  }
  const header = rich(upstreamText(title, 600, { weight: 'Bolder', size: 'Large' }));
  const end = footer(
    `routes ${routesOf(batch.alerts).join(', ')}${batch.kind === 'credential' ? ' · passwords are never sent to Teams' : ''}`,
  );
  const fixed = [header, ...summary, label('Digest'), end];
  const shown = lines(TEAMS_BUDGET_BYTES - bytesOf(teamsMessage(fixed, [])) - NOTE_RESERVE);
  const rest = total - shown.length;
  const more = rest > 0 ? [note(`… and ${plural(rest, 'more item')} not listed (${total} in all).`)] : [];
  return fitTeamsPayload(teamsMessage([header, ...summary, label('Digest'), ...shown, ...more, end], []));
}
