/**
 * The renderers, each loaded when a destination of its kind first needs it: a function loads the
 * code of the kinds its config has, when it delivers to them, and never the rest (the Lambda
 * bundles split each kind into a chunk of its own). Same answers as `renderFor` and `renderNotice`
 * (index.ts, notice.ts), which the CLI and the tests use directly.
 */
import type { RenderTarget } from './index.ts';
import type { NoticeTarget } from './notice.ts';
import type { AlertPayload, DeliveryAlert, Notice, NoticePayload, Rendered, RenderOptions } from './types.ts';

/** `renderFor`, with the renderer of `destination`'s kind loaded first. */
export async function renderLazily(
  destination: RenderTarget,
  alerts: DeliveryAlert[],
  opts: RenderOptions,
  { color }: { color: boolean },
): Promise<Rendered<AlertPayload>[]> {
  switch (destination.type) {
    case 'slack':
      return destination.app || destination.token
        ? (await import('./slack-thread.ts')).renderSlackThreads(alerts, opts)
        : (await import('./slack.ts')).renderSlack(alerts, { ...opts, slackWebhook: true });
    case 'email':
      return (await import('./email.ts')).renderEmail(alerts, opts);
    case 'webhook':
      return (await import('./webhook.ts')).renderWebhook(alerts, opts);
    case 'teams':
      return (await import('./teams.ts')).renderTeams(alerts, opts);
    case 'discord':
      return (await import('./discord.ts')).renderDiscord(alerts, opts);
    case 'pagerduty':
      return (await import('./pagerduty.ts')).renderPagerDuty(alerts, opts, {
        credentialSeverity: destination.credentialSeverity ?? 'error',
      });
    case 'jira':
      return (await import('./jira.ts')).renderJira(alerts, opts);
    case 'servicenow':
      return (await import('./servicenow.ts')).renderServiceNow(alerts, opts);
    case 'sentinel':
      return (await import('./sentinel.ts')).renderSentinel(alerts, opts);
    case 'splunk':
      return (await import('./splunk.ts')).renderSplunk(alerts, opts, {
        sourcetype: destination.sourcetype ?? 'exposure_alerts',
        ...(destination.index ? { index: destination.index } : {}),
      });
    case 'console':
      return (await import('./console.ts')).renderConsole(alerts, { ...opts, color });
  }
}

/** `renderNotice`, loaded when a notice is first sent (operators' notices and tests are rare). */
export async function noticeLazily(
  type: NoticeTarget,
  notice: Notice,
  opts: RenderOptions,
): Promise<NoticePayload> {
  return (await import('./notice.ts')).renderNotice(type, notice, opts);
}
