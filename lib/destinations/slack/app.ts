/**
 * Slack as an app: the Web API requests a bot token makes (`chat.postMessage`, in a thread or
 * not, and `chat.update`) and how its answers read. Slack answers HTTP 200 to most refusals, with
 * `{"ok": false, "error": "…"}`: the error decides, as docs/destinations/slack.md lists them:
 * - permanent (the delivery is dead and the destination reported once): a wrong or revoked token,
 *   a channel the bot cannot post to, blocks Slack will never take;
 * - too big (the pass splits a digest): `msg_too_long`, `msg_blocks_too_long`;
 * - rate limited (the destination pauses, no attempt counted): HTTP 429 with `Retry-After`, or
 *   `ratelimited` / `rate_limited` in a 200 without one (then the backoff delay);
 * - anything else (Slack's own trouble, or an error this list does not know): retried.
 * A posted message's `channel` (always the id) and `ts` come back with the outcome: they are how a
 * thread reply or an edit finds it later.
 */

import type { HttpRequest, Posted, SendOutcome } from '../../deliver/outcome.ts';
import { parseRetryAfter } from '../../upstream/wire.ts';
import type { SlackPayload } from './limits.ts';
import type { SlackApp } from './types.ts';

/** Errors that no retry mends: the token, the channel, the bot's rights, or blocks Slack refuses. */
export const PERMANENT_SLACK_ERRORS: ReadonlySet<string> = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'restricted_action',
  'invalid_blocks',
  'invalid_blocks_format',
  'too_many_attachments',
  'no_text',
  'invalid_arguments',
  'ekm_access_denied',
  'team_access_not_granted',
]);
/** Too big for one message: split the digest (splitting a single item will not help: dead then). */
export const TOO_LONG_SLACK_ERRORS: ReadonlySet<string> = new Set(['msg_too_long', 'msg_blocks_too_long']);
/** An edit that can never happen (the message is gone, or too old): a thread reply goes instead. */
export const UNEDITABLE_SLACK_ERRORS: ReadonlySet<string> = new Set([
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
]);

const JSON_UTF8 = { 'Content-Type': 'application/json; charset=utf-8' };

function headers(app: SlackApp): Record<string, string> {
  return { ...JSON_UTF8, Authorization: `Bearer ${app.token}` };
}

/** `chat.postMessage` of a rendered message, in the thread of `threadTs` when given. */
export function postMessage(
  app: SlackApp,
  payload: SlackPayload,
  thread?: { channel: string; ts: string },
): HttpRequest {
  return {
    url: `${app.apiUrl}/chat.postMessage`,
    headers: headers(app),
    body: JSON.stringify({
      channel: thread?.channel ?? app.channel,
      ...(thread ? { thread_ts: thread.ts } : {}),
      text: payload.text,
      ...(payload.blocks?.length ? { blocks: payload.blocks } : {}),
      unfurl_links: false,
      unfurl_media: false,
    }),
  };
}

/** `chat.update` of the message at `posted` with a rendered message. */
export function updateMessage(app: SlackApp, posted: Posted, payload: SlackPayload): HttpRequest {
  return {
    url: `${app.apiUrl}/chat.update`,
    headers: headers(app),
    body: JSON.stringify({
      channel: posted.channel,
      ts: posted.ts,
      text: payload.text,
      ...(payload.blocks ? { blocks: payload.blocks } : {}),
    }),
  };
}

/** What a Web API answer means (see the module comment). */
export function readSlackAnswer(
  status: number,
  body: string,
  retryAfter: string | null,
  now: number,
): SendOutcome & { slackError?: string } {
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  const wait = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 429)
    return { ok: false, permanent: false, status, rateLimited: true, ...wait, error: 'HTTP 429 ratelimited' };
  let answer: { ok?: unknown; error?: unknown; channel?: unknown; ts?: unknown } = {};
  try {
    answer = JSON.parse(body) as typeof answer;
  } catch {
    // Not JSON (a proxy's page, say): the status decides below.
  }
  if (status >= 200 && status < 300 && answer.ok === true) {
    return typeof answer.channel === 'string' && typeof answer.ts === 'string'
      ? { ok: true, status, posted: { channel: answer.channel, ts: answer.ts } }
      : { ok: true, status };
  }
  if (status >= 500 || status === 408)
    return { ok: false, permanent: false, status, ...wait, error: `HTTP ${status}` };
  const code = typeof answer.error === 'string' ? answer.error : `HTTP ${status}`;
  const error = `slack ${code}`;
  if (code === 'ratelimited' || code === 'rate_limited')
    return { ok: false, permanent: false, status, rateLimited: true, ...wait, error, slackError: code };
  if (TOO_LONG_SLACK_ERRORS.has(code))
    return { ok: false, permanent: true, status, tooLarge: true, error, slackError: code };
  if (PERMANENT_SLACK_ERRORS.has(code) || UNEDITABLE_SLACK_ERRORS.has(code))
    return { ok: false, permanent: true, status, error, slackError: code };
  // A 4xx without an error we know is a refusal; an error we do not know in a 200 is retried.
  if (status >= 400) return { ok: false, permanent: true, status, error, slackError: code };
  return { ok: false, permanent: false, status, error, slackError: code };
}
