/**
 * The renderers, for the tests and the CLI, and `renderFor`, which renders for a destination by
 * its kind. Everything here is pure: alerts in, payloads out (see types.ts for the shapes).
 * Functions import lazy.ts instead, which loads only the kinds they deliver to.
 *
 * @example
 * const messages = await renderFor(previewDestination('soc', config.destinations.soc), alerts, opts);
 */

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
export { noticeFor, renderFor } from './lazy.ts';
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
