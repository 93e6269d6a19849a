/**
 * PagerDuty rendering: the dedup_key rule (and its hash past 255 characters), the severity
 * mapping, a summary within 1,024 characters that a phone can show, custom_details that is the
 * item as the password policy left it, the link, digests, and that no routing key is ever in a
 * rendered event. Each event is checked against the PagerDuty stand-in's own rules too.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PagerDutyEvent } from '../../../lib/destinations/pagerduty/render.ts';
import { renderPagerDuty } from '../../../lib/destinations/pagerduty/render.ts';
import { webhookIdempotencyKey } from '../../../lib/render/keys.ts';
import type { RenderOptions } from '../../../lib/render/types.ts';
import { applyPasswordPolicy } from '../../../lib/rules/passwords.ts';
import { eventErrors, TEST_ROUTING_KEY } from '../../helpers/pagerduty-receiver.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import { hostileCredential, hostileEvent } from '../../render/hostile.ts';

const single = renderOptions({ destination: 'pager', digest: { threshold: 100, maxItems: 20 } });
const pd = { credentialSeverity: 'error' } as const;
const render = (alerts: Parameters<typeof renderPagerDuty>[0], opts: RenderOptions = single) =>
  renderPagerDuty(alerts, opts, pd);

/** The stand-in's own rules, on the event as the sender posts it. */
function expectAccepted(event: PagerDutyEvent) {
  expect(eventErrors({ routing_key: TEST_ROUTING_KEY, ...event })).toEqual([]);
  expect(JSON.stringify(event)).not.toContain('routing_key');
}

describe('PagerDuty events', () => {
  it('one trigger per item, dedup_key event:<uid> / credential:<id>, custom_details the item, a link', () => {
    const event = makeEvent({ metadata: { uid: 'forum_post/darkforum/thread/1/post/2', severity: 'high' } });
    const credential = makeCredential({ id: 4242, event_uid: 'leak/combolists/x/2024' });
    const rendered = render([toDelivery(eventAlert(event)), toDelivery(credentialAlert(credential))]);
    expect(rendered).toHaveLength(2);
    const [e, c] = rendered.map((r) => r.payload);
    expect(e?.dedup_key).toBe('event:forum_post/darkforum/thread/1/post/2');
    expect(c?.dedup_key).toBe('credential:4242');
    expect(e?.event_action).toBe('trigger');
    expect(e?.client).toBe('exposure-alerts');
    expect(e?.payload?.source).toBe('exposure-alerts');
    expect(e?.payload?.custom_details).toEqual(event);
    expect(c?.payload?.custom_details).toEqual(credential);
    expect(e?.payload?.class).toBe('forum_post');
    expect(e?.payload?.timestamp).toBe('2026-11-20T10:05:00.000Z');
    expect(e?.links).toEqual([
      {
        href: 'https://app.example.test/#/forum_post/darkforum/thread%2F1%2Fpost%2F2',
        text: 'Open in the web app',
      },
    ]);
    expect(c?.links?.[0]?.href).toBe('https://app.example.test/#/leak/combolists/x%2F2024');
    for (const r of rendered) expectAccepted(r.payload);
  });

  it('a key over 255 characters becomes sha256:<hex> of it, the same for the same item', () => {
    const uid = `forum_post/${'x'.repeat(300)}`;
    const [a] = render([toDelivery(eventAlert(makeEvent({ metadata: { uid } })))]);
    const [b] = render([toDelivery(eventAlert(makeEvent({ metadata: { uid } })))]);
    const expected = `sha256:${createHash('sha256').update(`event:${uid}`).digest('hex')}`;
    expect(a?.payload.dedup_key).toBe(expected);
    expect(b?.payload.dedup_key).toBe(expected);
    expectAccepted(a!.payload);
    const [exact] = render([toDelivery(eventAlert(makeEvent({ metadata: { uid: 'u'.repeat(249) } })))]);
    expect(exact?.payload.dedup_key).toBe(`event:${'u'.repeat(249)}`); // 255 characters: kept
  });

  it('maps severities: critical, high to error, medium to warning, low and info to info; credentials as configured', () => {
    const expected = {
      critical: 'critical',
      high: 'error',
      medium: 'warning',
      low: 'info',
      info: 'info',
    } as const;
    for (const [severity, mapped] of Object.entries(expected)) {
      const [r] = render([
        toDelivery(eventAlert(makeEvent({ metadata: { severity: severity as keyof typeof expected } }))),
      ]);
      expect(r?.payload.payload?.severity, severity).toBe(mapped);
    }
    // The effective severity: the tenant's override wins.
    const overridden = makeEvent({
      metadata: { severity: 'low' },
      tenant_metadata: { severity: { original: 'low', override: 'critical' } },
    });
    expect(render([toDelivery(eventAlert(overridden))])[0]?.payload.payload?.severity).toBe('critical');
    const credential = toDelivery(credentialAlert(makeCredential()));
    expect(
      renderPagerDuty([credential], single, { credentialSeverity: 'warning' })[0]?.payload.payload?.severity,
    ).toBe('warning');
  });

  it('the summary says severity, type, whom and what matched, on one line within 1,024 characters', () => {
    const event = makeEvent({
      metadata: { type: 'forum_post', severity: 'high' },
      identifiers: [{ id: 1, name: 'ceo@acme.test' }],
      highlights: { content: [`selling <mark>acme.test</mark>\u202E\n VPN ${'A'.repeat(5_000)}`] },
    });
    const [r] = render([toDelivery(eventAlert(event))]);
    const summary = r?.payload.payload?.summary ?? '';
    expect(summary).toMatch(/^HIGH forum_post for ceo@acme\.test: selling acme\.test +VPN AAA/);
    expect([...summary].length).toBeLessThanOrEqual(1_024);
    expect(summary).not.toMatch(/[\u0000-\u001f\u202e]/);
    const [c] = render([toDelivery(credentialAlert(makeCredential({ identity_name: 'jane@acme.test' })))]);
    expect(c?.payload.payload?.summary).toMatch(
      /^LEAKED CREDENTIAL for jane@acme\.test \(plaintext\) in Collection #1/,
    );
  });

  it('hostile items: accepted by PagerDuty, summaries within limits, custom_details the item as it is', () => {
    const alerts = [
      ...Array.from({ length: 3 }, (_, i) => toDelivery(eventAlert(hostileEvent(i)))),
      toDelivery(credentialAlert(hostileCredential(1))),
    ];
    const rendered = render(alerts);
    expect(rendered).toHaveLength(4);
    rendered.forEach((r, i) => {
      expectAccepted(r.payload);
      expect(r.payload.payload?.custom_details).toEqual(alerts[i]?.item);
    });
    // flare_url is javascript: in these items: no link rather than that one.
    expect(rendered[0]?.payload.links).toEqual([
      { href: expect.stringMatching(/^https:\/\/app\.example\.test\/#\//), text: 'Open in the web app' },
    ]);
  });

  it('over the threshold: one trigger per kind, keyed by the digest Idempotency-Key, items listed and counted', () => {
    const events = Array.from({ length: 30 }, (_, i) => toDelivery(eventAlert(hostileEvent(i))));
    const logins = Array.from({ length: 10 }, (_, i) =>
      toDelivery(credentialAlert(makeCredential({ id: 900 + i }))),
    );
    const opts = renderOptions({ destination: 'pager', digest: { threshold: 5, maxItems: 20 } });
    const rendered = render([...events, ...logins], opts);
    expect(rendered).toHaveLength(2);
    const [digest, credentials] = rendered;
    expect(digest?.deliveryIds).toHaveLength(30);
    expect(digest?.payload.dedup_key).toBe(
      webhookIdempotencyKey(
        'pager',
        events.map((a) => a.deliveryId),
      ),
    );
    // The same digest again (in any order) has the same key: a repeat joins the incident.
    expect(render([...events].reverse(), opts)[0]?.payload.dedup_key).toBe(digest?.payload.dedup_key);
    const details = digest?.payload.payload?.custom_details as {
      count: number;
      notListed: number;
      items: unknown[];
    };
    expect(details.count).toBe(30);
    expect(details.items.length + details.notListed).toBe(30);
    expect(details.items.length).toBeLessThanOrEqual(20);
    expect(digest?.payload.payload?.severity).toBe('critical');
    expect(credentials?.payload.payload?.summary).toMatch(
      /^LEAKED CREDENTIALS DIGEST 10 logins: example\.com \(10\)/,
    );
    for (const r of rendered) expectAccepted(r.payload);
  });

  it('a 1,000-item digest of large items stays far under 512 KB', () => {
    const big = (i: number) =>
      toDelivery(
        eventAlert(
          makeEvent({
            highlights: { content: [`<mark>x</mark>${'y'.repeat(20_000)}`] },
            metadata: { uid: `u/${i}/x` },
          }),
        ),
      );
    const [r] = render(
      Array.from({ length: 1_000 }, (_, i) => big(i)),
      renderOptions({ digest: { threshold: 5, maxItems: 1_000 } }),
    );
    expect(Buffer.byteLength(JSON.stringify(r?.payload))).toBeLessThan(200_000);
    expectAccepted(r!.payload);
  });

  it('under masked and hidden, the cleartext password never reaches an event', () => {
    for (const policy of ['masked', 'hidden'] as const) {
      const item = applyPasswordPolicy(makeCredential({ hash: 'Hunter2-Secret!' }), policy);
      for (const threshold of [100, 0]) {
        const rendered = render(
          [toDelivery(credentialAlert(item))],
          renderOptions({ digest: { threshold, maxItems: 20 } }),
        );
        const text = JSON.stringify(rendered.map((r) => r.payload));
        expect(text).not.toContain('Hunter2');
        if (policy === 'masked') expect(text).toContain('H*************!');
        else expect(text).not.toContain('"hash"');
      }
    }
  });
});
