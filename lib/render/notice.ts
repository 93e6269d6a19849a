/**
 * Messages that are not about alerts: `destinations test` (kind `test`) and operator notices such
 * as "this destination refuses for good" (kind `ops`). A test is marked as one in every rendering,
 * first thing, so nobody opens an incident over it. Notice text may quote a receiver's error, so
 * it is escaped like upstream text.
 */
import { createHash } from 'node:crypto';
import { discordText } from '../destinations/discord/escape.ts';
import { discordMessage } from '../destinations/discord/render.ts';
import { JIRA_SUMMARY_MAX, type JiraContent, jiraComment } from '../destinations/jira/render.ts';
import { dedupKey } from '../destinations/pagerduty/render.ts';
import { fitSlackPayload } from '../destinations/slack/limits.ts';
import { rich, run, teamsMessage, upstreamText } from '../destinations/teams/card.ts';
import { fitTeamsPayload } from '../destinations/teams/limits.ts';
import { htmlText, lineText, slackLines, slackPlain, slackText, stripControl } from './escape.ts';
import { webhookTimestamp } from './format.ts';
import { exposureLabel } from './keys.ts';
import type {
  DiscordPayload,
  EmailContent,
  HecEvent,
  IncidentContent,
  Notice,
  NoticePayload,
  PagerDutyEvent,
  RenderOptions,
  SentinelRecord,
  SlackPayload,
  TeamsPayload,
  WebhookNoticeBody,
} from './types.ts';

export const TEST_MARK = '[TEST] exposure-alerts test message — no action needed';

export type NoticeTarget =
  | 'slack'
  | 'email'
  | 'webhook'
  | 'teams'
  | 'discord'
  | 'pagerduty'
  | 'jira'
  | 'servicenow'
  | 'splunk'
  | 'sentinel'
  | 'console';

/** The first line of every rendering: the test mark, or the notice's title. */
function headline(notice: Notice): string {
  return notice.kind === 'test' ? TEST_MARK : `exposure-alerts: ${notice.title}`;
}

function footer(opts: RenderOptions): string {
  return `destination ${opts.destination} · ${webhookTimestamp(opts.now)}`;
}

function slackNotice(notice: Notice, opts: RenderOptions): SlackPayload {
  const body =
    notice.kind === 'test'
      ? `*${slackText(notice.title, 200)}*\n${slackLines(notice.text, 2_500)}`
      : slackLines(notice.text, 2_800);
  return fitSlackPayload({
    text: slackText(`${headline(notice)}${notice.kind === 'test' ? ` · ${notice.title}` : ''}`, 500),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: slackPlain(headline(notice), 150), emoji: true } },
      { type: 'section', text: { type: 'mrkdwn', text: body || '_(no text)_' } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackText(footer(opts)) }] },
    ],
  });
}

function emailNotice(notice: Notice, opts: RenderOptions): EmailContent {
  const body = notice.text.split(/\r?\n/);
  const lines =
    notice.kind === 'test' ? [TEST_MARK, '', notice.title, '', ...body] : [notice.title, '', ...body];
  return {
    subject: lineText(notice.kind === 'test' ? TEST_MARK : `[exposure-alerts] ${notice.title}`, 200),
    text: `${lines.map((l) => lineText(l, 5_000)).join('\n')}\n\n-- \n${lineText(footer(opts))}\n`,
    html: [
      '<!doctype html>',
      '<html><head><meta charset="utf-8"></head>',
      '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;color:#111">',
      ...(notice.kind === 'test'
        ? [`<p style="padding:8px;background:#eef;border:1px solid #99c"><b>${htmlText(TEST_MARK)}</b></p>`]
        : []),
      `<h2 style="font-size:18px">${htmlText(notice.title, 300)}</h2>`,
      `<p>${htmlText(notice.text, 5_000)}</p>`,
      `<p style="color:#777;font-size:12px">${htmlText(footer(opts))}</p>`,
      '</body></html>',
    ].join('\n'),
  };
}

function webhookNotice(notice: Notice, opts: RenderOptions): WebhookNoticeBody {
  return {
    version: 1,
    kind: notice.kind === 'test' ? 'test' : 'notice',
    destination: opts.destination,
    routes: [],
    items: [],
    sentAt: webhookTimestamp(opts.now),
    title: notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : notice.title,
    message: notice.text,
  };
}

function teamsNotice(notice: Notice, opts: RenderOptions): TeamsPayload {
  const body = [
    rich([
      run(headline(notice), {
        weight: 'Bolder',
        size: 'Large',
        color: notice.kind === 'test' ? 'Accent' : 'Attention',
      }),
    ]),
    ...(notice.kind === 'test' ? [rich(upstreamText(notice.title, 600, { weight: 'Bolder' }))] : []),
    rich(upstreamText(notice.text, 8_000)),
    rich(upstreamText(footer(opts), 600, { isSubtle: true, size: 'Small' })),
  ];
  return fitTeamsPayload(teamsMessage(body, []));
}

/** A notice as one Discord embed: the headline as its title, the text escaped (it may quote an error). */
function discordNotice(notice: Notice, opts: RenderOptions): DiscordPayload {
  const lines =
    notice.kind === 'test' ? `**${discordText(notice.title, 200)}**\n${discordText(notice.text, 3_000)}` : '';
  return discordMessage({
    title: discordText(headline(notice), 250, () => '…'),
    description: lines || discordText(notice.text, 3_500, undefined, { lines: true }),
    color: notice.kind === 'test' ? 0x1565c0 : 0xb71c1c,
    footer: { text: lineText(footer(opts), 500) },
  });
}

/**
 * A test pages at `info` and `destinations test` resolves it at once (same key); an ops notice
 * pages at `error`, keyed by destination and title, so a repeat joins the open incident.
 */
function pagerDutyNotice(notice: Notice, opts: RenderOptions): PagerDutyEvent {
  const key =
    notice.kind === 'test'
      ? `exposure-alerts:test:${opts.destination}:${opts.now.toISOString()}`
      : `exposure-alerts:ops:${createHash('sha256').update(notice.title).digest('hex').slice(0, 16)}`;
  return {
    event_action: 'trigger',
    dedup_key: dedupKey(key),
    payload: {
      summary: lineText(
        `${headline(notice)}${notice.kind === 'test' ? ` · ${notice.title}` : ''}`,
        1_024,
        () => '…',
      ),
      source: 'exposure-alerts',
      severity: notice.kind === 'test' ? 'info' : 'error',
      timestamp: opts.now.toISOString(),
      class: notice.kind === 'test' ? 'exposure_alerts_test' : 'exposure_alerts_ops',
      custom_details: { title: notice.title, message: notice.text, destination: opts.destination },
    },
    links: [],
    client: 'exposure-alerts',
  };
}

function consoleNotice(notice: Notice, opts: RenderOptions): string {
  const lines = [
    headline(notice),
    ...(notice.kind === 'test' ? [notice.title] : []),
    notice.text,
    footer(opts),
  ];
  return `${lines.map((l, i) => `${i ? '  ' : ''}${lineText(l, 2_000)}`).join('\n')}\n`;
}

/**
 * The payload a destination of `type` receives for a notice.
 *
 * @example
 * renderNotice('slack', { kind: 'test', title: 'Destination check', text: 'Hello from soc' }, opts)
 */
export function renderNotice(type: 'slack', notice: Notice, opts: RenderOptions): SlackPayload;
export function renderNotice(type: 'email', notice: Notice, opts: RenderOptions): EmailContent;
export function renderNotice(type: 'webhook', notice: Notice, opts: RenderOptions): WebhookNoticeBody;
export function renderNotice(type: 'teams', notice: Notice, opts: RenderOptions): TeamsPayload;
export function renderNotice(type: 'discord', notice: Notice, opts: RenderOptions): DiscordPayload;
export function renderNotice(type: 'pagerduty', notice: Notice, opts: RenderOptions): PagerDutyEvent;
export function renderNotice(type: 'jira', notice: Notice, opts: RenderOptions): JiraContent;
export function renderNotice(type: 'servicenow', notice: Notice, opts: RenderOptions): IncidentContent;
export function renderNotice(type: 'splunk', notice: Notice, opts: RenderOptions): { events: HecEvent[] };
export function renderNotice(
  type: 'sentinel',
  notice: Notice,
  opts: RenderOptions,
): { records: SentinelRecord[] };
export function renderNotice(type: 'console', notice: Notice, opts: RenderOptions): string;
export function renderNotice(type: NoticeTarget, notice: Notice, opts: RenderOptions): NoticePayload;
export function renderNotice(type: NoticeTarget, notice: Notice, opts: RenderOptions): NoticePayload {
  switch (type) {
    case 'slack':
      return slackNotice(notice, opts);
    case 'email':
      return emailNotice(notice, opts);
    case 'webhook':
      return webhookNotice(notice, opts);
    case 'teams':
      return teamsNotice(notice, opts);
    case 'discord':
      return discordNotice(notice, opts);
    case 'pagerduty':
      return pagerDutyNotice(notice, opts);
    case 'jira':
      return jiraNotice(notice, opts);
    case 'servicenow':
      return incidentNotice(notice, opts);
    case 'sentinel':
      return {
        records: [
          {
            TimeGenerated: opts.now.toISOString(),
            Key: `${notice.kind}:${opts.now.toISOString()}`,
            Kind: notice.kind === 'test' ? 'test' : 'notice',
            Severity: 'info',
            Routes: [],
            Destination: opts.destination,
            Source: 'exposure-alerts',
            Item: { title: notice.title, text: notice.text },
          },
        ],
      };
    case 'splunk':
      return {
        events: [
          {
            time: opts.now.getTime() / 1000,
            source: 'exposure-alerts',
            sourcetype: 'exposure_alerts',
            event: {
              kind: notice.kind === 'test' ? 'test' : 'notice',
              title: notice.title,
              text: notice.text,
            },
          },
        ],
      };
    case 'console':
      return consoleNotice(notice, opts);
  }
}

/** A notice as a Jira issue: a test ticket (marked) or an operator notice, with its own label. */
function jiraNotice(notice: Notice, opts: RenderOptions): JiraContent {
  const title = notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : `exposure-alerts: ${notice.title}`;
  return {
    summary: lineText(title, JIRA_SUMMARY_MAX, () => '…'),
    description: jiraComment(notice.text.split('\n').filter(Boolean)),
    labels: [exposureLabel(`${opts.destination}:${notice.kind}:${opts.now.toISOString()}`)],
  };
}

/** A notice as a ServiceNow incident: a test one (marked, low urgency) or an operator notice. */
function incidentNotice(notice: Notice, opts: RenderOptions): IncidentContent {
  const title = notice.kind === 'test' ? `${TEST_MARK}: ${notice.title}` : `exposure-alerts: ${notice.title}`;
  return {
    short_description: lineText(title, 160, () => '…'),
    // A notice may quote a receiver's answer: its controls go, its lines stay.
    description: stripControl(notice.text, { lines: true }),
    correlation_id: exposureLabel(`${opts.destination}:${notice.kind}:${opts.now.toISOString()}`),
    correlation_display: 'exposure-alerts',
    urgency: '3',
    impact: '3',
    category: 'security',
  };
}
