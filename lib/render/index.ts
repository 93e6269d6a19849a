/**
 * The renderers, and `renderFor`, which picks the one a destination needs. Everything here is
 * pure: alerts in, payloads out (see types.ts for the shapes the senders take).
 *
 * @example
 * const messages = renderFor(resolvedSoc, alerts, { destination: 'soc', appUrl, digest, now }, { color: false });
 */
import type { DestinationConfig } from '../rules/config.ts';
import { renderConsole } from './console.ts';
import { renderDiscord } from './discord.ts';
import { renderEmail } from './email.ts';
import { renderJira } from './jira.ts';
import { renderPagerDuty } from './pagerduty.ts';
import { renderSentinel } from './sentinel.ts';
import { renderServiceNow } from './servicenow.ts';
import { renderSlack } from './slack.ts';
import { renderSlackThreads } from './slack-thread.ts';
import { renderSplunk } from './splunk.ts';
import { renderTeams } from './teams.ts';
import type { AlertPayload, DeliveryAlert, PagerDutySeverity, Rendered, RenderOptions } from './types.ts';
import { renderWebhook } from './webhook.ts';

export { type ConsoleOptions, renderConsole } from './console.ts';
export { DISCORD_LIMITS, discordProblems, renderDiscord } from './discord.ts';
export { renderEmail } from './email.ts';
export {
  escapeHtml,
  escapeSlack,
  highlightToHtml,
  highlightToPlain,
  highlightToSlack,
  parseHighlight,
  stripControl,
} from './escape.ts';
export {
  actionWords,
  pagerDutyResolve,
  type SlackFollowUp,
  slackFollowUp,
  type WebhookActionBody,
  webhookAction,
} from './follow-up.ts';
export { alertLink, credentialLink, eventLink, uidLink } from './link.ts';
export { type NoticeTarget, renderNotice, TEST_MARK } from './notice.ts';
export {
  dedupKey,
  PAGERDUTY_LIMITS,
  PAGERDUTY_SEVERITY,
  pagerDutyProblems,
  renderPagerDuty,
  resolveOf,
} from './pagerduty.ts';
export { renderSlack } from './slack.ts';
export { fitSlackPayload, SLACK_LIMITS, slackLimitProblems } from './slack-limits.ts';
export { MAX_REPLIES, renderSlackThreads } from './slack-thread.ts';
export { renderTeams } from './teams.ts';
export { TEAMS_LABELS, TEAMS_MAX_BYTES } from './teams-card.ts';
export { fitTeamsPayload, teamsProblems } from './teams-limits.ts';
export type * from './types.ts';
export {
  renderWebhook,
  signWebhook,
  WEBHOOK_MAX_ITEMS,
  webhookIdempotencyKey,
  webhookTimestamp,
} from './webhook.ts';

/**
 * A destination as configured or resolved: its type, what PagerDuty's rendering needs of it, and
 * whether a Slack destination is an app (a bot token: digests become threads).
 */
export type RenderTarget =
  | { type: Exclude<DestinationConfig['type'], 'pagerduty' | 'slack' | 'splunk'> }
  | { type: 'splunk'; sourcetype?: string; index?: string }
  | { type: 'slack'; app?: unknown; token?: unknown }
  | { type: 'pagerduty'; credentialSeverity?: PagerDutySeverity };

/** The messages `destination` (as configured, or resolved) receives for `alerts`, by its type. */
export function renderFor(
  destination: RenderTarget,
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  { color }: { color: boolean },
): Rendered<AlertPayload>[] {
  switch (destination.type) {
    case 'slack':
      // The app form (resolved: `app`; as configured: `token`) threads its digests.
      return destination.app || destination.token
        ? renderSlackThreads(alerts, opts)
        : renderSlack(alerts, { ...opts, slackWebhook: true });
    case 'email':
      return renderEmail(alerts, opts);
    case 'webhook':
      return renderWebhook(alerts, opts);
    case 'teams':
      return renderTeams(alerts, opts);
    case 'discord':
      return renderDiscord(alerts, opts);
    case 'pagerduty':
      return renderPagerDuty(alerts, opts, { credentialSeverity: destination.credentialSeverity ?? 'error' });
    case 'jira':
      return renderJira(alerts, opts);
    case 'servicenow':
      return renderServiceNow(alerts, opts);
    case 'sentinel':
      return renderSentinel(alerts, opts);
    case 'splunk':
      return renderSplunk(alerts, opts, {
        sourcetype: destination.sourcetype ?? 'exposure_alerts',
        ...(destination.index ? { index: destination.index } : {}),
      });
    case 'console':
      return renderConsole(alerts, { ...opts, color });
  }
}
