/**
 * `destinations test [name]`: sends a clearly marked test message to each destination (or one),
 * through the same senders as real alerts, and says what each answered. A PagerDuty test is a
 * `trigger` followed by a `resolve` with the same dedup_key, so no incident stays open. A Slack app
 * posts its test message, edits it, and replies in its thread: the three things its alerts and
 * follow-ups do. It needs no upstream and no DynamoDB: only the config and its secrets.
 */

import type { SendOutcome } from '../../deliver/senders.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { Notice } from '../../render/types.ts';
import type { Command } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

export const destinationsTestCommand: Command = {
  path: ['destinations', 'test'],
  example: 'SECRETS_FILE=secrets.json exposure-alerts destinations test soc',
  usage: 'destinations test [name]',
  summary: 'send a clearly marked test message to each (or one) destination',
  beside: 'refuse',
  positionals: [0, 1],
  async run({ positionals, io, warn }) {
    const [
      { resolveDestinations },
      { httpPost },
      { DEFAULT_SEND_TIMEOUT_MS, send },
      { bodyOf, kindOf },
      { loadAlertsConfig },
      { loadSecrets },
    ] = await Promise.all([
      import('../../deliver/destinations.ts'),
      import('../../deliver/post.ts'),
      import('../../deliver/senders.ts'),
      import('../../destinations/kinds.ts'),
      import('../../rules/source.ts'),
      import('../../secrets.ts'),
    ]);
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
      const body = await bodyOf(destination);
      const face = kindOf(destination.type);
      const payload = body.notice(
        destination,
        { ...notice, text: notice.text.replace('{name}', name) },
        { destination: name, appUrl: env.appUrl, digest: config.digest, now },
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
            `${terminalSafe(`${name} (${destination.type}): ${what}ok${outcome.status ? ` (HTTP ${outcome.status})` : ''}${outcome.ticket ? `, ${face.tickets?.noun ?? 'ticket'} ${outcome.ticket}` : ''}`)}\n`,
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
      // A kind whose follow-ups edit its messages (a Slack app) tries that too: the post is one step.
      report(outcome, face.followUps?.(destination) === 'message' ? 'post ' : '');
      if (outcome.ok)
        for (const [what, step] of (await body.afterTest?.(destination, payload, outcome, ctx)) ?? [])
          report(step, what);
    }
    return failures ? 1 : 0;
  },
};
