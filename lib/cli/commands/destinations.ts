/**
 * `destinations test [name]`: sends a clearly marked test message to each destination (or one),
 * through the same senders as real alerts, and says what each answered. It needs no upstream and
 * no DynamoDB: only the config and its secrets.
 */

import { resolveDestinations } from '../../deliver/destinations.ts';
import { httpPost } from '../../deliver/post.ts';
import { DEFAULT_SEND_TIMEOUT_MS, send } from '../../deliver/senders.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import { renderNotice } from '../../render/index.ts';
import type { Notice } from '../../render/types.ts';
import { loadAlertsConfig } from '../../runtime.ts';
import { loadSecrets } from '../../secrets.ts';
import type { Command } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

export const destinationsTestCommand: Command = {
  path: ['destinations', 'test'],
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
      const outcome = await send(destination, payload, [], {
        post: httpPost,
        now: () => Date.now(),
        timeoutMs: DEFAULT_SEND_TIMEOUT_MS,
        write: (text) => io.stdout(text.endsWith('\n') ? text : `${text}\n`),
      });
      if (outcome.ok)
        io.stdout(`${name} (${destination.type}): ok${outcome.status ? ` (HTTP ${outcome.status})` : ''}\n`);
      else {
        failures += 1;
        // The error can quote the destination's reply, which is not ours.
        io.stdout(
          `${terminalSafe(`${name} (${destination.type}): FAILED, ${outcome.error} (${outcome.permanent ? 'refused: fix the destination' : 'transient: try again'})`)}\n`,
        );
      }
    }
    return failures ? 1 : 0;
  },
};
