/** Slack rendering: hostile text, every Slack limit, grouping, digests and delivery coverage. */
import { describe, expect, it } from 'vitest';
import { fitSlackPayload, SLACK_LIMITS, slackLimitProblems } from '../../../lib/destinations/slack/limits.ts';
import { renderSlack } from '../../../lib/destinations/slack/render.ts';
import type { DeliveryAlert } from '../../../lib/model.ts';
import type { Rendered } from '../../../lib/render/types.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from '../../render/fixtures.ts';
import {
  expectNothingHostile,
  expectWithinSlackLimits,
  hostileCredential,
  hostileEvent,
} from '../../render/hostile.ts';

const APP = 'https://app.example.test';

function expectCoversEachOnce(rendered: Rendered<unknown>[], alerts: DeliveryAlert[]) {
  const ids = rendered.flatMap((r) => r.deliveryIds);
  expect(ids.slice().sort()).toEqual(alerts.map((a) => a.deliveryId).sort());
  expect(new Set(ids).size, 'no alert in two messages').toBe(ids.length);
}

describe('renderSlack: one event', () => {
  const item = makeEvent({
    metadata: { severity: 'medium', type: 'stealer_log', uid: 'stealer_log/telegram/a/b c' },
    tenant_metadata: { severity: { override: 'critical' }, tags: ['vip', 'finance'] },
    identifiers: [
      { id: 12, name: 'acme.test' },
      { id: 13, name: 'ceo@acme.test' },
    ],
    highlights: { content: ['found <mark>acme.test</mark> creds'], title: ['<mark>ceo@acme.test</mark>'] },
  });
  const [message] = renderSlack([toDelivery(eventAlert(item))], renderOptions());
  const payload = message!.payload;
  const all = JSON.stringify(payload);

  it('heads the message with the effective severity and the type', () => {
    const header = payload.blocks[0] as { type: string; text: { type: string; text: string } };
    expect(header.type).toBe('header');
    expect(header.text.text).toContain('CRITICAL');
    expect(header.text.text).toContain('stealer_log');
  });

  it('shows highlights with <mark> as bold', () => {
    expect(all).toContain('found *acme.test* creds');
    expect(all).toContain('*ceo@acme.test*');
    expect(all).not.toContain('<mark>');
  });

  it('shows identifiers, tags, both timestamps and the overridden severity', () => {
    for (const expected of [
      'acme.test, ceo@acme.test',
      'vip, finance',
      '2026-11-20 10:00 UTC',
      '2026-11-20 10:05 UTC',
    ]) {
      expect(all).toContain(expected);
    }
    expect(all).toContain('critical (upstream: medium)');
  });

  it('links to the item with the id part encoded as one component', () => {
    expect(all).toContain(`<${APP}/#/stealer_log/telegram/a%2Fb%20c|Open in the web app>`);
  });

  it('has a top-level text fallback naming severity, type and identifiers', () => {
    expect(payload.text).toMatch(
      /^CRITICAL stealer_log exposure for acme\.test, ceo@acme\.test: found acme\.test creds/,
    );
  });

  it('covers exactly its alert', () => {
    expect(message!.deliveryIds).toEqual([`soc~event~${item.metadata.uid}`]);
  });
});

describe('renderSlack: hostile text', () => {
  it('an event with pings, forged links, entities and a 10,000-character highlight stays safe and within limits', () => {
    const alerts = [toDelivery(eventAlert(hostileEvent(1)))];
    const [message, ...rest] = renderSlack(alerts, renderOptions());
    expect(rest).toHaveLength(0);
    const payload = message!.payload;
    expectWithinSlackLimits(payload);
    expectNothingHostile(payload);
    const texts = JSON.stringify(payload);
    expect(texts, 'already-escaped &amp; is shown literally').toContain('&amp;amp;');
    expect(texts, 'the pings are visible as text').toContain('&lt;!channel&gt;');
    expect(texts, 'the long highlight says it was truncated').toMatch(
      /… \(truncated, [\d,]+ more characters\)/,
    );
    expect(texts, 'bold cannot be broken by * or ` inside a highlight').toContain('∗bold∗ ˋcodeˋ');
    expect(texts, 'a javascript: flare_url is not used').not.toContain('javascript:');
  });

  it('a credential group with hostile names stays safe', () => {
    const alerts = [0, 1, 2].map((i) => toDelivery(credentialAlert(hostileCredential(i))));
    const messages = renderSlack(alerts, renderOptions());
    expect(messages).toHaveLength(1);
    expectWithinSlackLimits(messages[0]!.payload);
    expectNothingHostile(messages[0]!.payload);
    expectCoversEachOnce(messages, alerts);
  });

  it('a 200-item digest of hostile events and credentials stays within every limit', () => {
    const alerts = [
      ...Array.from({ length: 200 }, (_, i) => toDelivery(eventAlert(hostileEvent(i)))),
      ...Array.from({ length: 200 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i)))),
    ];
    const messages = renderSlack(alerts, renderOptions({ digest: { threshold: 5, maxItems: 45 } }));
    expect(messages, 'one digest per kind').toHaveLength(2);
    for (const m of messages) {
      expectWithinSlackLimits(m.payload);
      expectNothingHostile(m.payload);
      expect(JSON.stringify(m.payload)).toMatch(/… and [\d,]+ more items? not listed \(200 in all\)/);
    }
    expectCoversEachOnce(messages, alerts);
  });
});

describe('renderSlack: worst-case event', () => {
  it('many long identifiers, tags, notes and highlight fields: within limits, link kept, omissions counted', () => {
    const item = makeEvent({
      metadata: { uid: `leak/s3/${'k/'.repeat(150)}end` },
      tenant_metadata: {
        tags: Array.from({ length: 300 }, (_, i) => `tag-${i}-${'t'.repeat(30)}`),
        notes: 'n'.repeat(5_000),
      },
      identifiers: Array.from({ length: 300 }, (_, i) => ({
        id: i,
        name: `${'i'.repeat(40)}${i}.acme.test`,
      })),
      highlights: Object.fromEntries(
        Array.from({ length: 30 }, (_, i) => [`field${i}`, ['<mark>h</mark>'.repeat(400)]]),
      ),
    });
    const [message] = renderSlack([toDelivery(eventAlert(item))], renderOptions());
    const payload = message!.payload;
    expectWithinSlackLimits(payload);
    const all = JSON.stringify(payload);
    expect(all, 'the link survives').toContain('|Open in the web app>');
    expect(all).toMatch(/more highlights not shown/);
    expect(all).toMatch(/… and \d+ more/);
    expect(all).not.toMatch(/more blocks not shown/);
  });
});

describe('renderSlack: grouping and digests', () => {
  it('at the threshold, each event is its own message and credentials group by (domain, source)', () => {
    const alerts = [
      toDelivery(eventAlert(makeEvent())),
      toDelivery(credentialAlert(makeCredential({ domain: 'example.com', source_id: 'a' }))),
      toDelivery(credentialAlert(makeCredential({ domain: 'example.com', source_id: 'b' }))),
      toDelivery(credentialAlert(makeCredential({ domain: 'example.com', source_id: 'a' }))),
      toDelivery(eventAlert(makeEvent())),
    ];
    const messages = renderSlack(alerts, renderOptions({ digest: { threshold: 5, maxItems: 20 } }));
    expect(messages.map((m) => m.deliveryIds.length)).toEqual([1, 2, 1, 1]);
    expect(messages[1]!.deliveryIds).toEqual([alerts[1]!.deliveryId, alerts[3]!.deliveryId]);
    expectCoversEachOnce(messages, alerts);
  });

  it('a credential group shows the leak, its dates, the count and every login, never the password', () => {
    const creds = ['alice@example.com', 'bob@example.com'].map((identity_name) =>
      makeCredential({ identity_name, hash: 'Tr0ub4dor&3', hash_type: 'plaintext' }),
    );
    const [message] = renderSlack(
      creds.map((c) => toDelivery(credentialAlert(c))),
      renderOptions(),
    );
    const all = JSON.stringify(message!.payload);
    for (const expected of [
      'Collection #1',
      '2026-01-01 00:00 UTC',
      '2026-02-01 00:00 UTC',
      'alice@example.com',
      'bob@example.com',
    ]) {
      expect(all).toContain(expected);
    }
    expect(all).toMatch(/\*Logins\*\\n2/);
    expect(all).not.toContain('Tr0ub4dor');
    expect(all).not.toMatch(/T\*+3/);
  });

  it('one over the threshold becomes one digest per kind present', () => {
    const alerts = Array.from({ length: 6 }, () => toDelivery(eventAlert(makeEvent())));
    const messages = renderSlack(alerts, renderOptions({ digest: { threshold: 5, maxItems: 20 } }));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.deliveryIds).toHaveLength(6);
    expect(JSON.stringify(messages[0]!.payload)).not.toContain('not listed');
  });

  it('a digest lists at most maxItems, most severe first, and counts the rest', () => {
    const alerts = [
      ...Array.from({ length: 9 }, () =>
        toDelivery(eventAlert(makeEvent({ metadata: { severity: 'low' } }))),
      ),
      toDelivery(eventAlert(makeEvent({ metadata: { severity: 'critical', type: 'ransomleak' } }))),
    ];
    const [digest] = renderSlack(alerts, renderOptions({ digest: { threshold: 2, maxItems: 3 } }));
    const all = JSON.stringify(digest!.payload);
    expect(all.match(/:large_blue_circle: \*LOW\*/g), 'three lines: one critical and two low').toHaveLength(
      2,
    );
    expect(all).toContain(':red_circle: *CRITICAL* ransomleak');
    expect(all.indexOf('CRITICAL* ransomleak')).toBeLessThan(all.indexOf('*LOW*'));
    expect(all).toContain('… and 7 more items not listed (10 in all)');
    expect(all).toContain('1 critical, 9 low');
  });

  it('a large credential group below the threshold is split into parts that each list what they cover', () => {
    const alerts = Array.from({ length: 300 }, (_, i) =>
      toDelivery(credentialAlert(makeCredential({ identity_name: `${'long'.repeat(20)}.${i}@example.com` }))),
    );
    const messages = renderSlack(alerts, renderOptions({ digest: { threshold: 1_000, maxItems: 20 } }));
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) {
      expectWithinSlackLimits(m.payload);
      const all = JSON.stringify(m.payload);
      for (const id of m.deliveryIds) {
        const alert = alerts.find((a) => a.deliveryId === id)!;
        expect(all, 'each covered login is listed in its part').toContain(
          alert.kind === 'credential' ? alert.item.identity_name : '',
        );
      }
    }
    expectCoversEachOnce(messages, alerts);
  });
});

describe('fitSlackPayload', () => {
  it('clips oversized texts and extra blocks, saying so', () => {
    const huge = { type: 'section', text: { type: 'mrkdwn', text: `a &amp; ${'y'.repeat(5_000)}` } };
    const payload = fitSlackPayload({
      text: 'z'.repeat(50_000),
      blocks: [
        { type: 'header', block_id: 'b'.repeat(300), text: { type: 'plain_text', text: 'h'.repeat(200) } },
        ...Array.from({ length: 60 }, () => huge),
      ],
    });
    expect(slackLimitProblems(payload)).toEqual([]);
    expect(payload.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    expect(JSON.stringify(payload)).toMatch(/truncated, [\d,]+ more blocks not shown/);
    expect(JSON.stringify(payload)).toMatch(/truncated, [\d,]+ more characters/);
  });

  it('slackLimitProblems names each broken limit', () => {
    const problems = slackLimitProblems({
      text: '',
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'q'.repeat(3_001) } }],
    });
    expect(problems).toContain('top-level text is missing');
    expect(problems).toContain('blocks[0] section text has 3001 characters (limit 3000)');
  });
});
