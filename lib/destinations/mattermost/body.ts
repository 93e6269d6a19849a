/**
 * Mattermost's rendering and its send: a JSON POST; 200 (`ok`) accepted, 429 waited out for its
 * `Retry-After`, 5xx retried, any other 4xx refused for good (an unknown or deleted webhook is a
 * 400). Its errors are JSON (`id`, `message`): said as the server said them.
 */
import { answerDetail, jsonRequest, readAnswer } from '../../deliver/send-context.ts';
import type { KindBody } from '../kind.ts';
import { type MattermostPayload, mattermostNotice, mattermostProblems, renderMattermost } from './render.ts';
import type { MattermostDestination } from './types.ts';

/** `Invalid webhook (web.incoming_webhook.invalid.app_error)` from a Mattermost error body. */
function explain(body: string): string {
  try {
    const error = JSON.parse(body) as { id?: unknown; message?: unknown };
    if (typeof error.message === 'string')
      return answerDetail(`${error.message}${typeof error.id === 'string' ? ` (${error.id})` : ''}`);
  } catch {
    // Not JSON (a proxy's page, the rate limiter's `limit exceeded`): its start, as it is.
  }
  return answerDetail(body);
}

export const mattermostBody: KindBody<MattermostDestination, MattermostPayload> = {
  render: renderMattermost,
  notice: mattermostNotice,
  request: (destination, payload) => jsonRequest(destination.url, payload),
  read: (_destination, answer, now) => readAnswer(answer, now, explain),
  problems: mattermostProblems,
};
