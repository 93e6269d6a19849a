/**
 * Digests of any size (docs/configuration.md, `digest`): with maxItems 1,000 and 1,000 alerts,
 * Slack sends one message within its limits that lists what fits and counts the rest; e-mail and
 * the console list all 1,000; the webhook carries every item. Events and credentials alike, with
 * ordinary and with hostile (long, escaped) text.
 */
import { describe, expect, it } from 'vitest';
import { renderConsole } from '../../lib/destinations/console/render.ts';
import { renderEmail } from '../../lib/destinations/email/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import {
  SLACK_LIMITS,
  slackBlockTextLength,
  slackLimitProblems,
} from '../../lib/destinations/slack/limits.ts';
import { renderSlack } from '../../lib/destinations/slack/render.ts';
import { renderWebhook } from '../../lib/destinations/webhook/render.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import {
  credentialAlert,
  eventAlert,
  makeCredential,
  makeEvent,
  renderOptions,
  toDelivery,
} from './fixtures.ts';
import { hostileCredential, hostileEvent } from './hostile.ts';

const N = 1_000;
const opts = renderOptions({ digest: { threshold: 5, maxItems: N } });

const severities = ['critical', 'high', 'medium', 'low', 'info'] as const;
const sets: [string, () => DeliveryAlert[]][] = [
  [
    'events',
    () =>
      Array.from({ length: N }, (_, i) =>
        toDelivery(
          eventAlert(
            makeEvent({
              metadata: { severity: severities[i % 5], type: 'forum_post', uid: `forum_post/f/t-${i}` },
              identifiers: [{ id: i, name: `host-${i}.acme.test` }],
            }),
          ),
        ),
      ),
  ],
  ['hostile events', () => Array.from({ length: N }, (_, i) => toDelivery(eventAlert(hostileEvent(i))))],
  [
    'credentials',
    () =>
      Array.from({ length: N }, (_, i) =>
        toDelivery(credentialAlert(makeCredential({ identity_name: `user${i}@example.com` }))),
      ),
  ],
  [
    'hostile credentials',
    () => Array.from({ length: N }, (_, i) => toDelivery(credentialAlert(hostileCredential(i)))),
  ],
];

/** Lines of a digest that list one item each (Slack). */
function slackItemLines(payload: SlackPayload): string[] {
  return payload.blocks
    .filter((b) => b.type === 'section' && b.text)
    .flatMap((b) => (b.text as { text: string }).text.split('\n'))
    .filter((line) => /^(:\w+: \*[A-Z]+\*|• )/.test(line));
}

describe.each(sets)('%s: 1,000 alerts, maxItems 1,000', (_what, make) => {
  const alerts = make();
  const ids = alerts.map((a) => a.deliveryId).sort();

  it('Slack: one message within every limit, listing what fits and counting the rest in it', () => {
    const messages = renderSlack(alerts, opts);
    expect(messages).toHaveLength(1);
    const [message] = messages;
    const payload = message!.payload;
    expect(slackLimitProblems(payload)).toEqual([]);
    expect(payload.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(slackBlockTextLength(payload.blocks)).toBeLessThan(12_000);
    expect(payload.text.length).toBeGreaterThan(0);
    expect(payload.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
    const all = JSON.stringify(payload);
    // The safety net clipping blocks would drop listed lines without counting them.
    expect(all).not.toMatch(/more blocks not shown/);
    const shown = slackItemLines(payload).length;
    expect(shown).toBeGreaterThan(10);
    const rest = /… and ([\d,]+) more items? not listed \(([\d,]+) in all\)/.exec(all);
    expect(rest, 'the rest is counted').not.toBeNull();
    expect(Number(rest![1]!.replaceAll(',', '')) + shown).toBe(N);
    expect(rest![2]).toMatch(/^1,?000$/);
    expect(message!.deliveryIds.slice().sort()).toEqual(ids);
  });

  it('e-mail: one message listing all 1,000, in the text and the HTML part', () => {
    const mails = renderEmail(alerts, opts);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!.payload;
    expect(mail.html.match(/<li>/g)).toHaveLength(N);
    expect(mail.text.split('\n').filter((l) => l.startsWith('- '))).toHaveLength(N);
    expect(mail.text).not.toMatch(/not listed/);
    expect(mails[0]!.deliveryIds.slice().sort()).toEqual(ids);
  });

  it('console: one block listing all 1,000', () => {
    const out = renderConsole(alerts, { ...opts, color: false });
    expect(out).toHaveLength(1);
    const lines = out[0]!.payload.split('\n');
    expect(lines.filter((l) => /^ {2}(\[[A-Z]+\] |\S)/.test(l) && !l.startsWith('  routes '))).toHaveLength(
      N,
    );
    expect(out[0]!.payload).not.toMatch(/not listed/);
  });

  it('webhook: every item, each once', () => {
    const bodies = renderWebhook(alerts, opts);
    expect(bodies.flatMap((b) => b.payload.items)).toHaveLength(N);
    expect(bodies.flatMap((b) => b.deliveryIds).sort()).toEqual(ids);
  });
});

describe('maxItems below the count', () => {
  it('e-mail and console list maxItems and count the rest', () => {
    const alerts = sets[0]![1]().slice(0, 300);
    const small = renderOptions({ digest: { threshold: 5, maxItems: 250 } });
    const [mail] = renderEmail(alerts, small);
    expect(mail!.payload.html.match(/<li>/g)).toHaveLength(250);
    expect(mail!.payload.text).toContain('… and 50 more items not listed (300 in all).');
    const [out] = renderConsole(alerts, { ...small, color: false });
    expect(out!.payload).toContain('… and 50 more items not listed (300 in all)');
  });
});
