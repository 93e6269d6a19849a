/**
 * One sender per destination type: builds the HTTP request for a rendered payload, sends it with a
 * timeout, and classifies the answer as in destinations-facts.md:
 * - retry (transient): 408, 429, 5xx, network errors, timeouts; after the `Retry-After` the answer
 *   gave (at most an hour), else after the backoff;
 * - never retry (permanent): every other 4xx (a revoked, archived or refused destination, or a
 *   payload it will never accept). A 413 is flagged `tooLarge`: the pass splits a message of
 *   several items instead (senders know HTTP, the pass knows items).
 * Any 2xx is an acceptance (a Teams Workflows URL answers 202 with an empty body, PagerDuty 202 with
 * JSON), except Postmark's refusals inside a 200. A PagerDuty refusal keeps PagerDuty's `errors` in
 * the error, so the dead record says why; the routing key is added to its body here, never before.
 * A timed-out request may already have been delivered; it is retried anyway (at-least-once then).
 */
import type { Clock } from '../clock.ts';
import type { WebhookActionBody } from '../render/follow-up.ts';
import type { JiraContent } from '../render/jira.ts';
import type { IncidentContent } from '../render/servicenow.ts';
import type {
  DiscordPayload,
  EmailContent,
  HecEvent,
  PagerDutyEvent,
  SentinelRecord,
  SlackPayload,
  TeamsPayload,
  WebhookBody,
  WebhookNoticeBody,
} from '../render/types.ts';
import { signWebhook, webhookIdempotencyKey } from '../render/webhook.ts';
import { parseRetryAfter } from '../upstream/wire.ts';
import type { ResolvedDestination } from './destinations.ts';
import { readDiscordAnswer } from './discord.ts';
import { emailRequest } from './email.ts';
import { incidentRequest, jiraRequest, readIncidentAnswer, readJiraAnswer } from './jira.ts';
import type { HttpRequest, SendOutcome } from './outcome.ts';
import type { HttpPost } from './post.ts';
import { sendSentinel } from './sentinel.ts';
import { postMessage, readSlackAnswer } from './slack-app.ts';

export type { HttpRequest, SendFailure, SendOutcome } from './outcome.ts';

export type Payload =
  | SlackPayload
  | EmailContent
  | WebhookBody
  | WebhookNoticeBody
  | WebhookActionBody
  | TeamsPayload
  | PagerDutyEvent
  | JiraContent
  | IncidentContent
  | { events: HecEvent[] }
  | { records: SentinelRecord[] }
  | DiscordPayload
  | string;

export interface SendContext {
  /** The POST (post.ts; global fetch fits too). */
  post: HttpPost;
  now: () => number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the console destination writes. */
  write: (text: string) => void;
}

export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** What a send takes from delivery's dependencies (DeliverDeps fits). */
export interface SendDeps {
  post: HttpPost;
  clock: Clock;
  write(text: string): void;
  sendTimeoutMs?: number;
}

/** How long a send waits for its answer. */
export function sendTimeoutMs(deps: { sendTimeoutMs?: number }): number {
  return deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
}

/**
 * The context every send of delivery gets (the pass, its ops notices, inline delivery), so all of
 * them post, time and write the same way.
 *
 * @example
 * await send(destination, payload, deliveryIds, sendContext(deps, signal))
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

/** The HTTP request for a payload; undefined for the console. `deliveryIds` make the webhook's Idempotency-Key. */
export function buildRequest(
  destination: ResolvedDestination,
  payload: Payload,
  deliveryIds: readonly string[],
  now: number,
): HttpRequest | undefined {
  const json = { 'Content-Type': 'application/json' };
  switch (destination.type) {
    case 'console':
      return undefined;
    case 'slack':
      if (destination.app) return postMessage(destination.app, payload as SlackPayload);
      return { url: destination.url, headers: json, body: JSON.stringify(payload) };
    case 'teams':
    case 'discord':
      return { url: destination.url, headers: json, body: JSON.stringify(payload) };
    case 'pagerduty': {
      // The routing key goes first, as PagerDuty documents the body; the rendered event never holds it.
      const event = { routing_key: destination.routingKey, ...(payload as PagerDutyEvent) };
      return { url: destination.url, headers: json, body: JSON.stringify(event) };
    }
    case 'webhook': {
      const body = JSON.stringify(payload);
      const headers: Record<string, string> = {
        ...destination.headers,
        ...json,
        'Idempotency-Key': webhookIdempotencyKey(
          destination.name,
          deliveryIds.length
            ? [...deliveryIds]
            : [`${(payload as WebhookNoticeBody).kind}:${(payload as WebhookNoticeBody).sentAt}`],
        ),
      };
      if (destination.signingSecret) {
        const timestamp = String(Math.floor(now / 1000));
        headers['X-Signature-Timestamp'] = timestamp;
        headers['X-Signature-256'] = signWebhook(destination.signingSecret, timestamp, body);
      }
      return { url: destination.url, headers, body };
    }
    case 'jira':
      return jiraRequest(destination, payload as JiraContent);
    case 'servicenow':
      return incidentRequest(destination, payload as IncidentContent);
    case 'sentinel':
      // Sent by `send`, which buys the token first.
      return undefined;
    case 'splunk':
      // HEC takes the events written one after another, not as an array.
      return {
        url: `${destination.url}/services/collector/event`,
        headers: { ...json, Authorization: destination.authorization },
        body: (payload as { events: HecEvent[] }).events.map((e) => JSON.stringify(e)).join('\n'),
      };
    case 'email':
      return emailRequest(destination, payload as EmailContent);
  }
}

/** Reads the answer of a destination and decides: accepted, retry later, or never. */
export function classify(
  destination: ResolvedDestination,
  status: number,
  body: string,
  retryAfter: string | null,
  now: number,
): SendOutcome {
  if (destination.type === 'slack' && destination.app) return readSlackAnswer(status, body, retryAfter, now);
  if (destination.type === 'jira' || destination.type === 'servicenow') {
    const answer =
      destination.type === 'jira' ? readJiraAnswer(status, body) : readIncidentAnswer(status, body);
    if (answer) return answer;
  }
  const detail = body.trim().slice(0, 120).replace(/\s+/g, ' ');
  if (status >= 200 && status < 300) {
    if (destination.type === 'email' && destination.provider === 'postmark') {
      // Postmark reports some refusals in a 200 body.
      try {
        const code = (JSON.parse(body) as { ErrorCode?: unknown }).ErrorCode;
        if (typeof code === 'number' && code !== 0) {
          return { ok: false, permanent: true, status, error: `postmark ErrorCode ${code}` };
        }
      } catch {
        // A 200 without a JSON body is taken as accepted.
      }
    }
    return { ok: true, status };
  }
  const error = `HTTP ${status}${destination.type === 'pagerduty' ? pagerDutyErrors(body, detail) : detail ? ` ${detail}` : ''}`;
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  const wait = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 429) return { ok: false, permanent: false, status, rateLimited: true, ...wait, error };
  if (status === 408 || status >= 500) return { ok: false, permanent: false, status, ...wait, error };
  if (status === 413) return { ok: false, permanent: true, status, tooLarge: true, error };
  return { ok: false, permanent: true, status, error };
}

/**
 * PagerDuty explains a 400 as `{"status":"invalid event","errors":[...]}`: the errors are what the
 * record keeps (retry.ts cuts them at 500 characters), so an operator sees why in `deliveries list`.
 */
function pagerDutyErrors(body: string, detail: string): string {
  try {
    const answer = JSON.parse(body) as { status?: unknown; message?: unknown; errors?: unknown };
    const errors = Array.isArray(answer.errors) ? answer.errors.map(String) : [];
    const said = [answer.status, answer.message].filter((v) => typeof v === 'string' && v).join(': ');
    if (errors.length || said)
      return ` ${said || 'refused'}${errors.length ? `; errors: ${errors.join('; ')}` : ''}`.replace(
        /\s+/g,
        ' ',
      );
  } catch {
    // Not JSON: the start of the body says what it can.
  }
  return detail ? ` ${detail}` : '';
}

/** Sends one rendered payload to one destination. */
export async function send(
  destination: ResolvedDestination,
  payload: Payload,
  deliveryIds: readonly string[],
  ctx: SendContext,
): Promise<SendOutcome> {
  if (destination.type === 'console') {
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload, null, 2);
    ctx.write(
      destination.standsFor
        ? `── ${destination.name} (${destination.standsFor}, dry run: not sent) ──\n${text}`
        : text,
    );
    return { ok: true };
  }
  if (destination.type === 'sentinel')
    return sendSentinel(destination, (payload as { records: SentinelRecord[] }).records, ctx, (req) =>
      sendRequest(destination, req, ctx),
    );
  return sendRequest(
    destination,
    buildRequest(destination, payload, deliveryIds, ctx.now()) as HttpRequest,
    ctx,
  );
}

/**
 * Sends one request made for `destination` (a thread reply, an edit) and reads its answer as the
 * destination's own.
 */
export async function sendRequest(
  destination: ResolvedDestination,
  request: HttpRequest,
  ctx: SendContext,
): Promise<SendOutcome> {
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const signal = ctx.signal ? AbortSignal.any([timeout, ctx.signal]) : timeout;
  try {
    const res = await ctx.post(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal,
    });
    const text = await res.text();
    const read = classify(destination, res.status, text, res.headers.get('retry-after'), ctx.now());
    return destination.type === 'discord' ? readDiscordAnswer(read, text, res.headers) : read;
  } catch (error) {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    const timedOut = timeout.aborted;
    return {
      ok: false,
      permanent: false,
      error: timedOut
        ? `no answer within ${ctx.timeoutMs} ms`
        : `network error: ${(error as Error)?.message ?? 'unknown'}`,
    };
  }
}
