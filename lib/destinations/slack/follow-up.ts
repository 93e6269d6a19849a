/**
 * A Slack app's follow-up: the item's own message as it was with a line on top of its context
 * saying what changed, who did it and when (a `chat.update`, not of a digest's parent), written
 * down once done, then a short reply in its thread; a message too old to edit gets the reply
 * alone, a deleted one gets it in the channel. Who acted and why are a person's text, shown as
 * `plain_text`. A message an incoming webhook posted is replaced through a click instead.
 */

import type { SendOutcome } from '../../deliver/outcome.ts';
import type { FollowUpAction } from '../../model.ts';
import { slackPlain, slackText } from '../../render/escape.ts';
import { actionWords } from '../../render/follow-up.ts';
import type { DeliveryAlert, RenderOptions } from '../../render/types.ts';
import type { FollowUpSend } from '../kind.ts';
import { postMessage, UNEDITABLE_SLACK_ERRORS, updateMessage } from './app.ts';
import { flagButtons } from './buttons.ts';
import type { SlackPayload } from './limits.ts';
import { fitSlackPayload } from './limits.ts';
import { renderSlackBatch, slackOptions } from './render.ts';
import type { SlackDestination, SlackOptions } from './types.ts';

const MARK: Record<string, string> = {
  ignore: ':no_bell:',
  remediate: ':white_check_mark:',
  unignore: ':bell:',
  unremediate: ':leftwards_arrow_with_hook:',
};

export const REASON_MAX = 500;

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
  opts: RenderOptions<SlackOptions>,
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
    { ...slackOptions(opts), flags },
  );
  const original = own?.payload ?? { text: '', blocks: [] };
  const edit = fitSlackPayload({
    text: slackText(`${words} · ${original.text}`, 500),
    blocks: [...original.blocks.slice(0, 49), { type: 'context', elements: texts }],
  });
  return { edit, reply };
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

/** A thread reply refused because its parent is gone (deleted): the reply goes in the channel. */
const NO_THREAD: ReadonlySet<string> = new Set(['thread_not_found', 'message_not_found']);

/** Sends a Slack app's follow-up (the edit once, then the reply); a webhook's Slack hears of none. */
export async function sendSlackFollowUp(
  destination: SlackDestination,
  f: FollowUpSend<SlackPayload, SlackOptions>,
): Promise<SendOutcome | 'budget'> {
  const { app } = destination;
  const { record, action, log } = f;
  if (!app) return { ok: false, permanent: true, error: 'slack takes no follow-ups' };
  const posted = record.posted;
  const { edit, reply } = slackFollowUp(f.alert, action, f.opts);
  if (posted && !posted.digest && !record.followUp?.edited && record.item) {
    const edited = await f.request(updateMessage(app, posted, edit));
    if (edited === 'budget') return edited;
    if (edited.ok) {
      record.followUp = { action, edited: true };
      await f.save();
    } else if (!UNEDITABLE_SLACK_ERRORS.has(edited.error.replace(/^slack /, ''))) {
      return edited;
    } else {
      // Over for good: a retry of the reply does not try the edit again.
      record.followUp = { action, edited: true };
      log.info('the message is gone or too old to edit; the follow-up is a thread reply alone', {
        error: edited.error,
        delivery: record.id,
      });
    }
  }
  let replied = await f.request(postMessage(app, reply, posted));
  if (replied !== 'budget' && !replied.ok && posted && NO_THREAD.has(replied.error.replace(/^slack /, ''))) {
    // The message it would reply to is gone: the news goes in the channel itself.
    log.info('the message to reply to is gone; the follow-up goes in the channel', {
      error: replied.error,
      delivery: record.id,
    });
    replied = await f.request(postMessage(app, reply));
  }
  // The follow-up's record keeps the place of the message it followed up, not of its reply.
  return replied === 'budget' || !replied.ok ? replied : { ok: true, status: replied.status };
}
