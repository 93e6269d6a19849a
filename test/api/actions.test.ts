/**
 * `POST /events/actions` through the API app with its real dependencies (createApiDeps: the
 * upstream client with the API's budget, dynalite), beside a poller that alerted the events to a
 * Slack app and PagerDuty and published its catalog: the scope, the validation, one action per
 * Idempotency-Key, the follow-ups the next delivery pass sends, and an upstream that does not
 * answer changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../helpers/slack-api.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const control = () => emu.running.emulator.control;
const events = () => emu.running.emulator.dataset.tenant('acme').events;
const uidAt = (i: number) => (events()[i]?.item as unknown as EventItem | undefined)?.metadata.uid ?? '';

async function setUp() {
  const pd = await pagerduty();
  const world: World = await makeWorld(
    emu,
    db,
    {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: {
        app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
        pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
      },
      routes: [{ name: 'all', to: ['app', 'pager'] }],
      digest: { threshold: 50, maxItems: 20 },
    },
    { secrets: { bot: slack.token }, clock: skipClock() },
  );
  await world.cycle('events');
  const soar = newToken();
  const viewer = newToken();
  const env = readEnvironment({
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    TABLE_NAME: world.table,
    DYNAMODB_ENDPOINT: db.endpoint,
  });
  const secrets = {
    apiClients: {
      soar: { digest: sha256Hex(soar), scopes: ['events:act'] },
      viewer: { digest: sha256Hex(viewer), scopes: ['read'] },
    },
  };
  const deps = await createApiDeps(env, secrets, {
    logger: memoryLogger('info'),
    upstream: { maxAttempts: 1, timeoutMs: 1_000 },
  });
  const app = createApiApp(deps);
  const act = (token: string, body: unknown, key?: string) =>
    app.request('/events/actions', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        ...JSON_TYPE,
        ...(key ? { 'Idempotency-Key': key } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { world, pd, deps, act, soar, viewer };
}

describe('POST /events/actions', () => {
  it('acts once per Idempotency-Key, answers per uid, and the next pass follows up', async () => {
    control().clearFaults();
    slack.reset();
    const { world, pd, deps, act, soar, viewer } = await setUp();
    const uid = uidAt(0);
    // Outside the viewer's scopes: refused before the body is read.
    expect((await act(viewer, { action: 'ignore', uids: [uid] })).status).toBe(403);
    const calls = () => control().calls('eventActions').length;
    const before = calls();
    const first = await act(soar, { action: 'ignore', uids: [uid, 'no/such'], reason: 'fp' }, 'ticket-42');
    expect(first.status).toBe(200);
    const body = (await first.json()) as { results: { uid: string; ok: boolean; error?: string }[] };
    // The upstream refuses the request of both whole for the unknown one; each is then asked
    // alone, and answered with its own outcome.
    expect(body.results.map((r) => [r.uid, r.ok])).toEqual([
      [uid, true],
      ['no/such', false],
    ]);
    expect(body.results[1]?.error).toMatch(/^not_found: .*no\/such/);
    expect(events()[0]?.isIgnored).toBe(true);
    expect(calls() - before).toBe(3);
    // The same key again: the same answer, no second request upstream.
    const again = await act(soar, { action: 'ignore', uids: [uid, 'no/such'], reason: 'fp' }, 'ticket-42');
    expect(((await again.json()) as { results: unknown[] }).results).toEqual(body.results);
    // Another key: asked again (harmless), but the flag is set already: no second follow-up.
    const ok = await act(soar, { action: 'ignore', uids: [uid], reason: 'fp' }, 'ticket-43');
    expect(((await ok.json()) as { results: unknown[] }).results).toEqual([{ uid, ok: true }]);
    expect(calls() - before).toBe(4);
    const trail = await deps.act?.actions.auditTrail();
    expect(trail?.map((e) => [e.by, e.results?.map((r) => r.ok), e.changed])).toEqual([
      ['soar', [true], []],
      ['soar', [true, false], [uid]],
    ]);
    // The follow-ups wait for the pollers' next delivery pass.
    await world.deliver();
    expect(slack.calls.filter((c) => c.method === 'chat.update')).toHaveLength(1);
    expect(pd.alerts.find((a) => a.dedupKey === `event:${uid}`)?.open).toBe(false);
  });

  it('names what is wrong with a request, and sends nothing upstream', async () => {
    const { act, soar } = await setUp();
    const before = control().calls('eventActions').length;
    const cases: [unknown, RegExp, string?][] = [
      ['', /the body is empty/],
      ['{', /not valid JSON/],
      [{ action: 'delete', uids: ['a'] }, /action/],
      [{ action: 'ignore', uids: [] }, /uids/],
      [{ action: 'ignore', uids: Array.from({ length: 101 }, (_, i) => `u${i}`) }, /uids/],
      [{ action: 'ignore', uids: ['a'], extra: 1 }, /extra/],
      [{ action: 'ignore', uids: ['a'] }, /Idempotency-Key must be/, 'has space'],
    ];
    for (const [body, message, key] of cases) {
      const res = await act(soar, body, key);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
    expect(control().calls('eventActions')).toHaveLength(before);
  });

  it('an upstream that does not answer: 502, nothing changed, and the same key tries again', async () => {
    const { act, soar } = await setUp();
    const uid = uidAt(1);
    control().addFault({ endpoint: 'eventActions', status: 500 });
    const failed = await act(soar, { action: 'remediate', uids: [uid] }, 'k-9');
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { message: string } }).error.message).toMatch(
      /nothing was changed/,
    );
    expect(events()[1]?.isRemediated).toBe(false);
    const retried = await act(soar, { action: 'remediate', uids: [uid] }, 'k-9');
    expect(retried.status).toBe(200);
    expect(events()[1]?.isRemediated).toBe(true);
  });
});
