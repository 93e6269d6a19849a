/**
 * The account menus on a Slack app's messages (docs/identity.md): beside each login with a
 * verdict, an overflow menu (`exposure:identity`) of the five account actions, each option's value
 * the action and the credential's item key, never the login. Only with `actions.slack` and only on
 * the app's messages; a credential group and a digest's thread replies of hostile logins and
 * display names stay within Slack's limits (blocks, section text, options, values, JSON size) and
 * can ping or link nothing; without verdicts or without `actions.slack` nothing changes.
 */
import { describe, expect, it } from 'vitest';
import { postMessage } from '../../../lib/destinations/slack/app.ts';
import { slackBody } from '../../../lib/destinations/slack/body.ts';
import {
  IDENTITY_ACTION_ID,
  MESSAGE_JSON_BUDGET,
  menuBlocks,
  menuParts,
  menuValue,
  parseMenuValue,
} from '../../../lib/destinations/slack/identity-menu.ts';
import type { SlackPayload } from '../../../lib/destinations/slack/limits.ts';
import { slackLimitProblems } from '../../../lib/destinations/slack/limits.ts';
import { renderSlack } from '../../../lib/destinations/slack/render.ts';
import { MAX_REPLIES, renderSlackThreads } from '../../../lib/destinations/slack/thread.ts';
import type { SlackDestination, SlackOptions } from '../../../lib/destinations/slack/types.ts';
import { ACCOUNT_ACTIONS, type IdentityVerdict } from '../../../lib/identity/words.ts';
import type { DeliveryAlert } from '../../../lib/model.ts';
import { verdictOf } from '../../../lib/render/identity.ts';
import type { Rendered, RenderOptions } from '../../../lib/render/types.ts';
import { SLACK_CHANNEL, startSlackApi } from '../../helpers/slack-api.ts';
import { credentialAlert, makeCredential, renderOptions, toDelivery } from '../../render/fixtures.ts';
import {
  expectNothingHostile,
  expectWithinSlackLimits,
  FORGED_LINK,
  HOSTILE,
  hostileCredential,
  PING_CHANNEL,
} from '../../render/hostile.ts';
import { HOSTILE_NAMES, identityLabel, VERDICT_SAMPLES, withVerdict } from '../identity.ts';

type Block = Record<string, unknown>;
interface Overflow {
  type: string;
  action_id: string;
  options: { text: { type: string; text: string }; value: string }[];
}

const app: SlackDestination = {
  name: 'soc',
  type: 'slack',
  url: 'https://slack.example.test/api/chat.postMessage',
  app: { token: 'xoxb-test', channel: 'C0123ABCD', apiUrl: 'https://slack.example.test/api' },
};
const webhook: SlackDestination = { name: 'soc', type: 'slack', url: 'https://hooks.slack.example/x' };

// As the runtime gives them with `actions.slack` configured: the Slack face's own options.
const group = (over: Partial<RenderOptions<SlackOptions>> = {}) =>
  renderOptions<SlackOptions>({
    digest: { threshold: 1_000, maxItems: 20 },
    identityLabel,
    kindOptions: { buttons: true },
    ...over,
  });
const digest = (over: Partial<RenderOptions<SlackOptions>> = {}) =>
  renderOptions<SlackOptions>({
    digest: { threshold: 1, maxItems: 20 },
    identityLabel,
    kindOptions: { buttons: true },
    ...over,
  });

/** A hostile login (pings, a forged link) with a verdict whose display name is hostile too. */
function hostileWithVerdict(i: number, verdict: IdentityVerdict = VERDICT_SAMPLES[0] as IdentityVerdict) {
  const item = hostileCredential(i);
  return toDelivery(
    credentialAlert({
      ...item,
      identity_name: `${PING_CHANNEL}${FORGED_LINK}u${i}@example.com`,
      _identity: { ...verdict, displayName: `${HOSTILE_NAMES[i % HOSTILE_NAMES.length]} ${HOSTILE}` },
    } as typeof item),
  );
}

const payloadsOf = (rendered: Rendered<SlackPayload>[]) =>
  rendered.flatMap((r) => [r.payload, ...(r.thread ?? [])]);
const menusOf = (payload: SlackPayload) =>
  payload.blocks
    .filter((b) => (b.accessory as Overflow | undefined)?.action_id === IDENTITY_ACTION_ID)
    .map((b) => ({ text: (b.text as { text: string }).text, menu: b.accessory as Overflow }));

/** Within every limit a message with menus has, measured here, not by the code under test. */
function expectMenusWithinLimits(payload: SlackPayload) {
  expectWithinSlackLimits(payload);
  expect(slackLimitProblems(payload)).toEqual([]);
  // What Slack refuses as msg_blocks_too_long (the stand-in refuses past 13,000).
  expect(JSON.stringify(payload.blocks).length).toBeLessThanOrEqual(MESSAGE_JSON_BUDGET);
  // fitSlackPayload's net never had to drop a block: every login shown is a login sent.
  expect(JSON.stringify(payload.blocks)).not.toContain('more blocks not shown');
  for (const { menu } of menusOf(payload)) {
    expect(menu.type).toBe('overflow');
    expect(menu.options.length).toBeGreaterThanOrEqual(2);
    expect(menu.options.length).toBeLessThanOrEqual(5);
    for (const o of menu.options) {
      expect(o.text.type).toBe('plain_text');
      expect(o.text.text.length).toBeLessThanOrEqual(75);
      expect(o.value.length).toBeLessThanOrEqual(150);
    }
  }
}

describe('account menus beside the logins with a verdict', () => {
  it('a group of one login of each verdict: a menu beside each but no_account, its value the item key', () => {
    const alerts = VERDICT_SAMPLES.map((v) => withVerdict(v));
    const [message, ...more] = slackBody.render(app, alerts, group());
    expect(more).toHaveLength(0);
    const payload = message?.payload as SlackPayload;
    expectMenusWithinLimits(payload);
    expectNothingHostile(payload);
    const menus = menusOf(payload);
    const withMenu = alerts.filter((a) => verdictOf(a)?.verdict !== 'no_account');
    expect(menus).toHaveLength(withMenu.length);
    menus.forEach(({ text, menu }, i) => {
      const alert = withMenu[i] as DeliveryAlert & { kind: 'credential' };
      // The login and its verdict line are the section's text, beside its own menu.
      expect(text).toContain(alert.item.identity_name);
      expect(text).toContain('↳');
      expect(menu.options.map((o) => o.text.text)).toEqual([
        'Revoke sessions',
        'Require a password change',
        'Confirm compromised',
        'Disable the account',
        'Enable the account',
      ]);
      expect(menu.options.map((o) => o.value)).toEqual(ACCOUNT_ACTIONS.map((a) => `${a}|${alert.key}`));
      for (const o of menu.options) expect(o.value).not.toContain(alert.item.identity_name);
    });
    // The no_account login is still listed, without a menu.
    const none = alerts.find((a) => verdictOf(a)?.verdict === 'no_account');
    expect(none?.kind).toBe('credential');
    if (none?.kind === 'credential')
      expect(JSON.stringify(payload.blocks)).toContain(none.item.identity_name);
  });

  it('hostile logins and display names: escaped in the text, never in a value, nothing pings or links', () => {
    const alerts = Array.from({ length: 6 }, (_, i) => hostileWithVerdict(i));
    for (const opts of [group(), digest()]) {
      const payloads = payloadsOf(slackBody.render(app, alerts, opts));
      const menus = payloads.flatMap(menusOf);
      expect(menus).toHaveLength(alerts.length);
      for (const payload of payloads) {
        expectMenusWithinLimits(payload);
        expectNothingHostile(payload);
      }
      for (const { text, menu } of menus) {
        expect(text).toContain('&lt;!channel&gt;');
        for (const o of menu.options) {
          expect(o.value).toMatch(/^[a-zA-Z]+\|\d+$/);
          expect(o.value).not.toMatch(/[<>@!&]|example\.com/);
        }
      }
    }
  });

  it('a group of 300 hostile logins with verdicts: parts within every limit, each login once with its menu', () => {
    const alerts = Array.from({ length: 300 }, (_, i) => hostileWithVerdict(i));
    const rendered = slackBody.render(app, alerts, group());
    expect(rendered.length).toBeGreaterThan(1);
    const seen: string[] = [];
    rendered.forEach((r, i) => {
      expectMenusWithinLimits(r.payload);
      expectNothingHostile(r.payload);
      expect(JSON.stringify(r.payload.blocks)).toContain(`part ${i + 1} of ${rendered.length}`);
      const keys = menusOf(r.payload).map(({ menu }) => parseMenuValue(menu.options[0]?.value)?.itemKey);
      // A part settles exactly the logins it shows.
      expect(r.deliveryIds).toEqual(keys.map((k) => `soc~credential~${k}`));
      seen.push(...(keys as string[]));
    });
    expect(seen).toEqual(alerts.map((a) => a.key));
    // Deterministic: rendered again, the same messages (a resumed pass sends the same parts).
    expect(slackBody.render(app, alerts, group())).toEqual(rendered);
  });

  it("a digest's thread: the parent has no logins and no menus; its replies carry one menu per login, within limits", () => {
    const alerts = [
      ...Array.from({ length: 200 }, (_, i) => hostileWithVerdict(i)),
      // Logins without a verdict are packed between them, without menus.
      ...Array.from({ length: 40 }, (_, i) =>
        toDelivery(
          credentialAlert({ ...hostileCredential(1_000 + i), identity_name: `plain${i}@example.com` }),
        ),
      ),
    ];
    const [thread, ...more] = slackBody.render(app, alerts, digest());
    expect(more).toHaveLength(0);
    expect(menusOf(thread?.payload as SlackPayload)).toHaveLength(0);
    const replies = thread?.thread ?? [];
    expect(replies.length).toBeGreaterThan(1);
    expect(replies.length).toBeLessThanOrEqual(MAX_REPLIES);
    for (const reply of replies) {
      expectMenusWithinLimits(reply);
      expectNothingHostile(reply);
    }
    const menus = replies.flatMap(menusOf);
    expect(menus.map(({ menu }) => parseMenuValue(menu.options[3]?.value))).toEqual(
      alerts.slice(0, 200).map((a) => ({ action: 'disable', itemKey: a.key })),
    );
    const text = JSON.stringify(replies);
    for (let i = 0; i < 40; i++) expect(text).toContain(`plain${i}@example.com`);
  });

  it('a digest too big for MAX_REPLIES: the last reply counts the rest, and every reply stays within limits', () => {
    const alerts = Array.from({ length: 1_200 }, (_, i) => hostileWithVerdict(i));
    const [thread] = slackBody.render(app, alerts, digest());
    const replies = thread?.thread ?? [];
    expect(replies).toHaveLength(MAX_REPLIES);
    for (const reply of replies) expectMenusWithinLimits(reply);
    const listed = replies.flatMap(menusOf).length;
    expect(JSON.stringify(replies.at(-1)?.blocks)).toContain(`${1_200 - listed} more items not listed`);
  });

  it('an item key too long for a value: that login is listed without a menu, the others keep theirs', () => {
    const long = makeCredential({ identity_name: 'long@example.com' });
    const alerts = [
      withVerdict(VERDICT_SAMPLES[0]),
      {
        ...toDelivery(credentialAlert({ ...long, _identity: VERDICT_SAMPLES[0] } as typeof long)),
        key: '9'.repeat(140),
      },
      withVerdict(VERDICT_SAMPLES[0]),
    ];
    const payload = slackBody.render(app, alerts, group())[0]?.payload as SlackPayload;
    expectMenusWithinLimits(payload);
    expect(menusOf(payload)).toHaveLength(2);
    expect(JSON.stringify(payload.blocks)).toContain('long@example.com');
    expect(JSON.stringify(payload.blocks)).not.toContain('9'.repeat(140));
  });
});

describe("Slack's stand-in takes every message with menus", () => {
  it('a large group and a full digest thread, posted with chat.postMessage: each accepted', async () => {
    const slack = await startSlackApi();
    try {
      const dest: SlackDestination = {
        ...app,
        app: { token: slack.token, channel: SLACK_CHANNEL, apiUrl: slack.url },
      };
      const alerts = Array.from({ length: 400 }, (_, i) => hostileWithVerdict(i));
      const payloads = [
        ...payloadsOf(slackBody.render(dest, alerts, group())),
        ...payloadsOf(slackBody.render(dest, alerts, digest())),
      ];
      expect(payloads.length).toBeGreaterThan(40);
      for (const payload of payloads) {
        const request = postMessage(dest.app as NonNullable<SlackDestination['app']>, payload);
        const res = await fetch(request.url, {
          method: 'POST',
          headers: request.headers,
          body: request.body,
        });
        expect(await res.json()).toMatchObject({ ok: true });
      }
      expect(
        slack
          .top()
          .flatMap((m) => m.blocks)
          .filter((b) => JSON.stringify(b).includes(IDENTITY_ACTION_ID)).length,
      ).toBeGreaterThanOrEqual(400);
    } finally {
      await slack.close();
    }
  });
});

describe('where there are no menus, nothing changes', () => {
  it('without actions.slack (no buttons option) a message with verdicts has no menu', () => {
    const alerts = VERDICT_SAMPLES.map((v) => withVerdict(v));
    for (const opts of [group({ kindOptions: {} }), digest({ kindOptions: {} })])
      for (const payload of payloadsOf(slackBody.render(app, alerts, opts)))
        expect(JSON.stringify(payload)).not.toContain('overflow');
  });

  it("an incoming webhook's message gets no menu: its clicks could not be followed up", () => {
    const alerts = VERDICT_SAMPLES.map((v) => withVerdict(v));
    for (const opts of [group(), digest()])
      for (const payload of payloadsOf(slackBody.render(webhook, alerts, opts)))
        expect(JSON.stringify(payload)).not.toContain(IDENTITY_ACTION_ID);
  });

  it('logins without verdicts render exactly as without actions.slack', () => {
    const alerts = Array.from({ length: 30 }, (_, i) => toDelivery(credentialAlert(hostileCredential(i))));
    for (const threshold of [1, 1_000]) {
      const opts = renderOptions({ digest: { threshold, maxItems: 20 } });
      expect(renderSlackThreads(alerts, { ...opts, buttons: true })).toEqual(
        renderSlackThreads(alerts, opts),
      );
      expect(renderSlack(alerts, { ...opts, buttons: true })).toEqual(renderSlack(alerts, opts));
    }
  });
});

describe('option values', () => {
  it('read back what they were written as; anything else is refused', () => {
    expect(parseMenuValue(menuValue('requirePasswordChange', '1001:42'))).toEqual({
      action: 'requirePasswordChange',
      itemKey: '1001:42',
    });
    for (const bad of [
      undefined,
      42,
      '',
      'revokeSessions',
      'revokeSessions|',
      '|42',
      'wipe|42',
      `disable|${'9'.repeat(150)}`,
    ])
      expect(parseMenuValue(bad)).toBeUndefined();
  });

  it('menuParts never lets a part outgrow its room, whatever mix of lines it is given', () => {
    const menu = { type: 'overflow', action_id: IDENTITY_ACTION_ID, options: [] } as Block;
    const entries = Array.from({ length: 500 }, (_, i) => ({
      line: `line ${i} ${'x'.repeat((i * 37) % 900)}`,
      ...(i % 3 === 0 ? { menu } : {}),
    }));
    const room = { blocks: 20, chars: 5_000, json: 6_000 };
    const parts = menuParts(entries, room);
    expect(parts.flat()).toEqual(entries);
    expect(parts.length).toBeGreaterThan(10);
    for (const part of parts) {
      // Measured on the blocks menuBlocks lays out, not on menuParts' own reckoning.
      const blocks = menuBlocks(part);
      expect(blocks.length).toBeLessThanOrEqual(room.blocks);
      expect(JSON.stringify(blocks).length).toBeLessThanOrEqual(room.json);
      expect(part.reduce((n, e) => n + e.line.length + 1, 0)).toBeLessThanOrEqual(room.chars);
    }
  });
});
