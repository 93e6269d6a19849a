/**
 * Google Chat cards for one event, and for a group of leaked logins (card.ts keeps upstream text
 * inert and the size in bounds). Laid out like the other chat kinds: the effective severity and the
 * type, what matched with the highlights in bold, who it concerns, where it was found, one button
 * to the item. A group too large for one card is split into numbered parts, each covering exactly
 * the logins it lists. Passwords show as the policy left them: masked by default, absent under
 * `hidden`, in clear only when the config opts in.
 */
import { eventSeverity, type TenantRef } from '../../model.ts';
import { ellipsis } from '../../render/escape.ts';
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
  type EventDelivery,
  highlightsOf,
  routesOf,
} from '../../render/group.ts';
import { identityLine } from '../../render/identity.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { Rendered, RenderOptions } from '../../render/types.ts';
import type { Severity } from '../../upstream/event-types.ts';
import {
  button,
  buttons,
  bytesOf,
  CHAT_BUDGET_BYTES,
  type ChatSection,
  type ChatWidget,
  chatHighlight,
  chatLines,
  chatMessage,
  chatText,
  field,
  firstPart,
  fitChat,
  type GoogleChatPayload,
  lineBytes,
  muted,
  PACKING_RESERVE,
  packParagraphs,
  paragraph,
  parts,
  usable,
} from './card.ts';

/** Kept free for the note that says what was left out. */
export const NOTE_RESERVE = 300;
const HIGHLIGHT_MAX = 1_500;

const COLOR: Record<Severity, string> = {
  critical: '#b71c1c',
  high: '#e65100',
  medium: '#f9a825',
  low: '#1565c0',
  info: '#757575',
};

/** `HIGH`, bold in the severity's colour. */
export const severityMark = (severity: Severity) =>
  `<b><font color="${COLOR[severity]}">${severity.toUpperCase()}</font></b>`;

/** The tenant a message is about, for a `tenants` entry's items. */
export const tenantLines = (tenant: TenantRef | undefined) =>
  tenant ? [field('Tenant', `${chatText(tenant.name, 200, ellipsis)} (${tenant.id})`)] : [];

export const listOf = (values: string[], max: number) =>
  joinList(values, max, (v) => chatText(v, 120, ellipsis));

export function credentialLine(
  alert: CredentialDelivery,
  opts: Pick<RenderOptions, 'identityLabel'>,
  withDomain = false,
): string {
  const item = alert.item;
  const where = withDomain
    ? ` — ${chatText(item.domain, 80, ellipsis)} — ${chatText(item.source?.name ?? item.source_id, 80, ellipsis)}`
    : '';
  // The login's identity verdict under it, escaped as upstream text (the provider's display name is
  // in it); one entry with the login, so the parts and replies that fill by size count it.
  const verdict = identityLine(alert, opts);
  const under = verdict ? `<br>↳ ${muted(chatText(verdict, 300, ellipsis))}` : '';
  // No password in a chat, not even masked, as in every chat kind: the login and the kind of secret.
  return `• ${chatText(item.identity_name, 300, ellipsis)}${where} (${chatText(hashKind(item), 40, ellipsis)})${under}`;
}

function eventCard(alert: EventDelivery, opts: RenderOptions): GoogleChatPayload {
  const item = alert.item;
  const severity = eventSeverity(item);
  const notes = item.tenant_metadata?.notes;
  const about = [
    ...tenantLines(alert.tenant),
    `${severityMark(severity)} · ${chatText(item.metadata.type, 200, ellipsis)}`,
    field('Severity', chatText(severityText(item), 100)),
  ];
  const who = [
    field('Identifiers', listOf(identifierNames(item), 1_000)),
    field('Tags', listOf(tagsOf(item), 500)),
  ];
  const where = [
    field('Item', chatText(item.metadata.uid, 600, ellipsis)),
    field('Created (estimated)', chatText(formatTime(item.metadata.estimated_created_at), 100)),
    field('Matched', chatText(formatTime(item.metadata.matched_at), 100)),
    ...(notes ? [field('Notes', chatLines(notes, 1_500))] : []),
    muted(`source ${chatText(alert.source, 200)} · routes ${chatText(alert.routes.join(', '), 400)}`),
  ];
  const url = usable(eventLink(item, opts.appUrl));
  const link: ChatWidget = url
    ? buttons(button('Open in the web app', url))
    : paragraph('<i>No link to the web app for this item.</i>');
  const header = { title: `${severity.toUpperCase()} · exposure event`, subtitle: 'exposure-alerts' };
  const sections = (matched: ChatWidget[]): ChatSection[] => [
    { widgets: [paragraph(about.join('<br>'))] },
    { header: 'What matched', widgets: matched },
    { header: 'Who it concerns', widgets: [paragraph(who.join('<br>'))] },
    { header: 'Where it was found', widgets: [paragraph(where.join('<br>')), link] },
  ];
  const room =
    CHAT_BUDGET_BYTES - bytesOf(chatMessage('event', header, sections([paragraph('-')]))) - NOTE_RESERVE;
  const highlights = highlightsOf(alert).map(
    (h) => `<i>${chatText(h.field, 80, ellipsis)}:</i> ${chatHighlight(h.text, HIGHLIGHT_MAX)}`,
  );
  const shown = firstPart(highlights, (h) => h, lineBytes, room - PACKING_RESERVE, Number.POSITIVE_INFINITY);
  if (!highlights.length) shown.push('<i>No highlighted text.</i>');
  else if (shown.length < highlights.length)
    shown.push(
      `<i>… (truncated, ${plural(highlights.length - shown.length, 'more highlight')} not shown)</i>`,
    );
  return fitChat(chatMessage('event', header, sections(packParagraphs(shown))));
}

function credentialCards(
  batch: Extract<Batch, { type: 'credentials' }>,
  opts: RenderOptions,
): Rendered<GoogleChatPayload>[] {
  const source = batch.alerts.find((a) => a.item.source)?.item.source;
  const url = usable(batch.alerts.map((a) => credentialLink(a.item, opts.appUrl)).find(Boolean));
  const card = (part: string, logins: string, lines: string[]) =>
    chatMessage('credentials', { title: 'Leaked credentials', subtitle: part || 'exposure-alerts' }, [
      {
        widgets: [
          paragraph(
            [
              ...tenantLines(batchTenant(batch)),
              field('Domain', chatText(batch.domain, 300, ellipsis)),
              field('Leak', chatText(source?.name ?? batch.sourceId, 300, ellipsis)),
              field('Breached', chatText(formatTime(source?.breached_at), 100)),
              field('Leaked', chatText(formatTime(source?.leaked_at), 100)),
              field('Source id', chatText(batch.sourceId, 300, ellipsis)),
              field('Logins', logins),
            ].join('<br>'),
          ),
        ],
      },
      { header: 'Logins', widgets: packParagraphs(lines) },
      {
        widgets: [
          paragraph(
            muted(
              `source ${chatText(batch.alerts[0]?.source ?? '', 200)} · routes ${chatText(routesOf(batch.alerts).join(', '), 400)}`,
            ),
          ),
          ...(url ? [buttons(button('Open the leak in the web app', url))] : []),
        ],
      },
    ]);
  // The part note and the login count take a few bytes more than this sample of them.
  const room = CHAT_BUDGET_BYTES - bytesOf(card('part 1000 of 1000', '100000 (10000 in this part)', ['-']));
  const split = parts(
    batch.alerts.map((alert) => ({ alert, line: credentialLine(alert, opts) })),
    (e) => lineBytes(e.line),
    room - PACKING_RESERVE,
    Number.POSITIVE_INFINITY,
  );
  return split.map((part, i) => {
    const partNote = split.length > 1 ? `part ${i + 1} of ${split.length}` : '';
    const logins = `${batch.alerts.length}${split.length > 1 ? ` (${part.length} in this part)` : ''}`;
    return {
      deliveryIds: deliveryIdsOf(part.map((e) => e.alert)),
      payload: fitChat(
        card(
          partNote,
          logins,
          part.map((e) => e.line),
        ),
      ),
      summary: `${batchSummary(batch)}${partNote ? ` (${partNote})` : ''}`,
    };
  });
}

/** The messages of an event or a credential group (digests: digest.ts). */
export function itemMessages(
  batch: Exclude<Batch, { type: 'digest' }>,
  opts: RenderOptions,
): Rendered<GoogleChatPayload>[] {
  if (batch.type === 'credentials') return credentialCards(batch, opts);
  return [
    {
      deliveryIds: [batch.alert.deliveryId],
      payload: eventCard(batch.alert, opts),
      summary: batchSummary(batch),
    },
  ];
}
