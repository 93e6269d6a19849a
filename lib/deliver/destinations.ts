/**
 * Destinations with their secrets resolved: every `{ "secret": "NAME" }` in the config looked up
 * in the secret object once, at start, so a missing secret fails there, naming the destination
 * and the secret, and never mid-delivery. Every resolved URL and key is registered with the log
 * redactor (a Slack webhook URL is itself a credential).
 */
import { ConfigError } from '../errors.ts';
import { redactor } from '../log.ts';
import type { PagerDutySeverity } from '../render/types.ts';
import type { AlertsConfig, DestinationConfig, SecretRef } from '../rules/config.ts';
import type { SecretObject } from '../secrets.ts';

export const PROVIDER_URLS = {
  sendgrid: 'https://api.sendgrid.com/v3/mail/send',
  postmark: 'https://api.postmarkapp.com/email',
} as const;

export const PAGERDUTY_URL = 'https://events.pagerduty.com/v2/enqueue';
export const SLACK_API_URL = 'https://slack.com/api';

/** A Slack app's side of a destination: what every Web API call it makes needs. */
export interface SlackApp {
  /** The bot token (`xoxb-…`), a secret. */
  token: string;
  /** The channel as configured (an id or `#name`); answers give its id. */
  channel: string;
  /** The Web API's base, `https://slack.com/api` (tests point it at a stand-in). */
  apiUrl: string;
}

export type ResolvedDestination =
  | {
      name: string;
      type: 'slack';
      /** Where a message is POSTed: the incoming webhook, or the app's `chat.postMessage`. */
      url: string;
      /** The Slack app form: its bot token, the channel, and the Web API's base URL. */
      app?: SlackApp;
    }
  | {
      name: string;
      type: 'email';
      provider: 'generic' | 'sendgrid' | 'postmark';
      url: string;
      apiKey?: string;
      from: string;
      to: string[];
      messageStream?: string;
    }
  | {
      name: string;
      type: 'webhook';
      url: string;
      signingSecret?: string;
      headers: Record<string, string>;
      /** Hears of actions on what it was sent (deliver/follow-up.ts). */
      followUps?: boolean;
    }
  | {
      name: string;
      type: 'teams';
      url: string;
      /** Destinations of this config posting to the same URL: the pace is per URL (pass.ts). */
      sharing: number;
    }
  | {
      name: string;
      type: 'discord';
      /** Holds the webhook's token: a secret. */
      url: string;
      /** Destinations of this config posting to the same webhook: the pace is per webhook. */
      sharing: number;
    }
  | {
      name: string;
      type: 'pagerduty';
      url: string;
      routingKey: string;
      credentialSeverity: PagerDutySeverity;
      /** Destinations of this config using the same routing key: the pace is per key (pass.ts). */
      sharing: number;
    }
  | {
      name: string;
      type: 'jira';
      /** The site, `https://acme.atlassian.net`, without a trailing slash. */
      url: string;
      /** `Basic base64(email:apiToken)`: a secret. */
      authorization: string;
      project: string;
      issueType: string;
      labels: string[];
      doneTransition?: string;
    }
  | {
      name: string;
      type: 'servicenow';
      url: string;
      /** `Basic base64(username:password)`: a secret. */
      authorization: string;
      table: string;
      assignmentGroup?: string;
    }
  | {
      name: string;
      type: 'splunk';
      /** The base URL, without a trailing slash. */
      url: string;
      /** `Splunk <token>`: a secret. */
      authorization: string;
      index?: string;
      sourcetype: string;
    }
  | {
      name: string;
      type: 'sentinel';
      tenantId: string;
      clientId: string;
      /** A secret, as is the token it buys: neither is ever logged. */
      clientSecret: string;
      endpoint: string;
      ruleId: string;
      stream: string;
      loginUrl: string;
    }
  | {
      name: string;
      type: 'console';
      /** A dry run (`npm start -- --dry-run`): the kind this destination really is, printed, not sent. */
      standsFor?: DestinationConfig['type'];
    };

/** A value or its secret, looked up (a missing one added to `problems`), then redacted from logs. */
export function resolveValue(
  value: string | SecretRef,
  secrets: SecretObject,
  path: string,
  problems: string[],
): string {
  const found = typeof value === 'string' ? value : secrets[value.secret];
  if (typeof found !== 'string' || found === '') {
    problems.push(
      `${path}: secret "${(value as SecretRef).secret}" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
    );
    return '';
  }
  redactor.add(found);
  return found;
}

export function resolveDestination(
  name: string,
  config: DestinationConfig,
  secrets: SecretObject,
  problems: string[],
): ResolvedDestination {
  const path = `destinations.${name}`;
  const get = (value: string | SecretRef, key: string) =>
    resolveValue(value, secrets, `${path}.${key}`, problems);
  switch (config.type) {
    case 'slack': {
      if (config.url !== undefined) return { name, type: 'slack', url: get(config.url, 'url') };
      const apiUrl = (config.apiUrl ?? SLACK_API_URL).replace(/\/+$/, '');
      const app = { token: get(config.token ?? '', 'token'), channel: config.channel ?? '', apiUrl };
      return { name, type: 'slack', url: `${apiUrl}/chat.postMessage`, app };
    }
    case 'email': {
      const url =
        config.url !== undefined
          ? get(config.url, 'url')
          : config.provider === 'generic'
            ? ''
            : PROVIDER_URLS[config.provider];
      return {
        name,
        type: 'email',
        provider: config.provider,
        url,
        ...(config.apiKey !== undefined ? { apiKey: get(config.apiKey, 'apiKey') } : {}),
        from: config.from,
        to: config.to,
        ...(config.messageStream ? { messageStream: config.messageStream } : {}),
      };
    }
    case 'webhook':
      return {
        name,
        type: 'webhook',
        url: get(config.url, 'url'),
        ...(config.followUps ? { followUps: true } : {}),
        ...(config.signingSecret !== undefined
          ? { signingSecret: get(config.signingSecret, 'signingSecret') }
          : {}),
        headers: Object.fromEntries(
          Object.entries(config.headers ?? {}).map(([header, value]) => [
            header,
            get(value, `headers.${header}`),
          ]),
        ),
      };
    case 'teams':
      return { name, type: 'teams', url: get(config.url, 'url'), sharing: 1 };
    case 'discord':
      return { name, type: 'discord', url: get(config.url, 'url'), sharing: 1 };
    case 'pagerduty':
      return {
        name,
        type: 'pagerduty',
        url: config.url ?? PAGERDUTY_URL,
        routingKey: get(config.routingKey, 'routingKey'),
        credentialSeverity: config.credentialSeverity,
        sharing: 1,
      };
    case 'jira':
      return {
        name,
        type: 'jira',
        url: config.url.replace(/\/+$/, ''),
        authorization: `Basic ${Buffer.from(`${config.email}:${get(config.apiToken, 'apiToken')}`).toString('base64')}`,
        project: config.project,
        issueType: config.issueType,
        labels: config.labels ?? [],
        ...(config.doneTransition ? { doneTransition: config.doneTransition } : {}),
      };
    case 'servicenow':
      return {
        name,
        type: 'servicenow',
        url: config.url.replace(/\/+$/, ''),
        authorization: `Basic ${Buffer.from(`${config.username}:${get(config.password, 'password')}`).toString('base64')}`,
        table: config.table,
        ...(config.assignmentGroup ? { assignmentGroup: config.assignmentGroup } : {}),
      };
    case 'splunk':
      return {
        name,
        type: 'splunk',
        url: config.url.replace(/\/+$/, ''),
        authorization: `Splunk ${get(config.token, 'token')}`,
        ...(config.index ? { index: config.index } : {}),
        sourcetype: config.sourcetype,
      };
    case 'sentinel':
      return {
        name,
        type: 'sentinel',
        tenantId: config.tenantId,
        clientId: config.clientId,
        clientSecret: get(config.clientSecret, 'clientSecret'),
        endpoint: config.endpoint.replace(/\/+$/, ''),
        ruleId: config.ruleId,
        stream: config.stream,
        loginUrl: config.loginUrl.replace(/\/+$/, ''),
      };
    case 'console':
      return { name, type: 'console' };
  }
}

/**
 * Teams, Discord and PagerDuty limit the rate per URL and per routing key, not per destination: when
 * several destinations share one, each paces at that many times the interval, so together they
 * keep within it. Secrets are compared only once resolved, which is why this is done here.
 */
function countSharing(destinations: Map<string, ResolvedDestination>): void {
  const keyOf = (d: ResolvedDestination) =>
    d.type === 'teams' || d.type === 'discord'
      ? `${d.type} ${d.url}`
      : d.type === 'pagerduty'
        ? `pagerduty ${d.routingKey}`
        : undefined;
  const counts = new Map<string, number>();
  for (const d of destinations.values()) {
    const key = keyOf(d);
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const d of destinations.values()) {
    const key = keyOf(d);
    if (key && (d.type === 'teams' || d.type === 'discord' || d.type === 'pagerduty'))
      d.sharing = counts.get(key) ?? 1;
  }
}

/**
 * Every destination of the config as a console that says what it stands for: a dry run prints
 * each destination's alerts in the terminal, needs none of their secrets, and sends nothing.
 */
export function dryRunDestinations(config: AlertsConfig): Map<string, ResolvedDestination> {
  return new Map(
    Object.entries(config.destinations).map(([name, d]) => [
      name,
      { name, type: 'console', ...(d.type === 'console' ? {} : { standsFor: d.type }) },
    ]),
  );
}

/** Every destination of the config, resolved; a ConfigError lists each missing secret. */
export function resolveDestinations(
  config: AlertsConfig,
  secrets: SecretObject,
): Map<string, ResolvedDestination> {
  const problems: string[] = [];
  const out = new Map<string, ResolvedDestination>();
  for (const [name, destination] of Object.entries(config.destinations)) {
    out.set(name, resolveDestination(name, destination, secrets, problems));
  }
  countSharing(out);
  if (problems.length)
    throw new ConfigError(
      `${problems.length === 1 ? 'a destination secret is' : `${problems.length} destination secrets are`} missing`,
      [
        ...problems,
        'to send for real, put the secrets in a JSON file and set SECRETS_FILE=<that file> (SECRET_ID on AWS); to try this config locally with nothing sent, run npm start -- --dry-run',
      ],
    );
  return out;
}
