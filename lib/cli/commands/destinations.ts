/**
 * `destinations test [name]`: sends a clearly marked test message to each destination (or one),
 * through the same senders as real alerts, and says what each answered. A PagerDuty test is a
 * `trigger` followed by a `resolve` with the same dedup_key, so no incident stays open. A Slack app
 * posts its test message, edits it, and replies in its thread: the three things its alerts and
 * follow-ups do. It needs no upstream and no DynamoDB: only the config and its secrets.
 */

import { resolveDestinations } from '../../deliver/destinations.ts';
import { httpPost } from '../../deliver/post.ts';
import { DEFAULT_SEND_TIMEOUT_MS, type SendOutcome, send, sendRequest } from '../../deliver/senders.ts';
import { postMessage, updateMessage } from '../../deliver/slack-app.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import { renderNotice, resolveOf } from '../../render/index.ts';
import type { Notice, PagerDutyEvent, SlackPayload } from '../../render/types.ts';
import { loadAlertsConfig } from '../../rules/source.ts';
import { loadSecrets } from '../../secrets.ts';
import type { Command } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

export const destinationsTestCommand: Command = {
  path: ['destinations', 'test'],
  example: 'SECRETS_FILE=secrets.json exposure-alerts destinations test soc',
  usage: 'destinations test [name]',
  summary: 'send a clearly marked test message to each (or one) destination',
  positionals: [0, 1],
  async run({ positionals, io, warn }) {
    const env = readEnvironment(io.env);
    const { config, source } = await loadAlertsConfig(env, warn);
    const [only] = positionals;
    if (only !== undefined && !(only in config.destinations)) {
      throw new UsageError(
        `no destination named "${only}" in ${source} (it has: ${Object.keys(config.destinations).join(', ')})`,
      );
    }
    const destinations = resolveDestinations(config, await loadSecrets(env));
    const notice: Notice = {
      kind: 'test',
      title: 'exposure-alerts test message',
      text: `This is a test of the "{name}" destination, sent by exposure-alerts destinations test. No action is needed.`,
    };
    let failures = 0;
    for (const [name, destination] of destinations) {
      if (only !== undefined && name !== only) continue;
      const now = new Date();
      const payload = renderNotice(
        destination.type,
        { ...notice, text: notice.text.replace('{name}', name) },
        {
          destination: name,
          appUrl: env.appUrl,
          digest: config.digest,
          now,
        },
      );
      const ctx = {
        post: httpPost,
        now: () => Date.now(),
        timeoutMs: DEFAULT_SEND_TIMEOUT_MS,
        write: (text: string) => io.stdout(text.endsWith('\n') ? text : `${text}\n`),
      };
      const report = (outcome: SendOutcome, what = '') => {
        if (outcome.ok) {
          io.stdout(
            `${terminalSafe(`${name} (${destination.type}): ${what}ok${outcome.status ? ` (HTTP ${outcome.status})` : ''}${outcome.ticket ? `, ${destination.type === 'jira' ? 'issue' : 'incident'} ${outcome.ticket}` : ''}`)}\n`,
          );
          return;
        }
        failures += 1;
        // The error can quote the destination's reply, which is not ours.
        io.stdout(
          `${terminalSafe(`${name} (${destination.type}): ${what}FAILED, ${outcome.error} (${outcome.permanent ? 'refused: fix the destination' : 'transient: try again'})`)}\n`,
        );
      };
      const outcome = await send(destination, payload, [], ctx);
      report(outcome, destination.type === 'slack' && destination.app ? 'post ' : '');
      // A Slack app edits what it posted and replies in its thread: both are tried on the test message.
      if (outcome.ok && destination.type === 'slack' && destination.app) {
        const posted = outcome.posted;
        if (!posted) {
          failures += 1;
          io.stdout(`${name} (slack app): the answer named no channel and ts; nothing to edit\n`);
        } else {
          const slack = payload as SlackPayload;
          const edited = { ...slack, text: `${slack.text} (edited)` };
          report(
            await sendRequest(destination, updateMessage(destination.app, posted, edited), ctx),
            'edit ',
          );
          const reply = { text: 'exposure-alerts test: a reply in the thread', blocks: [] };
          report(
            await sendRequest(destination, postMessage(destination.app, reply, posted), ctx),
            'thread reply ',
          );
        }
      }
      // PagerDuty: the test trigger is resolved at once with the same dedup_key, so no incident stays open.
      if (outcome.ok && destination.type === 'pagerduty')
        report(await send(destination, resolveOf(payload as PagerDutyEvent), [], ctx), 'resolve ');
    }
    return failures ? 1 : 0;
  },
};
