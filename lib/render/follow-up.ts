/**
 * What a follow-up says (deliver/follow-up.ts): the news that someone acted on an item that was
 * alerted. For a Slack app, the item's own message as it was with a line on top of its context
 * saying what changed, who did it and when (the edit), and a short reply in its thread; for
 * PagerDuty, the resolve of the item's own incident (ignore and remediate only); for a webhook, a
 * body of kind `action`. Who acted and why are a person's text: escaped like upstream text, so a
 * reason can no more ping, link or spoof than an event can.
 */

import { dedupKey } from '../destinations/pagerduty/render.ts';
import { flagButtons } from '../destinations/slack/buttons.ts';
import { fitSlackPayload } from '../destinations/slack/limits.ts';
import { renderSlackBatch } from '../destinations/slack/render.ts';
import { type FollowUpAction, RESOLVING_ACTIONS } from '../model.ts';
import { wellFormedDeep } from '../text.ts';
import { slackPlain, slackText } from './escape.ts';
import { formatTime, webhookTimestamp } from './format.ts';
import type { DeliveryAlert, PagerDutyEvent, RenderOptions, SlackPayload } from './types.ts';

/** What each known action did, as a line starts; another type is shown as it is. */
const DONE: Record<string, string> = {
  ignore: 'Ignored',
  remediate: 'Marked remediated',
  unignore: 'No longer ignored',
  unremediate: 'No longer remediated',
};

const MARK: Record<string, string> = {
  ignore: ':no_bell:',
  remediate: ':white_check_mark:',
  unignore: ':bell:',
  unremediate: ':leftwards_arrow_with_hook:',
};

export const REASON_MAX = 500;

/** `Ignored by cli:alice at 2026-11-25 12:00 UTC`, as plain text (escape it for the medium). */
export function actionWords(action: FollowUpAction): string {
  return `${DONE[action.type] ?? `Action "${action.type}"`} by ${action.by} at ${formatTime(action.at)}`;
}

/**
 * The action as Slack `plain_text` (which Slack neither formats nor links: a reason written as
 * Markdown or a mention shows as typed), `<`, `>` and `&` swapped for look-alikes all the same.
 */
export function actionTexts(action: FollowUpAction): Record<string, unknown>[] {
  const mark = MARK[action.type] ?? ':information_source:';
  return [
    { type: 'plain_text', text: `${mark} ${slackPlain(actionWords(action), 400)}`, emoji: true },
    ...(action.reason
      ? [{ type: 'plain_text', text: `Reason: ${slackPlain(action.reason, REASON_MAX)}`, emoji: false }]
      : []),
  ];
}

export interface SlackFollowUp {
  /** The item's own message, re-rendered with the action on it (a `chat.update`). */
  edit: SlackPayload;
  /** The reply in its thread (or on its digest's parent). */
  reply: SlackPayload;
}

/** A Slack app's follow-up of `alert`: the edited message, and the thread reply. */
export function slackFollowUp(
  alert: DeliveryAlert,
  action: FollowUpAction,
  opts: RenderOptions,
): SlackFollowUp {
  const texts = actionTexts(action);
  const words = actionWords(action);
  const about =
    alert.kind === 'event'
      ? `${alert.item.metadata.type} ${alert.item.metadata.uid}`
      : `leaked credential of ${alert.item.identity_name}`;
  const reply: SlackPayload = {
    text: slackText(`${words}: ${about}`, 500),
    blocks: [
      { type: 'section', text: texts[0] },
      { type: 'context', elements: [...texts.slice(1), { type: 'mrkdwn', text: slackText(about, 300) }] },
    ],
  };
  // The message as it was, with the undo of what is now done (when it carries buttons).
  const flags = action.flags ?? {};
  const [own] = renderSlackBatch(
    alert.kind === 'event'
      ? { type: 'event', alert }
      : {
          type: 'credentials',
          domain: alert.item.domain.toLowerCase(),
          sourceId: alert.item.source_id,
          alerts: [alert],
        },
    { ...opts, flags },
  );
  const original = own?.payload ?? { text: '', blocks: [] };
  const edit = fitSlackPayload({
    text: slackText(`${words} · ${original.text}`, 500),
    blocks: [...original.blocks.slice(0, 49), { type: 'context', elements: texts }],
  });
  return { edit, reply };
}

/** PagerDuty's resolve of an event's own incident (`event:<uid>`); undefined for other changes. */
export function pagerDutyResolve(alert: DeliveryAlert, action: FollowUpAction): PagerDutyEvent | undefined {
  if (alert.kind !== 'event' || !RESOLVING_ACTIONS.has(action.type)) return undefined;
  return { event_action: 'resolve', dedup_key: dedupKey(`event:${alert.key}`), client: 'exposure-alerts' };
}

/** Body a webhook with `followUps` receives when someone acts on an item it was sent. */
export interface WebhookActionBody {
  version: 1;
  kind: 'action';
  destination: string;
  action: { type: string; by: string; at: string; reason?: string };
  items: unknown[];
  sentAt: string;
}

export function webhookAction(
  alert: DeliveryAlert,
  action: FollowUpAction,
  opts: Pick<RenderOptions, 'destination' | 'now'>,
): WebhookActionBody {
  const { type, by, at, reason } = action;
  return wellFormedDeep({
    version: 1,
    kind: 'action',
    destination: opts.destination,
    action: { type, by, at, ...(reason !== undefined ? { reason } : {}) },
    items: [alert.item],
    sentAt: webhookTimestamp(opts.now),
  }) as WebhookActionBody;
}

/**
 * A message an incoming webhook posted, replaced through a click's `response_url` once the action
 * is done (nothing else can change it): its blocks as Slack sent them back, the buttons swapped
 * for what `flags` now allow, and the action's line added under them.
 */
export function replacedMessage(
  original: { text?: string; blocks?: Record<string, unknown>[] },
  key: string,
  action: FollowUpAction,
  flags: { ignored?: boolean; remediated?: boolean },
): SlackPayload {
  const blocks = (original.blocks ?? []).map((block) => {
    if (block.type !== 'actions' || !String(block.block_id ?? '').startsWith('exposure')) return block;
    const rest = ((block.elements as { action_id?: string }[] | undefined) ?? []).filter(
      (e) => e.action_id === 'exposure:silence',
    );
    return { ...block, elements: [...flagButtons(key, flags), ...rest] };
  });
  return fitSlackPayload({
    text: slackText(`${actionWords(action)} · ${original.text ?? ''}`, 500),
    blocks: [...blocks.slice(0, 49), { type: 'context', elements: actionTexts(action) }],
  });
}
