/**
 * The text-safety rules in everything a Slack app posts beyond the alert itself: a digest's parent
 * and every reply in its thread, and a follow-up's edit and reply. The hostile samples (pings,
 * forged links, entities, Markdown, a 10,000-character highlight), and a person's hostile text in
 * who acted and why, can ping, link or spoof nothing; every message stays within Slack's limits.
 */
import { describe, expect, it } from 'vitest';
import { slackBody } from '../../../lib/destinations/slack/body.ts';
import { slackFollowUp } from '../../../lib/destinations/slack/follow-up.ts';
import { slackKind } from '../../../lib/destinations/slack/index.ts';
import type { SlackPayload } from '../../../lib/destinations/slack/limits.ts';
import { renderSlackThreads } from '../../../lib/destinations/slack/thread.ts';
import type { FollowUpAction } from '../../../lib/model.ts';
import { credentialAlert, eventAlert, renderOptions, toDelivery } from '../../render/fixtures.ts';
import {
  expectNothingHostile,
  expectWithinSlackLimits,
  FORGED_LINK,
  HOSTILE,
  hostileCredential,
  hostileEvent,
  PING_CHANNEL,
  slackTexts,
} from '../../render/hostile.ts';

const action = (over: Partial<FollowUpAction> = {}): FollowUpAction => ({
  id: 'a1',
  type: 'ignore',
  by: `slack:U1 ${PING_CHANNEL}`,
  at: '2026-11-25T12:00:00Z',
  reason: `${HOSTILE} *not* a _leak_ ${'r'.repeat(2_000)}`,
  ...over,
});

describe('a digest thread of hostile items', () => {
  it.each([
    ['events', () => Array.from({ length: 300 }, (_, i) => toDelivery(eventAlert(hostileEvent(i))))],
    [
      'leaked logins',
      () => Array.from({ length: 300 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i)))),
    ],
  ])('%s: the parent and every reply are safe and within limits', (_name, make) => {
    const alerts = make();
    const messages = renderSlackThreads(alerts, renderOptions({ digest: { threshold: 5, maxItems: 10 } }));
    expect(messages).toHaveLength(1);
    const [digest] = messages;
    const replies = digest?.thread ?? [];
    expect(replies.length).toBeGreaterThan(1);
    for (const payload of [digest?.payload, ...replies]) {
      if (!payload) throw new Error('no payload');
      expectWithinSlackLimits(payload);
      expectNothingHostile(payload);
    }
    // Shown, not obeyed: the pings appear as text.
    expect(JSON.stringify(replies)).toContain('&lt;!channel&gt;');
  });
});

describe('a follow-up of a hostile item, by a hostile hand', () => {
  it.each([
    ['an event', () => toDelivery(eventAlert(hostileEvent(1)))],
    ['a leaked login', () => toDelivery(credentialAlert(hostileCredential(1)))],
  ])('%s: the edit and the reply are safe and within limits', (_name, make) => {
    const { edit, reply } = slackFollowUp(make(), action(), renderOptions());
    for (const payload of [edit, reply]) {
      expectWithinSlackLimits(payload);
      expectNothingHostile(payload);
      expect(JSON.stringify(payload)).not.toContain(FORGED_LINK);
    }
    // The reason is shown as typed, in plain text (never Markdown or a mention), clipped and marked so.
    for (const payload of [edit, reply]) {
      const reason = JSON.stringify(payload.blocks)
        .match(/\{"type":"plain_text","text":"Reason: [^"]*"/g)
        ?.join('');
      expect(reason).toContain('*not* a _leak_');
      expect(reason).toContain('‹!channel›');
      expect(reason).toMatch(/more characters/);
    }
  });

  it('the edit is still the alert: its blocks, then the action on it', () => {
    const alert = toDelivery(eventAlert(hostileEvent(2)));
    const { edit } = slackFollowUp(alert, action({ type: 'remediate', reason: undefined }), renderOptions());
    const last = JSON.stringify(edit.blocks.at(-1));
    expect(last).toContain('Marked remediated by slack:U1');
    expect(last).toContain('2026-11-25 12:00 UTC');
    expect(edit.blocks.some((b) => b.type === 'header')).toBe(true);
    expect(edit.text).toMatch(/^Marked remediated by/);
  });
});

describe('the buttons on an event alert (actions.slack)', () => {
  const labels = new Set([
    'Ignore',
    'Remediated',
    'Unignore',
    'Not remediated',
    'Silence similar',
    'for 1 hour',
    'for 1 day',
    'for 7 days',
  ]);
  const actionsOf = (payload: { blocks: Record<string, unknown>[] }) =>
    payload.blocks.filter((b) => b.type === 'actions') as {
      block_id: string;
      elements: Record<string, unknown>[];
    }[];

  it('a hostile event: Ignore, Remediated and Silence similar, our labels only, the text still safe', () => {
    const alert = toDelivery(eventAlert(hostileEvent(3)));
    const [message] = renderSlackThreads([alert], { ...renderOptions(), buttons: true });
    const payload = message?.payload as SlackPayload;
    expectWithinSlackLimits(payload);
    expectNothingHostile(payload);
    const [actions] = actionsOf(payload);
    expect(actions?.block_id).toBe(`exposure:${alert.key}`);
    expect(actions?.elements.map((e) => e.action_id)).toEqual([
      'exposure:ignore',
      'exposure:remediate',
      'exposure:silence',
    ]);
    const shown = slackTexts({ text: '', blocks: [actions as never] }).filter(
      (t) => t.path !== 'payload.text',
    );
    expect(shown.length).toBeGreaterThan(3);
    for (const { text } of shown) expect(labels.has(text), text).toBe(true);
    const select = actions?.elements[2] as { options: { value: string }[] };
    expect(select.options.map((o) => o.value.split('|')[0])).toEqual(['PT1H', 'P1D', 'P7D']);
    expect(select.options.every((o) => o.value.length <= 150)).toBe(true);
  });

  it('after an action, its undo; no buttons without actions.slack, nor on a digest', () => {
    const alert = toDelivery(eventAlert(hostileEvent(4)));
    const [done] = renderSlackThreads([alert], {
      ...renderOptions(),
      buttons: true,
      flags: { ignored: true, remediated: true },
    });
    expect(
      actionsOf(done?.payload as SlackPayload)[0]
        ?.elements.map((e) => e.action_id)
        .slice(0, 2),
    ).toEqual(['exposure:unignore', 'exposure:unremediate']);
    const [plain] = renderSlackThreads([alert], renderOptions());
    expect(actionsOf(plain?.payload as SlackPayload)).toEqual([]);
    const many = Array.from({ length: 8 }, (_, i) => toDelivery(eventAlert(hostileEvent(i))));
    const [digest] = renderSlackThreads(many, {
      ...renderOptions({ digest: { threshold: 3, maxItems: 5 } }),
      buttons: true,
    });
    expect(actionsOf(digest?.payload as SlackPayload)).toEqual([]);
    for (const reply of digest?.thread ?? []) expect(actionsOf(reply)).toEqual([]);
  });

  it('an event whose silence would not fit Slack: no select (never a broader silence), the buttons stay', () => {
    const event = hostileEvent(5);
    event.identifiers = Array.from({ length: 40 }, (_, i) => ({ id: 1_000_000 + i, name: `id${i}` }));
    const [message] = renderSlackThreads([toDelivery(eventAlert(event))], {
      ...renderOptions(),
      buttons: true,
    });
    const [actions] = actionsOf(message?.payload as SlackPayload);
    expect(actions?.elements.map((e) => e.action_id)).toEqual(['exposure:ignore', 'exposure:remediate']);
  });
});

describe("Slack's own options (its face's renderOptions)", () => {
  const app = {
    name: 'soc',
    type: 'slack' as const,
    url: 'https://slack.example.test/api/chat.postMessage',
    app: { token: 'xoxb-test', channel: 'C0123ABCD', apiUrl: 'https://slack.example.test/api' },
  };
  const buttonsWith = (actions?: Record<string, unknown>) => {
    const [message] = slackBody.render(app, [toDelivery(eventAlert(hostileEvent(1)))], {
      ...renderOptions(),
      kindOptions: slackKind.renderOptions?.({ actions }),
    });
    return (message?.payload as SlackPayload | undefined)?.blocks.filter((b) => b.type === 'actions').length;
  };

  it('buttons on an event when the config has actions.slack, and none without', () => {
    expect(buttonsWith({ slack: { signingSecret: 's' } })).toBe(1);
    expect(buttonsWith({})).toBe(0);
    expect(buttonsWith(undefined)).toBe(0);
  });
});
