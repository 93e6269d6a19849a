/**
 * The text-safety rules in everything a Slack app posts beyond the alert itself: a digest's parent
 * and every reply in its thread, and a follow-up's edit and reply. The hostile samples (pings,
 * forged links, entities, Markdown, a 10,000-character highlight), and a person's hostile text in
 * who acted and why, can ping, link or spoof nothing; every message stays within Slack's limits.
 */
import { describe, expect, it } from 'vitest';
import type { FollowUpAction } from '../../lib/model.ts';
import { slackFollowUp } from '../../lib/render/follow-up.ts';
import { renderSlackThreads } from '../../lib/render/slack-thread.ts';
import { credentialAlert, eventAlert, renderOptions, toDelivery } from './fixtures.ts';
import {
  expectNothingHostile,
  expectWithinSlackLimits,
  FORGED_LINK,
  HOSTILE,
  hostileCredential,
  hostileEvent,
  PING_CHANNEL,
} from './hostile.ts';

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
