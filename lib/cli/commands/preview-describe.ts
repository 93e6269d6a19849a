/**
 * How `preview` names a destination and what it holds, without a secret: what a message to it is
 * (the service, the URL without its query), secrets by their name in the secret object.
 */
import { PAGERDUTY_URL } from '../../deliver/destinations.ts';
import type { DestinationConfig, SecretRef } from '../../rules/config.ts';

export function secretText(value: string | SecretRef): string {
  return typeof value === 'string' ? value : `<secret ${value.secret}>`;
}

/**
 * A URL without its query (a token often hides there), and with `path` added as the sender adds
 * it (its base without trailing slashes, so `https://x.example` and `https://x.example/` both give
 * `https://x.example/rest/api/3/issue`); secrets by name only.
 */
function urlText(value: string | SecretRef, path = ''): string {
  if (typeof value !== 'string') return `${secretText(value)}${path}`;
  try {
    const url = new URL(value);
    const base = path ? url.pathname.replace(/\/+$/, '') : url.pathname;
    return `${url.origin}${base}${path}${url.search ? '?…' : ''}`;
  } catch {
    return '<invalid URL>';
  }
}

/** What sending to `destination` is, in one line. */
export function describeDestination(destination: DestinationConfig): string {
  switch (destination.type) {
    case 'slack':
      return destination.token
        ? `chat.postMessage to ${destination.channel} as the Slack app (its bot token is a credential, not shown); a digest is a thread, follow-ups edit the message and reply in its thread`
        : 'POST to the Slack incoming webhook (its URL is a credential, not shown)';
    case 'email':
      return `e-mail via ${destination.provider}${destination.url ? ` (${urlText(destination.url)})` : ''} from ${destination.from} to ${destination.to.join(', ')}`;
    case 'webhook':
      return `POST ${urlText(destination.url)}`;
    case 'teams':
      return 'POST to the Teams Workflows webhook (its URL is a credential, not shown)';
    case 'discord':
      return 'POST to the Discord webhook (its URL holds its token, not shown), one message every 2 s';
    case 'pagerduty':
      return `PagerDuty Events API v2: POST ${urlText(destination.url ?? PAGERDUTY_URL)}`;
    case 'sentinel':
      return `Microsoft Sentinel: POST ${urlText(destination.endpoint, `/dataCollectionRules/${destination.ruleId}/streams/${destination.stream}`)} with an Entra token for client ${destination.clientId} (its secret is a credential, not shown)`;
    case 'splunk':
      return `Splunk HEC: POST ${urlText(destination.url, '/services/collector/event')} (its token is a credential, not shown)`;
    case 'servicenow':
      return `ServiceNow: POST ${urlText(destination.url, `/api/now/table/${destination.table}`)} as ${destination.username} (its password is a credential, not shown)`;
    case 'jira':
      return `Jira: POST ${urlText(destination.url, '/rest/api/3/issue')} in project ${destination.project} as ${destination.issueType}, as ${destination.email} (its API token is a credential, not shown)`;
    case 'console':
      return 'printed on the terminal';
  }
}
