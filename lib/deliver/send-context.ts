/**
 * What every kind's sender shares: the context of a send (the POST, the clock, its timeout, where
 * the console writes), the POST itself with its timeout, and the reading of an answer that every
 * kind starts from:
 * - retry (transient): 408, 429, 5xx, network errors, timeouts; after the `Retry-After` the answer
 *   gave (at most an hour), else after the backoff;
 * - never retry (permanent): every other 4xx (a revoked, archived or refused destination, or a
 *   payload it will never accept). A 413 is flagged `tooLarge`: the pass splits a message of
 *   several items instead (senders know HTTP, the pass knows items).
 * Any 2xx is an acceptance. A kind with answers of its own (a Slack app's `{"ok": false}` in a 200,
 * Postmark's refusals in a 200, PagerDuty's `errors`) reads them in its own folder first.
 * A timed-out request may already have been delivered; it is retried anyway (at-least-once then).
 */
import type { Clock } from '../clock.ts';
import { parseRetryAfter } from '../upstream/wire.ts';
import { originOf, waitingFor } from '../waits.ts';
import type { HttpRequest, SendOutcome } from './outcome.ts';
import type { HttpPost } from './post.ts';
import { sendTimeoutMs } from './send-timeout.ts';

export interface SendContext {
  /** The POST (post.ts; global fetch fits too). */
  post: HttpPost;
  now: () => number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the console destination writes. */
  write: (text: string) => void;
  /** The destination sent to, which a stop names while its answer is awaited (waits.ts). */
  destination?: string;
}

/** What a send takes from delivery's dependencies (DeliverDeps fits). */
export interface SendDeps {
  post: HttpPost;
  clock: Clock;
  write(text: string): void;
  sendTimeoutMs?: number;
}

export { DEFAULT_SEND_TIMEOUT_MS, sendTimeoutMs } from './send-timeout.ts';

/**
 * The context every send of delivery gets (the pass, its ops notices, inline delivery), so all of
 * them post, time and write the same way.
 *
 * @example
 * await body.send(destination, payload, deliveryIds, sendContext(deps, signal))
 */
export function sendContext(deps: SendDeps, signal?: AbortSignal): SendContext {
  return {
    post: deps.post,
    now: () => deps.clock.now(),
    timeoutMs: sendTimeoutMs(deps),
    signal,
    write: deps.write,
  };
}

/** An answer as a kind reads it. */
export interface Answer {
  status: number;
  body: string;
  headers: { get(name: string): string | null };
}

/**
 * POSTs `request` within the context's timeout and reads the answer with `read` (by default
 * `readAnswer`). A timeout or a network error is a transient failure; the pass's own abort is
 * thrown, not read.
 */
export async function postRequest(
  request: HttpRequest,
  ctx: SendContext,
  read: (answer: Answer, now: number) => SendOutcome = readAnswer,
): Promise<SendOutcome> {
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([timeout, ctx.signal]) : timeout;
  try {
    const answer = async () => {
      const res = await ctx.post(request.url, {
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal,
      });
      return { res, body: await res.text() };
    };
    const to = `${ctx.destination ? `destination ${ctx.destination}` : 'a destination'} at ${originOf(request.url)}`;
    const { res, body } = await waitingFor(to, answer());
    return read({ status: res.status, body, headers: res.headers }, ctx.now());
  } catch (error) {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    return {
      ok: false,
      permanent: false,
      error: timeout.aborted
        ? `no answer within ${ctx.timeoutMs} ms`
        : `network error: ${(error as Error)?.message ?? 'unknown'}`,
    };
  }
}

/** The start of an answer's body, on one line: what a refusal says about itself. */
export function answerDetail(body: string): string {
  return body.trim().slice(0, 120).replace(/\s+/g, ' ');
}

/**
 * Reads an answer as HTTP says it: 2xx accepted; 429 rate-limited; 408 and 5xx retried; 413 too
 * large; any other status refused for good. `error` says the status and, by default, the start of
 * the body (`explain` may say more, from a body the kind knows).
 */
export function readAnswer(
  answer: Pick<Answer, 'status' | 'body'> & { headers?: Answer['headers'] },
  now: number,
  explain: (body: string) => string = answerDetail,
): SendOutcome {
  const { status, body } = answer;
  if (status >= 200 && status < 300) return { ok: true, status };
  const said = explain(body);
  const error = `HTTP ${status}${said ? ` ${said}` : ''}`;
  const retryAfterMs = parseRetryAfter(answer.headers?.get('retry-after') ?? null, now);
  const wait = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 429) return { ok: false, permanent: false, status, rateLimited: true, ...wait, error };
  if (status === 408 || status >= 500) return { ok: false, permanent: false, status, ...wait, error };
  if (status === 413) return { ok: false, permanent: true, status, tooLarge: true, error };
  return { ok: false, permanent: true, status, error };
}

/** A JSON POST to `url`, with `headers` beside the content type. */
export function jsonRequest(
  url: string,
  payload: unknown,
  headers: Record<string, string> = {},
): HttpRequest {
  return { url, headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(payload) };
}
