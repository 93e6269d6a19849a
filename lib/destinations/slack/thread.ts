/**
 * Slack as an app: a digest becomes a thread, so a busy pass keeps the channel readable. The
 * parent is one short message (events: the first `maxItems` listed and the rest counted; leaked
 * logins: counts by identity verdict when any has one, by domain and source, and one link, no
 * logins); the replies in its thread list
 * every item the parent did not, in order, as many replies as Slack's limits need (at most
 * MAX_REPLIES; the last then counts what it could not list). Every item of the digest appears once
 * across the parent and its thread. Single events and credential groups are as in slack.ts.
 *
 * With `actions.slack`, each login with an identity verdict in a reply has its account menu beside
 * it (identity-menu.ts); such replies are split so each stays within Slack's blocks and size.
 *
 * Rendering is deterministic for the same alerts in the same order: a thread a crash interrupted
 * is rendered again and resumed at the reply it had reached (deliver/thread.ts).
 */
import { ellipsis, slackText } from '../../render/escape.ts';
import { plural } from '../../render/format.ts';
import {
  type Batch,
  batchSummary,
  batchTenant,
  type CredentialDelivery,
  countBy,
  deliveryIdsOf,
  digestTypes,
  type EventDelivery,
  forTenant,
  mostSevereFirst,
  planBatches,
  routesOf,
  severityCounts,
} from '../../render/group.ts';
import { verdictCounts } from '../../render/identity.ts';
import { credentialLink } from '../../render/link.ts';
import type { DeliveryAlert, Rendered } from '../../render/types.ts';
import { type Block, context, header, packSections, section } from './blocks.ts';
import { identityMenu, type Listed, MESSAGE_JSON_BUDGET, menuBlocks, menuParts } from './identity-menu.ts';
import type { SlackPayload } from './limits.ts';
import { fitSlackPayload, SLACK_LIMITS } from './limits.ts';
import {
  credentialDigestLine,
  digestLines,
  eventDigestLine,
  LINES_BUDGET,
  listOf,
  renderSlackBatch,
  slackLink,
  verdictSummary,
} from './render.ts';
import type { SlackRenderOptions } from './types.ts';

/** Replies a thread holds at most: past them the last reply counts the rest. */
export const MAX_REPLIES = 50;

/** Lines in chunks of at most LINES_BUDGET characters (at least one line each). */
function chunks<E extends Listed>(lines: E[]): E[][] {
  const out: E[][] = [];
  let current: E[] = [];
  let size = 0;
  for (const entry of lines) {
    if (current.length && size + entry.line.length + 1 > LINES_BUDGET) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(entry);
    size += entry.line.length + 1;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * What a reply's lines may take when some carry an account menu: all but its two closing blocks
 * (the count of what is not listed, and where the reply stands), and their JSON beside it.
 */
const REPLY_ROOM = { blocks: SLACK_LIMITS.blocks - 2, chars: LINES_BUDGET, json: MESSAGE_JSON_BUDGET - 400 };

/**
 * The replies listing `lines`, numbered from `first` of `total`; at most MAX_REPLIES. A line with
 * a menu (identity-menu.ts) is a section of its own, so those replies are split by blocks and size.
 */
function replies(lines: Listed[], first: number, total: number): SlackPayload[] {
  const menus = lines.some((l) => l.menu);
  const parts = menus ? menuParts(lines, REPLY_ROOM) : chunks(lines);
  const kept = parts.slice(0, MAX_REPLIES);
  let at = first;
  return kept.map((part, i) => {
    const from = at + 1;
    at += part.length;
    const unlisted = i === kept.length - 1 ? total - at : 0;
    const blocks: Block[] = [
      ...(menus ? menuBlocks(part) : packSections(part.map((l) => l.line))),
      ...(unlisted > 0
        ? [section(`_… and ${plural(unlisted, 'more item')} not listed (${total} in all)._`)]
        : []),
      context(`${from}–${at} of ${total}`),
    ];
    return fitSlackPayload({ text: slackText(`items ${from} to ${at} of ${total}`, 200), blocks });
  });
}

function eventThread(batch: Extract<Batch, { type: 'digest'; kind: 'event' }>, opts: SlackRenderOptions) {
  const total = batch.alerts.length;
  const sorted = mostSevereFirst(batch.alerts);
  const { shown } = digestLines(sorted, (a) => eventDigestLine(a, opts), opts.digest.maxItems);
  const rest = sorted.slice(shown.length).map((a) => ({ line: eventDigestLine(a, opts) }));
  const title = forTenant(batchTenant(batch), `Exposure digest · ${plural(total, 'event')}`);
  const blocks: Block[] = [
    header(title),
    section(
      `*${plural(total, 'event')}*: ${severityCounts(batch.alerts)}\n*Types:* ${listOf(digestTypes(batch.alerts), 1_000)}`,
    ),
    ...packSections(shown),
    ...(rest.length ? [section(`_… and ${rest.length} more in the thread._`)] : []),
    context(`routes ${slackText(routesOf(batch.alerts).join(', '), 400)}`),
  ];
  const parent = fitSlackPayload({
    text: slackText(`${title}: ${severityCounts(batch.alerts)}`, 500),
    blocks,
  });
  return { parent, thread: replies(rest, shown.length, total) };
}

function credentialThread(
  batch: Extract<Batch, { type: 'digest'; kind: 'credential' }>,
  opts: SlackRenderOptions,
) {
  const total = batch.alerts.length;
  const groups = countBy(
    batch.alerts.map(
      (a: CredentialDelivery) =>
        `${slackText(a.item.domain, 80, ellipsis)} · ${slackText(a.item.source?.name ?? a.item.source_id, 80, ellipsis)}`,
    ),
  );
  const link = slackLink(
    credentialLink((batch.alerts[0] as CredentialDelivery).item, opts.appUrl),
    'open in the web app',
  );
  const title = forTenant(batchTenant(batch), `Leaked credentials digest · ${plural(total, 'login')}`);
  // What the lookups found, before the thread is opened.
  const verdicts = verdictSummary(batch.alerts);
  const counts = verdictCounts(batch.alerts);
  const blocks: Block[] = [
    header(title),
    section(
      `*${plural(total, 'leaked login')}*${verdicts ? `${verdicts}\nBy domain and leak:` : ' by domain and leak:'}\n${groups
        .slice(0, 40)
        .map(([group, n]) => `• ${group}: ${n}`)
        .join('\n')}${groups.length > 40 ? `\n_… and ${plural(groups.length - 40, 'more group')}._` : ''}`,
    ),
    section(`_The logins are in the thread._${link ? ` ${link}` : ''}`),
    context(
      `routes ${slackText(routesOf(batch.alerts).join(', '), 400)} · passwords are never sent to Slack`,
    ),
  ];
  const parent = fitSlackPayload({
    text: slackText(`${title} across ${plural(groups.length, 'group')}${counts ? `: ${counts}` : ''}`, 500),
    blocks,
  });
  return {
    parent,
    // Each login with a verdict has its account menu beside it (identity-menu.ts).
    thread: replies(
      batch.alerts.map((a) => {
        const menu = identityMenu(a, opts);
        return { line: credentialDigestLine(a, opts), ...(menu ? { menu } : {}) };
      }),
      0,
      total,
    ),
  };
}

/**
 * One Slack message per event or credential group, as slack.ts renders them, and a thread per
 * digest: its parent, and its replies in `thread`.
 */
export function renderSlackThreads(
  alerts: DeliveryAlert[],
  opts: SlackRenderOptions,
): Rendered<SlackPayload>[] {
  return planBatches(alerts, opts.digest).flatMap((batch): Rendered<SlackPayload>[] => {
    if (batch.type !== 'digest') return renderSlackBatch(batch, opts);
    const { parent, thread } =
      batch.kind === 'event' ? eventThread(batch, opts) : credentialThread(batch, opts);
    return [
      {
        deliveryIds: deliveryIdsOf(batch.alerts as (EventDelivery | CredentialDelivery)[]),
        payload: parent,
        summary: `${batchSummary(batch)}, as a thread of ${plural(thread.length, 'reply')}`,
        thread,
      },
    ];
  });
}
