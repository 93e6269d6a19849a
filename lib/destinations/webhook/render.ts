/**
 * Generic webhook bodies (docs/destinations/webhook.md) and their signature (their Idempotency-Key:
 * render/keys.ts).
 *
 * A webhook always receives every item: no digest, one kind per body, at most 100 items per body.
 * Items are the upstream items as the alerts carry them; the password policy was applied when the
 * alert was made, so nothing is masked (or re-masked) here.
 *
 * @example
 * const [first] = renderWebhook(alerts, opts);
 * const body = JSON.stringify(first.payload);
 * headers['X-Signature-256'] = signWebhook(secret, timestamp, body);
 */

import { createHmac } from 'node:crypto';
import type { FollowUpAction, TenantRef } from '../../model.ts';
import { webhookTimestamp } from '../../render/format.ts';
import { byTenant, deliveryIdsOf, routesOf } from '../../render/group.ts';
import type { DeliveryAlert, Rendered, RenderOptions } from '../../render/types.ts';
import { wellFormedDeep } from '../../text.ts';
import { takeTurns } from '../../turns.ts';

/** Body of a generic webhook POST (docs/destinations/webhook.md), exactly. */
export interface WebhookBody {
  version: 1;
  kind: 'events' | 'credentials';
  destination: string;
  /** The `tenants` entry whose items these are (docs/configuration.md); none for the top level. */
  tenant?: TenantRef;
  routes: string[];
  items: unknown[];
  sentAt: string;
}

/** Body a webhook receives for a Notice (not an alert batch): clearly not `events`/`credentials`. */
export interface WebhookNoticeBody {
  version: 1;
  kind: 'test' | 'notice';
  destination: string;
  routes: [];
  items: [];
  sentAt: string;
  title: string;
  message: string;
}

export const WEBHOOK_MAX_ITEMS = 100;

/**
 * Bodies of one kind and one tenant each, at most 100 items: a `tenants` entry's body says whose
 * items it carries (`tenant: {id, name}`).
 */
export function renderWebhook(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<WebhookBody>[] {
  const tenants = byTenant(alerts);
  return tenants.length > 1
    ? takeTurns(tenants.map((own) => renderOneTenant(own, opts)))
    : renderOneTenant(alerts, opts);
}

function renderOneTenant(alerts: DeliveryAlert[], opts: RenderOptions): Rendered<WebhookBody>[] {
  const out: Rendered<WebhookBody>[] = [];
  const tenant = alerts[0]?.tenant;
  // Kinds in the order they first appear, so a batch of credentials is not reordered behind events.
  const kinds = [...new Set(alerts.map((a) => a.kind))];
  for (const kind of kinds) {
    const ofKind = alerts.filter((a) => a.kind === kind);
    for (let start = 0; start < ofKind.length; start += WEBHOOK_MAX_ITEMS) {
      const chunk = ofKind.slice(start, start + WEBHOOK_MAX_ITEMS);
      const bodyKind = kind === 'event' ? 'events' : 'credentials';
      out.push({
        deliveryIds: deliveryIdsOf(chunk),
        payload: {
          version: 1,
          kind: bodyKind,
          destination: opts.destination,
          ...(tenant ? { tenant: { id: tenant.id, name: tenant.name } } : {}),
          routes: routesOf(chunk),
          items: chunk.map((a) => wellFormedDeep(a.item)),
          sentAt: webhookTimestamp(opts.now),
        },
        summary: `webhook ${bodyKind} x${chunk.length}${ofKind.length > WEBHOOK_MAX_ITEMS ? ` (part ${start / WEBHOOK_MAX_ITEMS + 1} of ${Math.ceil(ofKind.length / WEBHOOK_MAX_ITEMS)})` : ''}`,
      });
    }
  }
  return out;
}

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, the value of X-Signature-256. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Body a webhook with `followUps` receives when someone acts on an item it was sent. */
export interface WebhookActionBody {
  version: 1;
  kind: 'action';
  destination: string;
  action: { type: string; by: string; at: string; reason?: string };
  items: unknown[];
  sentAt: string;
}

export function webhookAction(
  alert: DeliveryAlert,
  action: FollowUpAction,
  opts: Pick<RenderOptions, 'destination' | 'now'>,
): WebhookActionBody {
  const { type, by, at, reason } = action;
  return wellFormedDeep<WebhookActionBody>({
    version: 1,
    kind: 'action',
    destination: opts.destination,
    action: { type, by, at, ...(reason !== undefined ? { reason } : {}) },
    items: [alert.item],
    sentAt: webhookTimestamp(opts.now),
  });
}
