/**
 * `config validate` as a process refuses an `actions.slack.responseUrlPrefix` that could match
 * another host (exit 2, naming the key) and accepts the default. The other prefixes, run in
 * process, and where Slack's answers may go are slack-answer.test.ts; this one starts CLI
 * processes, so it is in the integration project.
 */
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/cli-process.ts';
import { PREFIX_RULE, prefixConfigFile } from './prefix-config.ts';

describe('config validate: responseUrlPrefix', () => {
  it('refuses https://hooks.slack.com (no slash) and accepts the default, as a process', async () => {
    const bad = await runCliProcess([
      'config',
      'validate',
      await prefixConfigFile('https://hooks.slack.com'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(PREFIX_RULE);
    const good = await runCliProcess([
      'config',
      'validate',
      await prefixConfigFile('https://hooks.slack.com/'),
    ]);
    expect(good.err).not.toContain('responseUrlPrefix');
    expect(good.code).toBe(0);
  });
});
