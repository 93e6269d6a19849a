/**
 * How each kind that shows logins writes text, and what keeps upstream text inert in it: the table
 * the identity tests (identity-lines, identity-limits) walk, one row a kind (a Slack app and Google
 * Chat with threads apart, since their digests are threads).
 */
import { expect } from 'vitest';
import { discordText } from '../../lib/destinations/discord/escape.ts';
import type { DiscordPayload } from '../../lib/destinations/discord/limits.ts';
import type { EmailContent } from '../../lib/destinations/email/render.ts';
import { chatText, type GoogleChatPayload } from '../../lib/destinations/googlechat/card.ts';
import type { JiraContent } from '../../lib/destinations/jira/render.ts';
import { bodyOf, type DestinationType } from '../../lib/destinations/kinds.ts';
import { code } from '../../lib/destinations/mattermost/markdown.ts';
import type { MattermostPayload } from '../../lib/destinations/mattermost/render.ts';
import type { PagerDutyEvent } from '../../lib/destinations/pagerduty/render.ts';
import type { IncidentContent } from '../../lib/destinations/servicenow/render.ts';
import type { SlackPayload } from '../../lib/destinations/slack/limits.ts';
import type { TeamsPayload } from '../../lib/destinations/teams/card.ts';
import { ellipsis, htmlText, lineText, slackText, stripControl } from '../../lib/render/escape.ts';
import type { Rendered } from '../../lib/render/types.ts';
import { wouldBeLive } from '../helpers/mattermost.ts';
import type { RenderTarget } from '../render/fixtures.ts';
import { expectNothingHostile, expectWithinSlackLimits, slackTexts } from '../render/hostile.ts';

const APP = 'https://app.example.test';

/** How a kind shows text, and what makes upstream text inert in it. */
export interface Case {
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

export const CASES: Case[] = [
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
export const payloadsOf = (rendered: Rendered<unknown>[]) =>
  rendered.flatMap((r) => [r.payload, ...(r.thread ?? [])]);

export async function expectInert(c: Case, payloads: unknown[]) {
  for (const payload of payloads) {
    c.inert(payload);
    expect(await problemsOf(c.target.type, payload), c.name).toEqual([]);
  }
}
