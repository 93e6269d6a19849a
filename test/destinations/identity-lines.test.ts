/**
 * Every kind shows a login's identity verdict (docs/identity.md: shown and routable): one
 * short line per login, in a group's message and in a digest's entries (or its thread's replies),
 * escaped as each kind escapes upstream text, since the provider's display name is in it; a
 * digest's parent counts the verdicts; webhook bodies, Splunk events and Sentinel records carry
 * `_identity` on each item as it is; and a login without a verdict renders as it did.
 */
import { describe, expect, it } from 'vitest';
import { bodyOf } from '../../lib/destinations/kinds.ts';
import type { PagerDutyEvent } from '../../lib/destinations/pagerduty/render.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import { lineText } from '../../lib/render/escape.ts';
import { identityLine } from '../../lib/render/identity.ts';
import type { Rendered, RenderOptions } from '../../lib/render/types.ts';
import { destinationOf, makeCredential, renderTo } from '../render/fixtures.ts';
import {
  digest,
  eachVerdict,
  identityLabel,
  mixedDigest,
  single,
  VERDICT_SAMPLES,
  withVerdict,
} from './identity.ts';
import { CASES, expectInert, payloadsOf } from './identity-cases.ts';

describe.each(CASES)('$name', (c) => {
  it('shows one line per login with a verdict, of every verdict, escaped as upstream text', async () => {
    const alerts = eachVerdict();
    const rendered = await renderTo(c.target, alerts, single);
    const payloads = payloadsOf(rendered);
    const text = payloads.map((p) => c.text(p)).join('\n');
    for (const alert of alerts) {
      const line = identityLine(alert, single) as string;
      expect(line, 'the line names the provider as the config does').toMatch(/^(Entra ID corp|Okta shop): /);
      const shown = c.shown(line);
      expect(text, `${c.name} shows ${line}`).toContain(shown);
      // Once per login: the group's message holds each login's line, and no other's twice.
      expect(text.split(shown).length - 1).toBe(1);
    }
    await expectInert(c, payloads);
  });

  it("a digest's parent counts the verdicts, and each listed login has its line", async () => {
    const { alerts, counts } = mixedDigest();
    const rendered = await renderTo(c.target, alerts, digest);
    expect(rendered.flatMap((r) => r.deliveryIds).sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
    const [parent] = rendered;
    expect(c.text(parent?.payload), `${c.name}: the first message counts`).toContain(counts);
    const text = payloadsOf(rendered)
      .map((p) => c.text(p))
      .join('\n');
    for (const alert of alerts) {
      const line = identityLine(alert, digest);
      if (line) expect(text, `${c.name} lists ${line}`).toContain(c.shown(line));
    }
    await expectInert(c, payloadsOf(rendered));
  });

  it('a login without a verdict renders as before: no line, no count, whatever the options', async () => {
    const plain = () =>
      [makeCredential(), makeCredential(), makeCredential()].map((i) => withVerdict(undefined, i));
    for (const opts of [single, digest]) {
      const alerts = plain();
      const { identityLabel: _, ...without } = opts;
      const withLabel = await renderTo(c.target, alerts, opts);
      expect(withLabel, 'a label for providers changes nothing without a verdict').toEqual(
        await renderTo(c.target, alerts, without as RenderOptions),
      );
      const text = payloadsOf(withLabel)
        .map((p) => c.text(p))
        .join('\n');
      expect(text).not.toMatch(/↳|Identity|identity:|→/);
    }
  });
});

describe('identity in bodies that carry the item (webhook, Splunk, Sentinel)', () => {
  const alerts = () => [...eachVerdict(), withVerdict(undefined)];
  const expectCarried = (items: unknown[]) => {
    expect(items).toHaveLength(VERDICT_SAMPLES.length + 1);
    VERDICT_SAMPLES.forEach((v, i) => {
      expect((items[i] as { _identity?: unknown })._identity).toEqual(v);
    });
    expect(items.at(-1)).not.toHaveProperty('_identity');
  };

  it('a webhook body has `_identity` on each item as it is, in the bytes it sends', async () => {
    const destination = destinationOf({ type: 'webhook' }, 'siem');
    const body = await bodyOf(destination);
    const opts = { ...single, destination: 'siem' };
    const [rendered] = body.render(destination, alerts(), opts) as Rendered<{ items: unknown[] }>[];
    const request = body.request?.(destination, rendered?.payload, rendered?.deliveryIds ?? [], 0);
    expectCarried((JSON.parse(String(request?.body)) as { items: unknown[] }).items);
  });

  it('a Splunk event has `_identity` on its item, in the bytes it sends', async () => {
    const destination = destinationOf({ type: 'splunk' }, 'hec');
    const body = await bodyOf(destination);
    const [rendered] = body.render(destination, alerts(), { ...single, destination: 'hec' });
    const request = body.request?.(destination, rendered?.payload, rendered?.deliveryIds ?? [], 0);
    const events = String(request?.body)
      .split('\n')
      .map((line) => JSON.parse(line) as { event: { item: unknown } });
    expectCarried(events.map((e) => e.event.item));
  });

  it('a Sentinel record has `_identity` on its item, as JSON', async () => {
    const [rendered] = (await renderTo({ type: 'sentinel' }, alerts(), single)) as Rendered<{
      records: { Item: unknown }[];
    }>[];
    const records = JSON.parse(JSON.stringify(rendered?.payload.records)) as { Item: unknown }[];
    expectCarried(records.map((r) => r.Item));
  });
});

describe('PagerDuty', () => {
  it("a login's verdict is early in the summary, its line and `_identity` in the details", async () => {
    const [risk] = eachVerdict() as [DeliveryAlert];
    const [rendered] = (await renderTo({ type: 'pagerduty' }, [risk], single)) as Rendered<PagerDutyEvent>[];
    const payload = rendered?.payload.payload;
    expect(payload?.summary).toMatch(/^LEAKED CREDENTIAL \(at risk\) for user\d+@example\.com /);
    const details = payload?.custom_details as Record<string, unknown>;
    expect(details.identity).toBe(lineText(identityLine(risk, single) ?? ''));
    expect(details._identity).toEqual(VERDICT_SAMPLES[0]);
    const { identity: _, ...item } = details;
    expect(item, 'otherwise the item as it is').toEqual(risk.item);
  });

  it("a digest's summary and details count the verdicts", async () => {
    const { alerts, counts } = mixedDigest();
    const [rendered] = (await renderTo({ type: 'pagerduty' }, alerts, digest)) as Rendered<PagerDutyEvent>[];
    expect(rendered?.payload.payload?.summary).toBe(
      `LEAKED CREDENTIALS DIGEST 11 logins (${counts}): example.com (11)`,
    );
    const details = rendered?.payload.payload?.custom_details as { identity?: string } | undefined;
    expect(details?.identity).toBe(counts);
  });
});

describe('the words', () => {
  it('end with the verdict, `unknown` with its reason', () => {
    expect(eachVerdict().map((a) => identityLine(a, { identityLabel })?.split(' → ')[1])).toEqual([
      'at risk',
      'rotated',
      'disabled',
      'no account',
      'unknown (unmanaged)',
      'unknown (unavailable)',
    ]);
  });

  it('label each provider as the config does, and fall back to its name', () => {
    const [risk] = eachVerdict() as [DeliveryAlert];
    expect(identityLine(risk, { identityLabel })).toMatch(/^Entra ID corp: /);
    expect(identityLine(risk, {})).toMatch(/^corp: /);
    expect(identityLine(risk, { identityLabel })).toContain(
      'password changed 2026-03-01, before the leak (2026-11-20) → at risk',
    );
  });
});
