/**
 * Google Chat digests (over `digest.threshold` alerts for one destination in a pass).
 *
 * Without `threads`: one message listing what fits (most severe events first, each with its own
 * `Open` button; or the leaked logins) and counting the rest. With `threads`: a thread, as for a
 * Slack app. Its parent is short (events: the first `maxItems` that fit and a count of the rest;
 * leaked logins: counts by identity verdict when any has one and by domain and leak, no logins);
 * its replies list every item the parent did not, in order, as many as the card's limits need (at
 * most MAX_REPLIES; the last then counts what it could not list). The parent and every reply
 * carry `thread.threadKey`, the digest's Idempotency-Key, so Google Chat keeps them in one thread,
 * and a parent repeated after a crash joins its own thread instead of opening another.
 *
 * Deterministic for the same alerts in the same order: a thread a crash interrupted is rendered
 * again and resumed at the reply it had reached.
 */
import { eventSeverity } from '../../model.ts';
import { ellipsis } from '../../render/escape.ts';
import { identifierNames, plural } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  countBy,
  deliveryIdsOf,
  digestDomains,
  digestLeaks,
  digestTypes,
  type EventDelivery,
  highlightsOf,
  mostSevereFirst,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { verdictCounts } from '../../render/identity.ts';
import { webhookIdempotencyKey } from '../../render/keys.ts';
import { credentialLink, eventLink } from '../../render/link.ts';
import type { Rendered, RenderOptions } from '../../render/types.ts';
import {
  button,
  buttons,
  bytesOf,
  CHAT_BUDGET_BYTES,
  type ChatSection,
  type ChatWidget,
  chatHighlight,
  chatMessage,
  chatText,
  field,
  firstPart,
  fitChat,
  type GoogleChatPayload,
  line,
  lineBytes,
  muted,
  PACKING_RESERVE,
  packParagraphs,
  paragraph,
  parts,
  usable,
} from './card.ts';
import { credentialLine, listOf, NOTE_RESERVE, severityMark, tenantLines } from './items.ts';

/** Replies a thread holds at most: past them the last reply counts the rest. */
export const MAX_REPLIES = 50;
/** Lines with a button (one widget each) a card lists, under its 100 widgets. */
const MAX_LINES = 90;

type EventDigest = Extract<Batch, { type: 'digest'; kind: 'event' }>;
type CredentialDigest = Extract<Batch, { type: 'digest'; kind: 'credential' }>;

function eventLine(alert: EventDelivery, opts: RenderOptions): ChatWidget {
  const item = alert.item;
  const names = identifierNames(item);
  const first = highlightsOf(alert)[0];
  const html = `${severityMark(eventSeverity(item))} ${chatText(item.metadata.type, 60, ellipsis)}${names.length ? ` · ${listOf(names, 120)}` : ''}${first ? ` — ${chatHighlight(first.text, 160, ellipsis)}` : ''}<br>${muted(chatText(item.metadata.uid, 160, ellipsis))}`;
  return line(html, { label: 'Open', url: usable(eventLink(item, opts.appUrl), 600) });
}

const widgetBytes = (w: ChatWidget) => bytesOf(w) + 1;
const moreNote = (n: number, total: number) =>
  paragraph(`<i>… and ${plural(n, 'more item')} not listed (${total} in all).</i>`);
const footer = (batch: Extract<Batch, { type: 'digest' }>, opts: RenderOptions) =>
  paragraph(
    muted(
      `destination ${chatText(opts.destination, 200)} · routes ${chatText(routesOf(batch.alerts).join(', '), 400)}`,
    ),
  );

/**
 * The replies listing `units` (an event's line, a login's), numbered from `first` of `total`: each
 * within `room` bytes and `max` units, `body` making its widgets; at most MAX_REPLIES.
 */
function replies<U>(
  units: U[],
  size: (unit: U) => number,
  body: (chunk: U[]) => ChatWidget[],
  max: number,
  first: number,
  total: number,
  threadKey: string,
  reserve = 0,
): GoogleChatPayload[] {
  const room = replyRoom(threadKey) - reserve;
  const chunks = parts(units, size, room, max).slice(0, MAX_REPLIES);
  let at = first;
  return chunks.map((chunk, i) => {
    const from = at + 1;
    at += chunk.length;
    const unlisted = i === chunks.length - 1 ? total - at : 0;
    const widgets = body(chunk);
    return fitChat(
      chatMessage(
        'digest-reply',
        { title: `Digest, items ${from} to ${at} of ${total}`, subtitle: 'exposure-alerts' },
        [{ widgets: unlisted > 0 ? [...widgets, moreNote(unlisted, total)] : widgets }],
        threadKey,
      ),
    );
  });
}

/** Bytes a reply card has for its lines. */
const replyRoom = (threadKey: string) =>
  CHAT_BUDGET_BYTES -
  bytesOf(
    chatMessage(
      'digest-reply',
      { title: 'Digest, items 100000 to 100000 of 100000', subtitle: 'exposure-alerts' },
      [],
      threadKey,
    ),
  ) -
  NOTE_RESERVE;

function eventDigest(batch: EventDigest, opts: RenderOptions, threadKey?: string) {
  const total = batch.alerts.length;
  const sorted = mostSevereFirst(batch.alerts);
  const header = {
    title: `Exposure digest · ${plural(total, 'event')}`,
    subtitle: severityCounts(batch.alerts),
  };
  const about = paragraph(
    [...tenantLines(batchTenant(batch)), field('Types', listOf(digestTypes(batch.alerts), 1_000))].join(
      '<br>',
    ),
  );
  const card = (lines: ChatWidget[]): GoogleChatPayload =>
    chatMessage(
      'digest',
      header,
      [{ widgets: [about] }, { header: 'Digest', widgets: lines }, { widgets: [footer(batch, opts)] }],
      threadKey,
    );
  const room = CHAT_BUDGET_BYTES - bytesOf(card([])) - NOTE_RESERVE;
  const shown = firstPart(
    sorted.slice(0, opts.digest.maxItems),
    (a) => eventLine(a, opts),
    widgetBytes,
    room,
    MAX_LINES,
  );
  const rest = total - shown.length;
  const note = threadKey
    ? paragraph(`<i>… and ${plural(rest, 'more event')} in the thread.</i>`)
    : moreNote(rest, total);
  const parent = fitChat(card(rest > 0 ? [...shown, note] : shown));
  const thread = threadKey
    ? replies(
        sorted.slice(shown.length).map((a) => eventLine(a, opts)),
        widgetBytes,
        (lines) => lines,
        MAX_LINES,
        shown.length,
        total,
        threadKey,
      )
    : undefined;
  return { parent, thread };
}

function credentialDigest(batch: CredentialDigest, opts: RenderOptions, threadKey?: string) {
  const total = batch.alerts.length;
  const url = usable(batch.alerts.map((a) => credentialLink(a.item, opts.appUrl)).find(Boolean));
  const end: ChatSection = {
    widgets: [footer(batch, opts), ...(url ? [buttons(button('Open the leak in the web app', url))] : [])],
  };
  const header = {
    title: `Leaked credentials digest · ${plural(total, 'login')}`,
    subtitle: 'exposure-alerts',
  };
  // What the lookups found, counted where the space sees it first (our words and digits only).
  const counts = verdictCounts(batch.alerts);
  const verdicts = counts ? [field('Identity', chatText(counts, 500))] : [];
  if (threadKey) {
    // The parent counts; the logins are in the thread.
    const groups = countBy(
      batch.alerts.map(
        (a: CredentialDelivery) =>
          `${chatText(a.item.domain, 80, ellipsis)} · ${chatText(a.item.source?.name ?? a.item.source_id, 80, ellipsis)}`,
      ),
    );
    const counts = groups.slice(0, 40).map(([group, n]) => `• ${group}: ${n}`);
    if (groups.length > 40) counts.push(`<i>… and ${plural(groups.length - 40, 'more group')}.</i>`);
    const parent = fitChat(
      chatMessage(
        'digest',
        header,
        [
          {
            widgets: [
              paragraph(
                [
                  ...tenantLines(batchTenant(batch)),
                  ...verdicts,
                  `<b>${plural(total, 'leaked login')}</b> by domain and leak:`,
                ].join('<br>'),
              ),
            ],
          },
          { widgets: [...packParagraphs(counts), paragraph('<i>The logins are in the thread.</i>')] },
          end,
        ],
        threadKey,
      ),
    );
    const lines = batch.alerts.map((a) => credentialLine(a, opts, true));
    // Packed in as many paragraphs as the lines need, whose wrappers are kept room for.
    const thread = replies(lines, lineBytes, packParagraphs, Infinity, 0, total, threadKey, PACKING_RESERVE);
    return { parent, thread };
  }
  const about = paragraph(
    [
      ...tenantLines(batchTenant(batch)),
      ...verdicts,
      field('Domains', listOf(digestDomains(batch.alerts), 1_000)),
      field('Leaks', listOf(digestLeaks(batch.alerts), 1_000)),
    ].join('<br>'),
  );
  const card = (lines: string[], rest: number) =>
    chatMessage('digest', header, [
      { widgets: [about] },
      { header: 'Logins', widgets: [...packParagraphs(lines), ...(rest > 0 ? [moreNote(rest, total)] : [])] },
      end,
    ]);
  const room = CHAT_BUDGET_BYTES - bytesOf(card([], 0)) - NOTE_RESERVE - PACKING_RESERVE;
  const shown = firstPart(
    batch.alerts.slice(0, opts.digest.maxItems),
    (a) => credentialLine(a, opts, true),
    lineBytes,
    room,
    Number.POSITIVE_INFINITY,
  );
  return { parent: fitChat(card(shown, total - shown.length)), thread: undefined };
}

/** A digest: one message, or (`threads`) a parent and its replies in `thread`. */
export function digestMessage(
  batch: Extract<Batch, { type: 'digest' }>,
  opts: RenderOptions,
  threads: boolean,
): Rendered<GoogleChatPayload> {
  const deliveryIds = deliveryIdsOf(batch.alerts as (EventDelivery | CredentialDelivery)[]);
  const threadKey = threads ? webhookIdempotencyKey(opts.destination, deliveryIds) : undefined;
  const { parent, thread } =
    batch.kind === 'event' ? eventDigest(batch, opts, threadKey) : credentialDigest(batch, opts, threadKey);
  return {
    deliveryIds,
    payload: parent,
    summary: thread
      ? `${batchSummary(batch)}, as a thread of ${plural(thread.length, 'reply', 'replies')}`
      : batchSummary(batch),
    ...(thread ? { thread } : {}),
  };
}
