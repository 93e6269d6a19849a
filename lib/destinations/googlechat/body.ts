/**
 * Google Chat's rendering and its send: a JSON POST to the space's incoming webhook; a message
 * in a thread names its key and asks, on the URL, to join that thread or open it. Its answers read
 * as HTTP says (2xx accepted; 429 waits its Retry-After, else the backoff, without an attempt
 * counted; 408 and 5xx retried; any other 4xx refused for good), with Google's error status and
 * message said.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpRequest } from '../../deliver/outcome.ts';
import { type Answer, answerDetail, postRequest, readAnswer } from '../../deliver/send-context.ts';
import type { KindBody } from '../kind.ts';
import type { GoogleChatPayload } from './card.ts';
import { googleChatProblems } from './limits.ts';
import { googleChatNotice, renderGoogleChat, testReply } from './render.ts';
import type { GoogleChatDestination } from './types.ts';

/** Without it, Google Chat ignores a thread key and opens a new thread for every message. */
export const REPLY_OPTION = 'messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD';

/** The POST of `payload`; the URL is kept byte for byte (its key and token), the option appended. */
export function chatRequest(url: string, payload: GoogleChatPayload): HttpRequest {
  const target = payload.thread ? `${url}${url.includes('?') ? '&' : '?'}${REPLY_OPTION}` : url;
  return {
    url: target,
    headers: { 'Content-Type': 'application/json; charset=UTF-8' },
    body: JSON.stringify(payload),
  };
}

/** Google's error body, `{"error": {"code", "message", "status"}}`, as `STATUS: message`. */
function explain(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: { status?: unknown; message?: unknown } }).error;
    if (error && (typeof error.status === 'string' || typeof error.message === 'string'))
      return answerDetail(`${error.status ?? ''}: ${error.message ?? ''}`.replace(/^: /, ''));
  } catch {
    // Not Google's JSON: its start says what there is.
  }
  return answerDetail(body);
}

const read = (answer: Answer, now: number) => readAnswer(answer, now, explain);

export const googlechatBody: KindBody<GoogleChatDestination, GoogleChatPayload> = {
  render: (destination, alerts, opts) => renderGoogleChat(alerts, opts, destination.threads),
  notice: (destination, notice, opts) => googleChatNotice(notice, opts, destination.threads),
  request: (destination, payload) => chatRequest(destination.url, payload),
  read: (_destination, answer, now) => read(answer, now),
  // The reply names its thread itself (its key); where the parent landed is not needed.
  reply: async (destination, payload, _parent, ctx) =>
    payload.thread
      ? postRequest(chatRequest(destination.url, payload), ctx, read)
      : { ok: false, permanent: true, error: 'googlechat: a thread reply without a thread key' },
  problems: googleChatProblems,
  async afterTest(destination, payload, _outcome, ctx) {
    const threadKey = payload.thread?.threadKey;
    if (!destination.threads || !threadKey) return [];
    // One message a second per space: the reply waits its turn after the test message.
    await sleep(1_000, undefined, { signal: ctx.signal });
    return [
      ['thread reply ', await postRequest(chatRequest(destination.url, testReply(threadKey)), ctx, read)],
    ];
  },
};
