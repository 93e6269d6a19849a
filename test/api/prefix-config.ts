/**
 * A config whose `actions.slack.responseUrlPrefix` is the one given, written to a folder of its
 * own, for the `config validate` tests of slack-answer.test.ts (in process) and
 * slack-answer-cli.int.test.ts (as a process).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TEAM = 'T0TEAM01';
/** What `config validate` says of a prefix that could match another host. */
export const PREFIX_RULE = 'actions.slack.responseUrlPrefix: expected an https:// origin followed by /';

/** The path of a config file with `responseUrlPrefix` as its Slack answers' prefix. */
export async function prefixConfigFile(responseUrlPrefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ea-prefix-'));
  const path = join(dir, 'alerts.config.json');
  const config = {
    destinations: { local: { type: 'console' } },
    routes: [{ name: 'all', to: ['local'] }],
    actions: {
      slack: { signingSecret: { secret: 's' }, teamId: TEAM, allowedUsers: ['U0ANA001'], responseUrlPrefix },
    },
  };
  await writeFile(path, JSON.stringify(config));
  return path;
}
