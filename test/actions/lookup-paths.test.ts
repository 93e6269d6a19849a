/**
 * A lookup's argument is one segment of the upstream's path, never a way to another path:
 * `lookup domain ..` would have been `GET /leaksdb/identities/`. What is not a domain (`.`, `..`,
 * empty, a slash) is refused with a clear error at every door, before any upstream request: the
 * CLI as a process (exit 2; lookup-paths-cli.int.test.ts, which starts processes), the API through
 * `app.request` and the Lambda handler (400), and the Slack command (an ephemeral answer, nothing
 * handed on). The client itself encodes each value as one segment and refuses a dot segment, for
 * every path it builds from a value.
 */
import { describe, expect, it } from 'vitest';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { readEnvironment } from '../../lib/env.ts';
import { RequestLimitError } from '../../lib/upstream/errors.ts';
import { functionUrlEvent } from '../api/function-url.ts';
import { bearer, buildApi } from '../api/harness.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { slackSigned } from '../helpers/slack-api.ts';

const emu = useEmulator({ eventsPerTenant: 2, credentials: 50 });
const control = () => emu.running.emulator.control;
/** Every upstream request made under `/leaksdb/identities` (a lookup's endpoints and what is above them). */
const identityRequests = () => control().requests.filter((r) => r.path.startsWith('/leaksdb/identities'));

const NOT_DOMAINS = ['..', '.', '', 'acme.test/../x', 'a/b', 'acme.test\\..'];
const SECRET = 'slack-signing-secret-for-tests';
const TEAM = 'T0TEAM01';
const ANA = 'U0ANA001';

describe('lookup domain: only a domain name, at every door', () => {
  it('the API answers 400 naming what is wrong, through app.request and the Lambda handler', async () => {
    const { app, tokens } = buildApi(emu);
    const lambda = createLambdaHandler(app);
    control().clearLog();
    for (const domain of NOT_DOMAINS) {
      const query = `domain=${encodeURIComponent(domain)}`;
      const res = await app.request(`/lookup?${query}`, { headers: bearer(tokens.runbook) });
      expect(res.status, domain).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message, domain).toMatch(domain === '' ? /domain is empty/ : /is not a domain name/);
      const viaLambda = await lambda(
        functionUrlEvent('GET', '/lookup', { query, headers: { authorization: `Bearer ${tokens.runbook}` } }),
      );
      expect(viaLambda.statusCode, domain).toBe(400);
      expect(JSON.parse(viaLambda.body ?? '{}')).toEqual(body);
    }
    for (const keyword of ['..', '.', 'kim/lee*']) {
      const res = await app.request(`/lookup?keyword=${encodeURIComponent(keyword)}`, {
        headers: bearer(tokens.runbook),
      });
      expect(res.status, keyword).toBe(400);
    }
    expect(identityRequests()).toEqual([]);
  });

  it('the Slack command answers in words only the asker sees, and hands nothing on', async () => {
    const { app, handed } = buildApi(emu, {
      slack: {
        signingSecret: SECRET,
        teamId: TEAM,
        allowedUsers: [ANA],
        responseUrlPrefix: 'https://hooks.slack.com/',
      },
    });
    for (const what of ['..', '.', 'acme.test/../x']) {
      const body = new URLSearchParams({
        team_id: TEAM,
        user_id: ANA,
        command: '/exposure',
        text: `lookup ${what}`,
        response_url: 'https://hooks.slack.com/commands/1',
      }).toString();
      const res = await app.request('/slack/commands', {
        method: 'POST',
        headers: slackSigned(body, SECRET),
        body,
      });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { response_type: string; text: string };
      expect(answer.response_type).toBe('ephemeral');
      expect(answer.text, what).toMatch(/^Cannot look that up: .* is not a domain name/);
    }
    expect(handed).toEqual([]);
  });
});

describe('the upstream client: a value is one path segment', () => {
  it('refuses a dot segment before sending, for every lookup that puts a value in a path', async () => {
    const client = emu.client();
    control().clearLog();
    for (const value of ['.', '..']) {
      await expect(client.identitiesByDomain(value)).rejects.toBeInstanceOf(RequestLimitError);
      await expect(client.identitiesByKeyword(value)).rejects.toBeInstanceOf(RequestLimitError);
      await expect(client.identitiesByPassword(value)).rejects.toBeInstanceOf(RequestLimitError);
    }
    expect(control().requests).toEqual([]);
  });

  it('encodes anything else as one segment: a slash, a backslash, a query or a fragment stays inside', async () => {
    // A stand-in upstream that keeps the request line's path exactly as it arrived.
    const upstream = await startReceiver({ status: 200, body: '[]' });
    try {
      const client = emu.client('emu-acme-token', { baseUrl: upstream.url });
      await client.identitiesByKeyword('a/../b?x=1#y\\%2e%2e');
      await client.identitiesByDomain('acme.test');
      expect(upstream.requests.map((r) => r.path)).toEqual([
        '/leaksdb/identities/by_keyword/a%2F..%2Fb%3Fx%3D1%23y%5C%252e%252e',
        '/leaksdb/identities/by_domain/acme.test',
      ]);
    } finally {
      await upstream.close();
    }
  });

  it('EXPOSURE_API_CORE_SEGMENT may not be a dot segment either', () => {
    for (const core of ['.', '..'])
      expect(() => readEnvironment({ EXPOSURE_API_CORE_SEGMENT: core }), core).toThrow(/one path segment/);
    expect(readEnvironment({ EXPOSURE_API_CORE_SEGMENT: 'v.2' }).coreSegment).toBe('v.2');
  });
});
