/**
 * Renders the built-in samples through every destination of a config, the way a delivery pass
 * would (one message per item, then a digest, then a test notice), and reports what would fail at
 * run time: a renderer that throws, a Slack message over a limit, a Teams card over 28,000 bytes
 * or with upstream text where Markdown renders, a PagerDuty event PagerDuty would refuse, a mail
 * with an empty or multi-line subject, a password that survives the policy. `config validate` prints these as errors,
 * so template problems show up before deploying, not after alerts were dropped.
 */
import type { DeliveryAlert } from '../model.ts';
import type { AlertsConfig, DestinationConfig } from '../rules/config.ts';
import { applyPasswordPolicy } from '../rules/passwords.ts';
import { discordProblems } from './discord.ts';
import { slackFollowUp } from './follow-up.ts';
import { renderFor } from './index.ts';
import { JIRA_SUMMARY_MAX, type JiraContent } from './jira.ts';
import { renderNotice } from './notice.ts';
import { pagerDutyProblems } from './pagerduty.ts';
import { SAMPLE_PASSWORD, sampleCredential, sampleEvent, sampleHostileEvent } from './samples.ts';
import { slackLimitProblems } from './slack-limits.ts';
import { teamsProblems } from './teams-limits.ts';
import type {
  AlertPayload,
  DiscordPayload,
  EmailContent,
  IncidentContent,
  NoticePayload,
  PagerDutyEvent,
  RenderOptions,
  SlackPayload,
  TeamsPayload,
} from './types.ts';

/**
 * Most items a sample digest lists. Past a few hundred a digest only gets longer, not different:
 * Slack lists what fits its limits whatever the count, e-mail and the console one line an item.
 * Rendering maxItems + 5 hostile samples for maxItems 100,000 took minutes; this keeps `config
 * validate` under about a second for any maxItems.
 */
export const SAMPLE_DIGEST_MAX = 500;

function payloadProblems(type: DestinationConfig['type'], payload: AlertPayload | NoticePayload): string[] {
  switch (type) {
    case 'slack':
      return slackLimitProblems(payload as SlackPayload);
    case 'email': {
      const mail = payload as EmailContent;
      const problems: string[] = [];
      if (!mail.subject.trim()) problems.push('empty subject');
      if (/[\r\n]/.test(mail.subject)) problems.push('subject spans lines');
      if (!mail.text.trim() || !mail.html.trim()) problems.push('empty text or HTML part');
      return problems;
    }
    case 'webhook': {
      const body = JSON.parse(JSON.stringify(payload)) as { version?: unknown; kind?: unknown };
      return body.version === 1 && typeof body.kind === 'string' ? [] : ['body lacks version or kind'];
    }
    case 'teams':
      return teamsProblems(payload as TeamsPayload);
    case 'discord':
      return discordProblems(payload as DiscordPayload);
    case 'pagerduty':
      return pagerDutyProblems(payload as PagerDutyEvent);
    case 'jira': {
      const issue = payload as JiraContent;
      const problems: string[] = [];
      if (!issue.summary || issue.summary.length > JIRA_SUMMARY_MAX || /[\r\n]/.test(issue.summary))
        problems.push('summary must be one line of 1 to 255 characters');
      if (issue.labels.some((l) => /\s/.test(l))) problems.push('a label has a space');
      const texts = JSON.stringify(issue.description);
      if (/"text":""/.test(texts)) problems.push('an empty text node');
      return problems;
    }
    case 'servicenow': {
      const incident = payload as IncidentContent;
      return !incident.short_description ||
        incident.short_description.length > 160 ||
        /[\r\n]/.test(incident.short_description)
        ? ['short_description must be one line of 1 to 160 characters']
        : [];
    }
    case 'splunk': {
      const { events } = payload as { events: { time: unknown; event: unknown }[] };
      return events.every((e) => typeof e.time === 'number' && e.event && typeof e.event === 'object')
        ? []
        : ['an event without its time or its fields'];
    }
    case 'sentinel': {
      const { records } = payload as { records: { TimeGenerated?: unknown }[] };
      return records.every((r) => typeof r.TimeGenerated === 'string')
        ? []
        : ['a record without TimeGenerated'];
    }
    case 'console':
      return typeof payload === 'string' && payload.trim() ? [] : ['empty console text'];
  }
}

/** Problems found rendering samples for each destination, each line starting `destinations.<name>:`. */
export function checkRendering(
  config: AlertsConfig,
  options: { appUrl: string; now: Date; render?: typeof renderFor },
): string[] {
  const { now, appUrl, render = renderFor } = options;
  const errors: string[] = [];
  const credential = applyPasswordPolicy(sampleCredential(now), config.passwords);
  for (const [name, destination] of Object.entries(config.destinations)) {
    const routes = config.routes.filter((r) => r.to.includes(name)).map((r) => r.name);
    const deliver = (
      alert: Omit<DeliveryAlert, 'deliveryId' | 'destination' | 'routes'>,
      n = 0,
    ): DeliveryAlert =>
      ({
        ...alert,
        deliveryId: `${name}~${alert.kind}~${alert.key}${n ? `#${n}` : ''}`,
        destination: name,
        routes: routes.length ? routes : ['(sample)'],
      }) as DeliveryAlert;
    const event = deliver({ kind: 'event', key: 'sample-event', source: 'tenant', item: sampleEvent(now) });
    const hostile = deliver({
      kind: 'event',
      key: 'sample-hostile',
      source: 'tenant',
      item: sampleHostileEvent(now),
    });
    const login = deliver({
      kind: 'credential',
      key: String(credential.id),
      source: 'credentials:example.com',
      item: credential,
    });
    const opts: RenderOptions = { destination: name, appUrl, digest: config.digest, now };
    // Past the threshold whatever it is set to, with more items than a digest lists.
    const sampleDigest = { threshold: 1, maxItems: Math.min(config.digest.maxItems, SAMPLE_DIGEST_MAX) };
    const many = Array.from({ length: sampleDigest.maxItems + 5 }, (_, i) => [
      deliver({ ...hostile, key: `sample-hostile-${i}` }, i + 1),
      deliver({ ...login, key: `sample-login-${i}` }, i + 1),
    ]).flat();
    const cases: [string, DeliveryAlert[], RenderOptions][] = [
      [
        'sample event',
        [event],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      [
        'hostile sample event',
        [hostile],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      [
        'sample credential',
        [login],
        { ...opts, digest: { ...config.digest, threshold: Number.MAX_SAFE_INTEGER } },
      ],
      ['sample digest', many, { ...opts, digest: sampleDigest }],
    ];
    const report = (what: string, problem: string) =>
      errors.push(`destinations.${name}: ${what} (${destination.type}): ${problem}`);
    for (const [what, alerts, caseOpts] of cases) {
      try {
        const rendered = render(destination, alerts, caseOpts, { color: false });
        const covered = rendered.flatMap((r) => r.deliveryIds).sort();
        const expected = alerts.map((a) => a.deliveryId).sort();
        if (covered.join('\n') !== expected.join('\n'))
          report(what, 'messages do not cover every item exactly once');
        for (const r of rendered) {
          // A digest to a Slack app: its thread's replies are checked as the parent is.
          for (const [part, payload] of [r.payload, ...(r.thread ?? [])].entries()) {
            const where = part ? `${what}, thread reply ${part}` : what;
            for (const problem of payloadProblems(destination.type, payload)) report(where, problem);
            if (config.passwords !== 'clear' && JSON.stringify(payload).includes(SAMPLE_PASSWORD)) {
              report(where, `the sample password survives the "${config.passwords}" policy`);
            }
          }
        }
      } catch (error) {
        report(what, `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (destination.type === 'slack' && destination.token) {
      // What a follow-up posts: the edited message and its thread reply, for the hostile sample.
      try {
        const action = {
          id: 'sample',
          type: 'ignore',
          by: 'cli:sample',
          at: now.toISOString(),
          reason: 'sample',
        };
        const { edit, reply } = slackFollowUp(hostile, action, opts);
        for (const [part, payload] of [['edit', edit] as const, ['reply', reply] as const])
          for (const problem of payloadProblems('slack', payload)) report(`follow-up ${part}`, problem);
      } catch (error) {
        report('follow-up', `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    try {
      const notice = renderNotice(
        destination.type,
        { kind: 'test', title: 'Sample', text: 'Sample notice' },
        opts,
      );
      for (const problem of payloadProblems(destination.type, notice)) report('test notice', problem);
    } catch (error) {
      report('test notice', `rendering failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return errors;
}
