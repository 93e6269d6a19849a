/**
 * The webhook's body and its send: an `Idempotency-Key` stable for the same items (a notice's from
 * its kind and time), and with a signing secret `X-Signature-Timestamp` and `X-Signature-256`.
 */

import { webhookTimestamp } from '../../render/format.ts';
import { webhookIdempotencyKey } from '../../render/keys.ts';
import { TEST_MARK } from '../../render/notice.ts';
import type { Notice, RenderOptions } from '../../render/types.ts';
import { secretText } from '../describe.ts';
import type { KindBody } from '../kind.ts';
import type { WebhookBody, WebhookNoticeBody } from './render.ts';
import { renderWebhook, signWebhook, type WebhookActionBody, webhookAction } from './render.ts';
import type { WebhookConfig, WebhookDestination } from './types.ts';

const SENSITIVE_HEADER = /auth|token|key|secret|signature|password|cookie/i;

type WebhookPayload = WebhookBody | WebhookNoticeBody | WebhookActionBody;

export function webhookNotice(notice: Notice, opts: RenderOptions): WebhookNoticeBody {
  return {
    version: 1,
    kind: notice.kind === 'test' ? 'test' : 'notice',
    destination: opts.destination,
    routes: [],
    items: [],
    sentAt: webhookTimestamp(opts.now),
    title: notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : notice.title,
    message: notice.text,
  };
}

export const webhookBody: KindBody<WebhookDestination, WebhookPayload, WebhookConfig> = {
  render: (_destination, alerts, opts) => renderWebhook(alerts, opts),
  notice: (_destination, notice, opts) => webhookNotice(notice, opts),
  request(destination, payload, deliveryIds, now) {
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = {
      ...destination.headers,
      'Content-Type': 'application/json',
      'Idempotency-Key': webhookIdempotencyKey(
        destination.name,
        deliveryIds.length ? [...deliveryIds] : [`${payload.kind}:${payload.sentAt}`],
      ),
    };
    if (destination.signingSecret) {
      const timestamp = String(Math.floor(now / 1000));
      headers['X-Signature-Timestamp'] = timestamp;
      headers['X-Signature-256'] = signWebhook(destination.signingSecret, timestamp, body);
    }
    return { url: destination.url, headers, body };
  },
  followUp: (_destination, f) => f.send(webhookAction(f.alert, f.action, f.opts)),
  problems: (payload) => {
    const body = JSON.parse(JSON.stringify(payload)) as { version?: unknown; kind?: unknown };
    return body.version === 1 && typeof body.kind === 'string' ? [] : ['body lacks version or kind'];
  },
  show(config, payload, deliveryIds, name) {
    const headers: [string, string][] = [];
    for (const [header, value] of Object.entries(config.headers ?? {}))
      headers.push([
        header,
        typeof value !== 'string' ? secretText(value) : SENSITIVE_HEADER.test(header) ? '<hidden>' : value,
      ]);
    headers.push(
      ['Content-Type', 'application/json'],
      ['Idempotency-Key', webhookIdempotencyKey(name, deliveryIds)],
    );
    if (config.signingSecret)
      headers.push(
        ['X-Signature-Timestamp', '<unix seconds at send time>'],
        [
          'X-Signature-256',
          `sha256=<HMAC-SHA256 of "<timestamp>.<body>" with ${secretText(config.signingSecret)}, computed at send time>`,
        ],
      );
    return `${headers.map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${JSON.stringify(payload, null, 2)}`;
  },
};
