/**
 * `destinations test` on a Slack app, through the CLI against the Slack Web API stand-in: it posts
 * the marked test message, edits it, and replies in its thread, and says how each step went.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/cli/run.ts';
import { TEST_MARK } from '../../../lib/render/notice.ts';
import { captureIo } from '../../helpers/io.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../../helpers/slack-api.ts';

let slack: SlackStandIn;
let env: Record<string, string>;
beforeAll(async () => {
  slack = await startSlackApi();
  const dir = await mkdtemp(join(tmpdir(), 'ea-slack-test-'));
  await writeFile(
    join(dir, 'alerts.config.json'),
    JSON.stringify({
      destinations: {
        socApp: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
      },
      routes: [{ name: 'all', to: ['socApp'] }],
    }),
  );
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ bot: slack.token }));
  env = { ALERTS_CONFIG: join(dir, 'alerts.config.json'), SECRETS_FILE: join(dir, 'secrets.json') };
});
afterAll(() => slack.close());

describe('destinations test, a Slack app', () => {
  it('posts, edits and replies in the thread, each step said', async () => {
    const io = captureIo(env);
    expect(await runCli(['destinations', 'test', 'socApp'], io)).toBe(0);
    expect(io.out).toBe(
      'socApp (slack): post ok (HTTP 200)\nsocApp (slack): edit ok (HTTP 200)\nsocApp (slack): thread reply ok (HTTP 200)\n',
    );
    const [message] = slack.top();
    expect(message?.text).toContain(TEST_MARK);
    expect(message?.text).toMatch(/\(edited\)$/);
    expect(message?.edits).toHaveLength(1);
    expect(slack.thread(message?.ts ?? '')).toHaveLength(1);
  });

  it('a revoked token: the post fails, said as Slack said it, exit 1', async () => {
    slack.reset();
    slack.script({ error: 'token_revoked' });
    const io = captureIo(env);
    expect(await runCli(['destinations', 'test', 'socApp'], io)).toBe(1);
    expect(io.out).toBe('socApp (slack): post FAILED, slack token_revoked (refused: fix the destination)\n');
  });
});
