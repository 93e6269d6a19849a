/** Webhook bodies: the exact contract shape, 100-item chunks, idempotency key and signature. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderWebhook, signWebhook } from '../../../lib/destinations/webhook/render.ts';
import { webhookIdempotencyKey } from '../../../lib/render/keys.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';

describe('renderWebhook', () => {
  it('produces exactly the contract body, one kind per body, items as given', () => {
    const event = makeEvent({ metadata: { severity: 'high' } });
    const credential = makeCredential({ hash: 'S*********!' });
    const alerts = [
      toDelivery(eventAlert(event), 'siem', ['high-and-up', 'vip']),
      toDelivery(credentialAlert(credential), 'siem', ['leaked-logins']),
    ];
    const rendered = renderWebhook(alerts, renderOptions({ destination: 'siem' }));
    expect(rendered.map((r) => r.payload)).toEqual([
      {
        version: 1,
        kind: 'events',
        destination: 'siem',
        routes: ['high-and-up', 'vip'],
        items: [event],
        sentAt: '2026-11-21T12:00:00Z',
      },
      {
        version: 1,
        kind: 'credentials',
        destination: 'siem',
        routes: ['leaked-logins'],
        items: [credential],
        sentAt: '2026-11-21T12:00:00Z',
      },
    ]);
    expect(Object.keys(rendered[0]!.payload)).toEqual([
      'version',
      'kind',
      'destination',
      'routes',
      'items',
      'sentAt',
    ]);
    expect(rendered.map((r) => r.deliveryIds)).toEqual([[alerts[0]!.deliveryId], [alerts[1]!.deliveryId]]);
  });

  it('does not re-mask: the item is passed through untouched', () => {
    const credential = makeCredential({ hash: 'clear-by-opt-in' });
    const [body] = renderWebhook([toDelivery(credentialAlert(credential))], renderOptions());
    expect((body!.payload.items[0] as { hash: string }).hash).toBe('clear-by-opt-in');
  });

  it('routes are the sorted union of the routes of the items in that body', () => {
    const alerts = [
      toDelivery(eventAlert(makeEvent()), 'siem', ['zeta', 'alpha']),
      toDelivery(eventAlert(makeEvent()), 'siem', ['alpha', 'mid']),
    ];
    expect(renderWebhook(alerts, renderOptions())[0]!.payload.routes).toEqual(['alpha', 'mid', 'zeta']);
  });

  it('never digests: 250 events make bodies of 100, 100 and 50 covering every item once', () => {
    const alerts = Array.from({ length: 250 }, (_, i) =>
      toDelivery(eventAlert(makeEvent()), 'siem', [`r${i % 3}`]),
    );
    const rendered = renderWebhook(alerts, renderOptions({ digest: { threshold: 1, maxItems: 1 } }));
    expect(rendered.map((r) => r.payload.items.length)).toEqual([100, 100, 50]);
    expect(rendered.flatMap((r) => r.deliveryIds)).toEqual(alerts.map((a) => a.deliveryId));
  });
});

describe('webhookIdempotencyKey', () => {
  it('is a hex sha256, stable for the same destination and items in any order', () => {
    const key = webhookIdempotencyKey('siem', ['a', 'b', 'c']);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(webhookIdempotencyKey('siem', ['c', 'a', 'b'])).toBe(key);
  });

  it('changes with the destination or the set of items', () => {
    const key = webhookIdempotencyKey('siem', ['a', 'b']);
    expect(webhookIdempotencyKey('other', ['a', 'b'])).not.toBe(key);
    expect(webhookIdempotencyKey('siem', ['a'])).not.toBe(key);
    expect(webhookIdempotencyKey('siem', ['a,b'])).not.toBe(key);
  });
});

describe('signWebhook', () => {
  it('is sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">', () => {
    const body = JSON.stringify({ version: 1, kind: 'events', items: [] });
    const expected = createHmac('sha256', 'siem-key').update(`1763726400.${body}`).digest('hex');
    expect(signWebhook('siem-key', '1763726400', body)).toBe(`sha256=${expected}`);
  });

  it('a known vector', () => {
    // HMAC-SHA256(key="key", "1.{}") computed independently.
    const expected = createHmac('sha256', Buffer.from('key', 'utf8'))
      .update(Buffer.from('1.{}', 'utf8'))
      .digest('hex');
    expect(signWebhook('key', '1', '{}')).toBe(`sha256=${expected}`);
    expect(signWebhook('key', '2', '{}')).not.toBe(`sha256=${expected}`);
  });
});
