/**
 * What renderers produce and senders send. Renderers (lib/render) are pure: alerts in, payloads
 * out, no I/O. Senders (lib/deliver) turn a payload into an HTTP request (or a terminal write).
 */
import type { DeliveryAlert, TenantRef } from '../model.ts';

export interface RenderOptions {
  /** The destination's name in the config. */
  destination: string;
  /** Base of links into the upstream's web app (EXPOSURE_APP_URL). */
  appUrl: string;
  /** Over `threshold` alerts in one call, they go as one digest listing at most `maxItems`. */
  digest: { threshold: number; maxItems: number };
  now: Date;
  /**
   * Slack: an event's own message carries the action buttons (the config has `actions.slack`), with
   * the undo of what `flags` says is done.
   */
  buttons?: boolean;
  flags?: { ignored?: boolean; remediated?: boolean };
  /** Slack: posted by an incoming webhook (its buttons' answers replace it), else by the app. */
  slackWebhook?: boolean;
  /** The terminal: ANSI colours. */
  color?: boolean;
}

/** One message to send, and the delivery records it settles when it is accepted. */
export interface Rendered<P> {
  deliveryIds: string[];
  payload: P;
  /** A short human line for logs and `deliveries list`, free of secrets and passwords. */
  summary: string;
  /**
   * Replies in the thread of `payload` (a digest to a Slack app): together with it they show
   * every item of `deliveryIds` once. Sent after it, in order (deliver/thread.ts).
   */
  thread?: P[];
}

export interface SlackPayload {
  /** Always present: the notification and accessibility fallback. */
  text: string;
  blocks: Record<string, unknown>[];
}

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

/** Body of a generic webhook POST (interface.md section 4), exactly. */
export interface WebhookBody {
  version: 1;
  kind: 'events' | 'credentials';
  destination: string;
  /** The `tenants` entry whose items these are (interface.md section 10); none for the top level. */
  tenant?: TenantRef;
  routes: string[];
  items: unknown[];
  sentAt: string;
}

/** One element of an Adaptive Card body; destinations/teams/card.ts builds the only shapes we send. */
export type CardElement = Record<string, unknown> & { type: string };

/** Body of a Teams Workflows webhook POST (interface.md section 4): a message wrapping one card. */
export interface TeamsPayload {
  type: 'message';
  attachments: [
    {
      contentType: 'application/vnd.microsoft.card.adaptive';
      contentUrl: null;
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
        type: 'AdaptiveCard';
        version: '1.4';
        body: CardElement[];
        actions: CardElement[];
      };
    },
  ];
}

export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

/**
 * A PagerDuty Events API v2 event as rendered: everything but `routing_key`, a secret the sender
 * adds (so previews and logs never hold it). A `resolve` carries no `payload`.
 */
export interface PagerDutyEvent {
  event_action: 'trigger' | 'resolve';
  dedup_key: string;
  payload?: {
    summary: string;
    source: 'exposure-alerts';
    severity: PagerDutySeverity;
    timestamp: string;
    class: string;
    custom_details: unknown;
  };
  links?: { href: string; text: string }[];
  client: 'exposure-alerts';
}

/** A message that is not about alerts: an operator notice or a `destinations test` message. */
export interface Notice {
  title: string;
  text: string;
  /** `test` is marked as a test in every rendering. */
  kind: 'test' | 'ops';
}

/** Body a webhook receives for a Notice (not an alert batch): clearly not `events`/`credentials`. */
export interface WebhookNoticeBody {
  version: 1;
  kind: 'test' | 'notice';
  destination: string;
  routes: [];
  items: [];
  sentAt: string;
  title: string;
  message: string;
}

export type { DeliveryAlert };

/** Atlassian Document Format, as far as destinations/jira/render.ts writes it. */
export type Mark = { type: 'strong' } | { type: 'link'; attrs: { href: string } };
export type AdfText = { type: 'text'; text: string; marks?: Mark[] };
export type AdfNode = { type: 'paragraph'; content: AdfText[] } | { type: 'rule' };
export interface AdfDoc {
  version: 1;
  type: 'doc';
  content: AdfNode[];
}

/** What a Jira issue is made of (the sender adds the project and the issue type). */
export interface JiraContent {
  summary: string;
  description: AdfDoc;
  labels: string[];
}

/** An incident's fields (the sender adds the assignment group). */
export interface IncidentContent {
  short_description: string;
  description: string;
  correlation_id: string;
  correlation_display: 'exposure-alerts';
  urgency: '1' | '2' | '3';
  impact: '1' | '2' | '3';
  category: 'security';
}

/** One Splunk HEC event (destinations/splunk/render.ts); a request is several, written one after another. */
export interface HecEvent {
  time: number;
  source: 'exposure-alerts';
  sourcetype: string;
  index?: string;
  event: unknown;
}

/** One record for Microsoft Sentinel's Logs Ingestion API (destinations/sentinel/render.ts). */
export interface SentinelRecord {
  TimeGenerated: string;
  Key: string;
  /** `{id, name}` of the `tenants` entry the item was found for (named as interface.md section 10 names it). */
  tenant?: TenantRef;
  Kind: string;
  Severity: string;
  Routes: string[];
  Destination: string;
  Source: string;
  Item: unknown;
}

/** One Discord embed, as destinations/discord/render.ts builds it (within DISCORD_LIMITS). */
export interface DiscordEmbed {
  title: string;
  url?: string;
  description?: string;
  color?: number;
  fields?: { name: string; value: string; inline?: boolean }[];
  footer?: { text: string };
  timestamp?: string;
}

/** Body of a Discord webhook POST: embeds, and never a mention (`allowed_mentions`). */
export interface DiscordPayload {
  content?: string;
  embeds: DiscordEmbed[];
  allowed_mentions: { parse: string[] };
}
