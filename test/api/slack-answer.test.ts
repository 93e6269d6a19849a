/**
 * Where Slack's answers may go (`actions.slack.responseUrlPrefix`): `config validate` refuses a
 * prefix that could match another host (as a process too: slack-answer-cli.int.test.ts), and the runtime compares the parsed origin and path, so
 * that even a prefix without its final `/` (given straight to the API) lets no other origin
 * through: a real receiver on a port the prefix's port is a string prefix of (`:4356` against
 * `:43567`) is never POSTed to, through `app.request` and the Lambda handler alike.
 */
import { describe, expect, it } from 'vitest';
import { underPrefix } from '../../lib/actions/slack-answer.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { runCli } from '../../lib/cli/run.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { functionUrlEvent } from './function-url.ts';
import { buildApi } from './harness.ts';
import { PREFIX_RULE, prefixConfigFile, TEAM } from './prefix-config.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 10 });
const receivers = useReceivers();
const SECRET = 'slack-signing-secret-for-tests';

/** A click by a user not allowed: answered at once at its `response_url`, before Slack's 200. */
const strangerClick = (responseUrl: string) =>
  `payload=${encodeURIComponent(
    JSON.stringify({
      type: 'block_actions',
      user: { id: 'U0STRANGER' },
      team: { id: TEAM },
      actions: [{ action_id: 'exposure:ignore', value: 'paste/pastebin/1', action_ts: '1700000000.1' }],
      response_url: responseUrl,
    }),
  )}`;

/** A signed Slack POST as a Function URL event, as Lambda hands it on. */
const slackEvent = (path: string, body: string) =>
  functionUrlEvent('POST', path, { headers: slackSigned(body, SECRET), body });

describe('response_url: only under responseUrlPrefix, by origin and path', () => {
  const api = (responseUrlPrefix: string) =>
    buildApi(emu, {
      slack: { signingSecret: SECRET, teamId: TEAM, allowedUsers: ['U0ANA001'], responseUrlPrefix },
    });

  it('a prefix without its slash lets no other origin through, through app.request and Lambda', async () => {
    const other = await receivers();
    const port = new URL(other.url).port;
    // Another origin whose URL starts with the prefix's text: `http://127.0.0.1:4356` and `:43567`.
    const prefix = `http://127.0.0.1:${port.slice(0, -1)}`;
    const { app } = api(prefix);
    const body = strangerClick(`${other.url}/actions/1`);
    const res = await app.request('/slack/interactions', {
      method: 'POST',
      headers: slackSigned(body, SECRET),
      body,
    });
    expect(res.status).toBe(200);
    expect((await createLambdaHandler(app)(slackEvent('/slack/interactions', body))).statusCode).toBe(200);
    expect(other.requests).toHaveLength(0);
  });

  it('a response_url under the prefix gets the answer, through app.request and Lambda', async () => {
    const answers = await receivers();
    const { app } = api(`${answers.url}/`);
    const body = strangerClick(`${answers.url}/actions/2`);
    const res = await app.request('/slack/interactions', {
      method: 'POST',
      headers: slackSigned(body, SECRET),
      body,
    });
    expect(res.status).toBe(200);
    expect((await createLambdaHandler(app)(slackEvent('/slack/interactions', body))).statusCode).toBe(200);
    expect(answers.requests.map((r) => r.path)).toEqual(['/actions/2', '/actions/2']);
    expect((answers.requests[0]?.json() as { text?: string } | undefined)?.text).toMatch(/not allowed/);
  });

  const DEFAULT = 'https://hooks.slack.com/';
  const refused: [string, string][] = [
    ['another host that extends the name', 'https://hooks.slack.com.evil.example/actions/1'],
    ['user info', 'https://hooks.slack.com@evil.example/actions/1'],
    ['user info on the right host', 'https://user:pw@hooks.slack.com/actions/1'],
    ['a backslash', 'https://evil.example\\@hooks.slack.com/actions/1'],
    ['an encoded slash', 'https://hooks.slack.com%2f@evil.example/'],
    ['a tab in the host', 'https://hooks.slack.com\t.evil.example/'],
    ['another port', 'https://hooks.slack.com:8443/actions/1'],
    ['plain http', 'http://hooks.slack.com/actions/1'],
    ['not a URL', 'hooks.slack.com/actions/1'],
  ];
  for (const [what, url] of refused)
    it(`refuses ${what} under the default prefix`, () => expect(underPrefix(url, DEFAULT)).toBeUndefined());

  it('compares whole path segments and the origin even when the prefix lacks its slash', () => {
    expect(underPrefix('https://hooks.slack.com.evil.example/', 'https://hooks.slack.com')).toBeUndefined();
    expect(
      underPrefix('https://hooks.slack.com/actionsx/1', 'https://hooks.slack.com/actions'),
    ).toBeUndefined();
    expect(underPrefix('https://hooks.slack.com/actions/1', 'https://hooks.slack.com/actions')?.href).toBe(
      'https://hooks.slack.com/actions/1',
    );
    expect(underPrefix('https://HOOKS.slack.com/actions/T1/2/x', DEFAULT)?.href).toBe(
      'https://hooks.slack.com/actions/T1/2/x',
    );
    expect(underPrefix('https://hooks.slack.com/actions/1', 'not a prefix')).toBeUndefined();
  });
});

describe('config validate: responseUrlPrefix', () => {
  const file = prefixConfigFile;
  const RULE = PREFIX_RULE;

  const validate = async (prefix: string) => {
    const io = captureIo();
    const code = await runCli(['config', 'validate', await file(prefix)], io);
    return { code, err: io.err };
  };
  for (const prefix of [
    'https://hooks.slack.com/actions',
    'https://hooks.slack.com:443/',
    'https://user@hooks.slack.com/',
    'https://hooks.slack.com/?x=/',
    'http://hooks.slack.com/',
    'hooks.slack.com/',
  ])
    it(`refuses ${prefix}, naming actions.slack.responseUrlPrefix`, async () => {
      const r = await validate(prefix);
      expect(r.code).toBe(2);
      expect(r.err).toContain(RULE);
    });

  for (const prefix of ['https://hooks.slack.com/actions/', 'http://127.0.0.1:8080/'])
    it(`accepts ${prefix}`, async () => {
      const r = await validate(prefix);
      expect(r.err).not.toContain('responseUrlPrefix');
      expect(r.code).toBe(0);
    });
});
