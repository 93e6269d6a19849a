/**
 * Every kind shows a login's identity verdict (interface.md section 12, "Shown and routable"): one
 * short line per login, in a group's message and in a digest's entries (or its thread's replies),
 * escaped as each kind escapes upstream text, since the provider's display name is in it; a
 * digest's parent counts the verdicts; webhook bodies, Splunk events and Sentinel records carry
 * `_identity` on each item as it is; and a login without a verdict renders as it did.
 */
import { describe, expect, it } from 'vitest';
import { discordText } from '../../lib/destinations/discord/escape.ts';
import type { DiscordPayload } from '../../lib/destinations/discord/limits.ts';
import type { EmailContent } from '../../lib/destinations/email/render.ts';
import type { GoogleChatPayload } from '../../lib/destinations/googlechat/card.ts';
import { chatText } from '../../lib/destinations/googlechat/card.ts';
import type { JiraContent } from '../../lib/destinations/jira/render.ts';
import { bodyOf, type DestinationType } from '../../lib/destinations/kinds.ts';
import { code } from '../../lib/destinations/mattermost/markdown.ts';
import type { MattermostPayload } from '../../lib/destinations/mattermost/render.ts';
import type { PagerDutyEvent } from '../../lib/destinations/pagerduty/render.ts';
import type { IncidentContent } from '../../lib/destinations/servicenow/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import type { TeamsPayload } from '../../lib/destinations/teams/card.ts';
import type { DeliveryAlert } from '../../lib/model.ts';
import { ellipsis, htmlText, lineText, slackText, stripControl } from '../../lib/render/escape.ts';
import { identityLine } from '../../lib/render/identity.ts';
import type { Rendered, RenderOptions } from '../../lib/render/types.ts';
import { wouldBeLive } from '../helpers/mattermost.ts';
import { destinationOf, makeCredential, type RenderTarget, renderTo } from '../render/fixtures.ts';
import { expectNothingHostile, expectWithinSlackLimits, slackTexts } from '../render/hostile.ts';
import {
  digest,
  eachVerdict,
  identityLabel,
  mixedDigest,
  single,
  VERDICT_SAMPLES,
  withVerdict,
} from './identity.ts';

const APP = 'https://app.example.test';

/** How a kind shows text, and what makes upstream text inert in it. */
interface Case {
  name: string;
  target: RenderTarget;
  /** The verdict line as this kind writes it. */
  shown(line: string): string;
  /** The texts of a message a reader sees, one string. */
  text(payload: unknown): string;
  /** Upstream text cannot ping, link or format beyond what the kind allows; the kind's limits hold. */
  inert(payload: unknown): void;
}

/** Every RichTextBlock of a card as one line of text, depth first (a Container holds a login and its verdict). */
function teamsLines(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) teamsLines(v, out);
  else if (value && typeof value === 'object') {
    const v = value as { type?: string; inlines?: { text: string }[] };
    if (v.type === 'RichTextBlock') out.push((v.inlines ?? []).map((i) => i.text).join(''));
    else for (const child of Object.values(v)) teamsLines(child, out);
  }
  return out;
}

function chatTexts(payload: GoogleChatPayload): string[] {
  return payload.cardsV2[0].card.sections.flatMap((s) =>
    s.widgets.flatMap((w) =>
      'textParagraph' in w ? [w.textParagraph.text] : 'decoratedText' in w ? [w.decoratedText.text] : [],
    ),
  );
}

/** Every text node of an ADF document, paragraph by paragraph. */
function jiraParagraphs(issue: JiraContent) {
  return issue.description.content.flatMap((node) => (node.type === 'paragraph' ? [node.content] : []));
}

async function problemsOf(type: DestinationType, payload: unknown): Promise<string[]> {
  const body = await bodyOf({ type });
  return body.problems ? body.problems(payload as never) : [];
}

const CASES: Case[] = [
  {
    name: 'Slack (webhook)',
    target: { type: 'slack' },
    shown: (line) => slackText(line, 300, ellipsis),
    text: (p) =>
      slackTexts(p as SlackPayload)
        .map((t) => t.text)
        .join('\n'),
    inert(p) {
      expectNothingHostile(p as SlackPayload, APP);
      expectWithinSlackLimits(p as SlackPayload);
    },
  },
  {
    name: 'Slack (app, digests as threads)',
    target: { type: 'slack', token: 'xoxb-test' },
    shown: (line) => slackText(line, 300, ellipsis),
    text: (p) =>
      slackTexts(p as SlackPayload)
        .map((t) => t.text)
        .join('\n'),
    inert(p) {
      expectNothingHostile(p as SlackPayload, APP);
      expectWithinSlackLimits(p as SlackPayload);
    },
  },
  {
    name: 'Microsoft Teams',
    target: { type: 'teams' },
    // Runs show text literally: only controls are taken out.
    shown: (line) => stripControl(line),
    text: (p) => teamsLines((p as TeamsPayload).attachments[0].content.body).join('\n'),
    inert(p) {
      expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThan(28_000);
    },
  },
  {
    name: 'Discord',
    target: { type: 'discord' },
    shown: (line) => discordText(line, 300, ellipsis),
    text: (p) =>
      (p as DiscordPayload).embeds
        .flatMap((e) => [e.title, e.description ?? '', ...(e.fields ?? []).map((f) => f.value)])
        .join('\n'),
    inert(p) {
      const payload = p as DiscordPayload;
      expect(payload.allowed_mentions).toEqual({ parse: [] });
      // Every mention and link mark a display name holds is escaped (discordProblems checks the rest).
      for (const e of payload.embeds)
        expect(e.description ?? '').not.toMatch(/(^|[^\\])(@everyone|@here|<@|\]\()/);
    },
  },
  {
    name: 'Google Chat',
    target: { type: 'googlechat' },
    shown: (line) => chatText(line, 300, ellipsis),
    text: (p) => chatTexts(p as GoogleChatPayload).join('\n'),
    inert(p) {
      const all = chatTexts(p as GoogleChatPayload).join('\n');
      expect(all).not.toContain('<users/all>');
      expect(all).not.toContain('<script>');
      expect(all).not.toMatch(/https?:\/\/(evil|e\b)/);
    },
  },
  {
    name: 'Google Chat (threads)',
    target: { type: 'googlechat', threads: true },
    shown: (line) => chatText(line, 300, ellipsis),
    text: (p) => chatTexts(p as GoogleChatPayload).join('\n'),
    inert(p) {
      const all = chatTexts(p as GoogleChatPayload).join('\n');
      expect(all).not.toContain('<users/all>');
      expect(all).not.toMatch(/https?:\/\/(evil|e\b)/);
    },
  },
  {
    name: 'Mattermost',
    target: { type: 'mattermost' },
    shown: (line) => code(line, 300),
    text: (p) => (p as MattermostPayload).text,
    inert(p) {
      expect(wouldBeLive((p as MattermostPayload).text)).toEqual([]);
    },
  },
  {
    name: 'e-mail',
    target: { type: 'email' },
    shown: (line) => htmlText(line, 300, ellipsis),
    text: (p) => (p as EmailContent).html,
    inert(p) {
      const mail = p as EmailContent;
      expect(mail.html).not.toContain('<script>');
      expect(mail.html).not.toContain('<!channel>');
      expect(mail.html).not.toMatch(/href="https?:\/\/(evil|e")/);
      expect(mail.text).not.toMatch(/[\u0007\u001b\u202e]/);
      expect(mail.text).toContain(lineText(identityLine(eachVerdict()[0] as DeliveryAlert, single) ?? ''));
    },
  },
  {
    name: 'Jira',
    target: { type: 'jira' },
    shown: (line) => stripControl(line),
    text: (p) =>
      jiraParagraphs(p as JiraContent)
        .map((nodes) => nodes.map((n) => n.text).join(''))
        .join('\n'),
    inert(p) {
      for (const nodes of jiraParagraphs(p as JiraContent))
        for (const node of nodes) {
          for (const mark of node.marks ?? [])
            if (mark.type === 'link') expect(mark.attrs.href.startsWith(`${APP}/`)).toBe(true);
          // A display name's line break cannot start a node of its own, nor a forged field.
          expect(node.text).not.toMatch(/[\n\r\u001b\u202e]/);
        }
    },
  },
  {
    name: 'ServiceNow',
    target: { type: 'servicenow' },
    shown: (line) => stripControl(line),
    text: (p) => `${(p as IncidentContent).short_description}\n${(p as IncidentContent).description}`,
    inert(p) {
      const lines = (p as IncidentContent).description.split('\n');
      expect(lines.filter((l) => l.startsWith('Login: forged'))).toEqual([]);
      expect((p as IncidentContent).description).not.toMatch(/[\u001b\u202e\u0007]/);
    },
  },
  {
    name: 'PagerDuty',
    target: { type: 'pagerduty' },
    shown: (line) => lineText(line, 300, () => '…'),
    text: (p) => {
      const payload = (p as PagerDutyEvent).payload;
      const details = payload?.custom_details as { identity?: string; items?: { identity?: string }[] };
      return [payload?.summary, details.identity, ...(details.items ?? []).map((i) => i.identity)].join('\n');
    },
    inert(p) {
      expect((p as PagerDutyEvent).payload?.summary).not.toMatch(/[\n\u001b]/);
    },
  },
  {
    name: 'the terminal',
    target: { type: 'console' },
    shown: (line) => lineText(line, 300, ellipsis),
    text: (p) => p as string,
    inert(p) {
      expect(p as string).not.toMatch(/[\u0007\u001b\u202e]/);
    },
  },
];

/** Every payload a rendering sends: the messages, and the replies of their threads. */
const payloadsOf = (rendered: Rendered<unknown>[]) =>
  rendered.flatMap((r) => [r.payload, ...(r.thread ?? [])]);

async function expectInert(c: Case, payloads: unknown[]) {
  for (const payload of payloads) {
    c.inert(payload);
    expect(await problemsOf(c.target.type, payload), c.name).toEqual([]);
  }
}

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
