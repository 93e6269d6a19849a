/**
 * `config validate` as a process refuses an `actions.slack.responseUrlPrefix` that could match
 * another host (exit 2, naming the key) and accepts the default. The other prefixes, run in
 * process, and where Slack's answers may go are slack-answer.test.ts; this one starts CLI
 * processes, so it is in the integration project.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/cli-process.ts';

const TEAM = 'T0TEAM01';

describe('config validate: responseUrlPrefix', () => {
  const config = (responseUrlPrefix: string) => ({
    destinations: { local: { type: 'console' } },
    routes: [{ name: 'all', to: ['local'] }],
    actions: {
      slack: { signingSecret: { secret: 's' }, teamId: TEAM, allowedUsers: ['U0ANA001'], responseUrlPrefix },
    },
  });
  const file = async (prefix: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-prefix-'));
    const path = join(dir, 'alerts.config.json');
    await writeFile(path, JSON.stringify(config(prefix)));
    return path;
  };
  const RULE = 'actions.slack.responseUrlPrefix: expected an https:// origin followed by /';

  it('refuses https://hooks.slack.com (no slash) and accepts the default, as a process', async () => {
    const bad = await runCliProcess(['config', 'validate', await file('https://hooks.slack.com')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(RULE);
    const good = await runCliProcess(['config', 'validate', await file('https://hooks.slack.com/')]);
    expect(good.err).not.toContain('responseUrlPrefix');
    expect(good.code).toBe(0);
  });
});
