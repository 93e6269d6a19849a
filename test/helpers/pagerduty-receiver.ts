/**
 * A real local HTTP stand-in for PagerDuty's Events API v2 enqueue endpoint, answering as PagerDuty
 * does (docs/destinations/pagerduty.md):
 * - 400 `{"status":"invalid event","message":"Event object is invalid","errors":[...]}` for a body
 *   that breaks its rules: a routing key that is not 32 characters, an unknown event_action, a
 *   dedup_key over 255 characters (or missing on a resolve), a trigger without summary (at most
 *   1,024 characters), source or a valid severity;
 * - 413 over 512 KB;
 * - else 202 `{"status":"success","message":"Event processed","dedup_key":...}`.
 * And it dedupes like PagerDuty: a trigger whose (routing key, dedup_key) has an open alert joins
 * it; after a resolve the same key opens a new one; a trigger without a key always opens one.
 * `alerts` is what an on-call would have been paged for. A test scripts other answers (429, 500)
 * for the next requests; a scripted answer processes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import type { Reply } from './receiver.ts';
import { standIn } from './stand-in.ts';

export const PAGERDUTY_MAX_BYTES = 512 * 1024;
/** A routing key of the right length, for tests. */
export const TEST_ROUTING_KEY = 'R0ut1ngKeyForTestsOnly0123456789';

export interface PagerDutyAlert {
  routingKey: string;
  dedupKey: string;
  open: boolean;
  /** Triggers that joined it after the first. */
  joined: number;
  /** The first trigger's event. */
  event: Record<string, unknown>;
}

export interface PagerDutyRequest {
  /** When it arrived: real time, or the time of the receiver's `now` when one was given. */
  at: number;
  body: string;
  status: number;
  event?: Record<string, unknown>;
}

export interface PagerDutyReceiver {
  /** The enqueue URL, to give as the destination's `url`. */
  url: string;
  requests: PagerDutyRequest[];
  /** Every alert ever opened, in order (a resolved one stays, `open: false`). */
  alerts: PagerDutyAlert[];
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

const SEVERITIES = ['critical', 'error', 'warning', 'info'];
const ACTIONS = ['trigger', 'acknowledge', 'resolve'];

/** What PagerDuty would list in `errors` for this event; empty when it is valid. */
export function eventErrors(event: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const key = event.routing_key;
  if (typeof key !== 'string' || key.length !== 32)
    errors.push("'routing_key' must be a 32-character string");
  if (!ACTIONS.includes(String(event.event_action)))
    errors.push("'event_action' must be one of trigger, acknowledge, resolve");
  const dedup = event.dedup_key;
  if (dedup !== undefined && (typeof dedup !== 'string' || dedup.length > 255))
    errors.push("'dedup_key' must be a string of at most 255 characters");
  if (event.event_action !== 'trigger' && dedup === undefined && ACTIONS.includes(String(event.event_action)))
    errors.push("'dedup_key' is required for acknowledge and resolve");
  if (event.event_action !== 'trigger') return errors;
  const payload = event.payload as Record<string, unknown> | undefined;
  if (!payload || typeof payload !== 'object') return [...errors, "'payload' is missing"];
  const summary = payload.summary;
  if (typeof summary !== 'string' || summary.length === 0) errors.push("'payload.summary' is missing");
  else if ([...summary].length > 1024) errors.push("'payload.summary' must be at most 1024 characters");
  if (typeof payload.source !== 'string' || payload.source === '') errors.push("'payload.source' is missing");
  if (!SEVERITIES.includes(String(payload.severity)))
    errors.push("'payload.severity' must be one of critical, error, warning, info");
  if (payload.timestamp !== undefined && Number.isNaN(Date.parse(String(payload.timestamp))))
    errors.push("'payload.timestamp' must be an ISO 8601 timestamp");
  return errors;
}

/** `now`: the clock its requests' `at` are read from (a test's clock); real time by default. */
export async function startPagerDutyReceiver(
  options: { now?: () => number } = {},
): Promise<PagerDutyReceiver> {
  const now = options.now ?? Date.now;
  const queue: Reply[] = [];
  const receiver: PagerDutyReceiver = {
    url: '',
    requests: [],
    alerts: [],
    script: (...replies) => queue.push(...replies),
    close: () => server.close(),
  };
  const open = new Map<string, PagerDutyAlert>();
  const server = await standIn((req, body, res, raw) => {
    const at = now();
    let event: Record<string, unknown> | undefined;
    const answer = (status: number, json?: unknown, headers: Record<string, string> = {}) => {
      receiver.requests.push({ at, body, status, ...(event ? { event } : {}) });
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(json === undefined ? '' : typeof json === 'string' ? json : JSON.stringify(json));
    };
    const invalid = (errors: string[]) =>
      answer(400, { status: 'invalid event', message: 'Event object is invalid', errors });
    const scripted = queue.shift();
    if (scripted && !('hang' in scripted))
      return answer(scripted.status, scripted.body ?? '', scripted.headers);
    if (req.method !== 'POST' || req.url !== '/v2/enqueue') return answer(404, { status: 'not found' });
    if (raw.length > PAGERDUTY_MAX_BYTES) return answer(413, { status: 'payload too large' });
    try {
      event = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return invalid(['the body is not JSON']);
    }
    if (!event || typeof event !== 'object' || Array.isArray(event))
      return invalid(['the body is not an object']);
    const errors = eventErrors(event);
    if (errors.length) return invalid(errors);
    const routingKey = String(event.routing_key);
    const dedupKey = typeof event.dedup_key === 'string' ? event.dedup_key : randomUUID();
    const slot = `${routingKey} ${dedupKey}`;
    const current = open.get(slot);
    if (event.event_action === 'trigger') {
      if (current) current.joined += 1;
      else {
        const alert: PagerDutyAlert = { routingKey, dedupKey, open: true, joined: 0, event };
        open.set(slot, alert);
        receiver.alerts.push(alert);
      }
    } else if (event.event_action === 'resolve' && current) {
      current.open = false;
      open.delete(slot);
    }
    answer(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
  });
  receiver.url = `${server.url}/v2/enqueue`;
  return receiver;
}

/** PagerDuty stand-ins a test starts as it needs them, each closed after that test. */
export function usePagerDutyReceivers(): (
  options?: Parameters<typeof startPagerDutyReceiver>[0],
) => Promise<PagerDutyReceiver> {
  const started: PagerDutyReceiver[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((r) => r.close()));
  });
  return async (options) => {
    const r = await startPagerDutyReceiver(options);
    started.push(r);
    return r;
  };
}
