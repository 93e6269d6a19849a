/**
 * PagerDuty's rendering and its send. The routing key is added to the body here, first as
 * PagerDuty documents it, never before: the rendered event, previews and logs never hold it. A
 * refusal keeps PagerDuty's `errors`, so the dead record says why.
 */

import { createHash } from 'node:crypto';
import type { HttpRequest } from '../../deliver/outcome.ts';
import { answerDetail, postRequest, readAnswer, type SendContext } from '../../deliver/send-context.ts';
import { lineText } from '../../render/escape.ts';
import { headline } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import { secretText } from '../describe.ts';
import type { KindBody } from '../kind.ts';
import type { PagerDutyEvent } from './render.ts';
import { dedupKey, pagerDutyProblems, pagerDutyResolve, renderPagerDuty, resolveOf } from './render.ts';
import type { PagerDutyConfig, PagerDutyDestination } from './types.ts';

/**
 * PagerDuty explains a 400 as `{"status":"invalid event","errors":[...]}`: the errors are what the
 * record keeps (cut at 500 characters), so an operator sees why in `deliveries list`.
 */
export function pagerDutyErrors(body: string): string {
  try {
    const answer = JSON.parse(body) as { status?: unknown; message?: unknown; errors?: unknown };
    const errors = Array.isArray(answer.errors) ? answer.errors.map(String) : [];
    const said = [answer.status, answer.message].filter((v) => typeof v === 'string' && v).join(': ');
    if (errors.length || said)
      return `${said || 'refused'}${errors.length ? `; errors: ${errors.join('; ')}` : ''}`.replace(
        /\s+/g,
        ' ',
      );
  } catch {
    // Not JSON: the start of the body says what it can.
  }
  return answerDetail(body);
}

/**
 * A test pages at `info` and `destinations test` resolves it at once (same key); an ops notice
 * pages at `error`, keyed by destination and title, so a repeat joins the open incident.
 */
export function pagerDutyNotice(notice: Notice, opts: RenderOptions): PagerDutyEvent {
  const key =
    notice.kind === 'test'
      ? `exposure-alerts:test:${opts.destination}:${opts.now.toISOString()}`
      : `exposure-alerts:ops:${createHash('sha256').update(notice.title).digest('hex').slice(0, 16)}`;
  return {
    event_action: 'trigger',
    dedup_key: dedupKey(key),
    payload: {
      summary: lineText(
        `${headline(notice)}${notice.kind === 'test' ? ` · ${notice.title}` : ''}`,
        1_024,
        () => '…',
      ),
      source: 'exposure-alerts',
      severity: notice.kind === 'test' ? 'info' : 'error',
      timestamp: opts.now.toISOString(),
      class: notice.kind === 'test' ? 'exposure_alerts_test' : 'exposure_alerts_ops',
      custom_details: { title: notice.title, message: notice.text, destination: opts.destination },
    },
    links: [],
    client: 'exposure-alerts',
  };
}

/** The POST of `event` to the destination, with its routing key, which only this adds. */
function eventRequest(destination: PagerDutyDestination, event: PagerDutyEvent): HttpRequest {
  return {
    url: destination.url,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ routing_key: destination.routingKey, ...event }),
  };
}

/** Sends `event` itself and reads the answer as PagerDuty's (a test's resolve). */
function sendEvent(destination: PagerDutyDestination, event: PagerDutyEvent, ctx: SendContext) {
  return postRequest(
    eventRequest(destination, event),
    { ...ctx, destination: destination.name },
    (answer, now) => readAnswer(answer, now, pagerDutyErrors),
  );
}

export const pagerdutyBody: KindBody<PagerDutyDestination, PagerDutyEvent, PagerDutyConfig> = {
  render: (destination, alerts, opts) =>
    renderPagerDuty(alerts, opts, { credentialSeverity: destination.credentialSeverity }),
  notice: (_destination, notice, opts) => pagerDutyNotice(notice, opts),
  request: eventRequest,
  read: (_destination, answer, now) => readAnswer(answer, now, pagerDutyErrors),
  // Ignore and remediate resolve the event's own incident; nothing else is said to PagerDuty.
  followUp(_destination, f) {
    const resolve = pagerDutyResolve(f.alert, f.action);
    return resolve
      ? f.send(resolve)
      : Promise.resolve({ ok: false, permanent: true, error: 'pagerduty takes no follow-ups' });
  },
  problems: pagerDutyProblems,
  afterTest: async (destination, payload, _outcome, ctx) => [
    ['resolve ', await sendEvent(destination, resolveOf(payload), ctx)],
  ],
  // The routing key is a secret even when written in the config: named, never shown.
  show: (config, payload) =>
    JSON.stringify(
      {
        routing_key:
          typeof config.routingKey === 'string' ? '<routing key, not shown>' : secretText(config.routingKey),
        ...payload,
      },
      null,
      2,
    ),
};
