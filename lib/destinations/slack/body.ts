/**
 * Slack's rendering and its send: a webhook takes the blocks as they are (200 `ok`); an app posts
 * them with `chat.postMessage` and its answers are read as the Web API means them
 * (app.ts). An app's digest is a thread: the parent here, its replies by
 * deliver/thread.ts.
 */

import type { HttpRequest } from '../../deliver/outcome.ts';
import { jsonRequest, postRequest, readAnswer, type SendContext } from '../../deliver/send-context.ts';
import { slackLines, slackPlain, slackText } from '../../render/escape.ts';
import { footer, headline } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import type { KindBody } from '../kind.ts';
import { postMessage, readSlackAnswer, updateMessage } from './app.ts';
import { sendSlackFollowUp, slackFollowUp } from './follow-up.ts';
import type { SlackPayload } from './limits.ts';
import { fitSlackPayload, slackLimitProblems } from './limits.ts';
import { renderSlack, slackOptions } from './render.ts';
import { renderSlackThreads } from './thread.ts';
import type { SlackDestination, SlackOptions } from './types.ts';

export function slackNotice(notice: Notice, opts: RenderOptions): SlackPayload {
  const body =
    notice.kind === 'test'
      ? `*${slackText(notice.title, 200)}*\n${slackLines(notice.text, 2_500)}`
      : slackLines(notice.text, 2_800);
  return fitSlackPayload({
    text: slackText(`${headline(notice)}${notice.kind === 'test' ? ` · ${notice.title}` : ''}`, 500),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: slackPlain(headline(notice), 150), emoji: true } },
      { type: 'section', text: { type: 'mrkdwn', text: body || '_(no text)_' } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackText(footer(opts)) }] },
    ],
  });
}

/** Sends a Web API call of the app (a reply, an edit) and reads its answer as Slack's. */
function call(destination: SlackDestination, request: HttpRequest, ctx: SendContext) {
  return postRequest(request, { ...ctx, destination: destination.name }, (a, now) =>
    readSlackAnswer(a.status, a.body, a.headers.get('retry-after'), now),
  );
}

export const slackBody: KindBody<SlackDestination, SlackPayload, unknown, SlackOptions> = {
  render: (destination, alerts, opts) =>
    destination.app
      ? renderSlackThreads(alerts, slackOptions(opts))
      : renderSlack(alerts, { ...slackOptions(opts), webhook: true }),
  notice: (_destination, notice, opts) => slackNotice(notice, opts),
  request: (destination, payload) =>
    destination.app ? postMessage(destination.app, payload) : jsonRequest(destination.url, payload),
  read: (destination, a, now) =>
    destination.app
      ? readSlackAnswer(a.status, a.body, a.headers.get('retry-after'), now)
      : readAnswer(a, now),
  problems: slackLimitProblems,
  reply: async (destination, payload, parent, ctx) =>
    destination.app && parent
      ? call(destination, postMessage(destination.app, payload, parent), ctx)
      : { ok: false, permanent: true, error: 'slack: no parent message (channel and ts) to reply under' },
  async afterTest(destination, payload, outcome, ctx) {
    if (!destination.app) return [];
    const posted = outcome.posted;
    if (!posted)
      return [
        [
          'edit ',
          { ok: false, permanent: true, error: 'the answer named no channel and ts; nothing to edit' },
        ],
      ];
    const edited = { ...payload, text: `${payload.text} (edited)` };
    const reply = { text: 'exposure-alerts test: a reply in the thread', blocks: [] };
    return [
      ['edit ', await call(destination, updateMessage(destination.app, posted, edited), ctx)],
      ['thread reply ', await call(destination, postMessage(destination.app, reply, posted), ctx)],
    ];
  },
  followUp: sendSlackFollowUp,
  followUpSamples(destination, alert, action, opts) {
    if (!destination.app) return [];
    const { edit, reply } = slackFollowUp(alert, action, opts);
    return [
      ['edit', edit],
      ['reply', reply],
    ];
  },
};
