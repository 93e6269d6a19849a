/**
 * Actions at the same moment, really at once (Promise.all against one dynalite, the emulator over
 * HTTP): 20 requests with one Idempotency-Key, through `app.request` and through the Lambda
 * handler, ask the upstream once and all answer as the first; two clicks on one button (two
 * `action_ts`) and an API call at once change the flag once. Either way, the next delivery pass
 * edits the Slack message once, replies in its thread once and resolves PagerDuty once.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { functionUrlEvent } from '../api/function-url.ts';
import { JSON_TYPE, newToken } from '../api/harness.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { useSlackActions } from '../helpers/slack-actions.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();
const receivers = useReceivers();
const doors = useSlackActions(emu, db);

const control = () => emu.running.emulator.control;
const events = () => emu.running.emulator.dataset.tenant('acme').events;
const uidAt = (i: number) => (events()[i]?.item as unknown as EventItem | undefined)?.metadata.uid ?? '';

async function setUp() {
  control().clearFaults();
  control().clearLog();
  for (const e of events()) e.isIgnored = false;
  doors.slack.reset();
  const pd = await pagerduty();
  // The same channel through an incoming webhook: a click's answer replaces its message.
  const webhook: Receiver = await receivers();
  const soar = newToken();
  const { world, deps, app, post, interaction, settled, messageOf, answers } = await doors.setUp(
    {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: {
        pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
        chat: { type: 'slack', url: webhook.url },
      },
      routes: [{ name: 'all', to: ['app', 'pager', 'chat'] }],
    },
    {
      apiClients: { soar: { digest: sha256Hex(soar), scopes: ['events:act'] } },
      upstream: { maxAttempts: 1, timeoutMs: 2_000 },
    },
  );
  const body = (uid: string) => JSON.stringify({ action: 'ignore', uids: [uid] });
  const headers = (key: string) => ({
    Authorization: `Bearer ${soar}`,
    ...JSON_TYPE,
    'Idempotency-Key': key,
  });
  const act = (uid: string, key: string) =>
    app.request('/events/actions', { method: 'POST', headers: headers(key), body: body(uid) });
  const lambda = createLambdaHandler(app);
  const actOnLambda = (uid: string, key: string) =>
    lambda(functionUrlEvent('POST', '/events/actions', { headers: headers(key), body: body(uid) }));
  const click = (uid: string, actionTs: string, form: 'app' | 'webhook' = 'app') => {
    const message = webhook.requests
      .map((r) => r.json() as { text: string; blocks: Record<string, unknown>[] })
      .find((m) => JSON.stringify(m.blocks).includes(`"exposure-w:${uid}"`));
    const blockId = `${form === 'webhook' ? 'exposure-w:' : 'exposure:'}${uid}`;
    const action = { action_id: 'exposure:ignore', block_id: blockId, value: uid, action_ts: actionTs };
    return post('/slack/interactions', interaction(action, form === 'webhook' ? { message } : {}));
  };
  /** What each destination shows of `uid` after a delivery pass. */
  const seen = async (uid: string) => {
    await world.deliver();
    const message = await messageOf(uid);
    return {
      edits: message?.edits.length ?? 0,
      replies: doors.slack.thread(message?.ts ?? '').length,
      resolves: pd.requests.filter(
        (r) => r.event?.event_action === 'resolve' && r.event?.dedup_key === `event:${uid}`,
      ).length,
    };
  };
  const replies = () =>
    answers.requests.map(
      (r) => r.json() as { replace_original?: boolean; text?: string; blocks?: unknown[] },
    );
  return { deps, act, actOnLambda, click, settled, seen, replies };
}

describe('actions at the same moment', () => {
  it('20 requests with one Idempotency-Key at once (app.request): one upstream call, each answered as the first, one follow-up per destination', async () => {
    const { deps, act, seen } = await setUp();
    const uid = uidAt(0);
    const answers = await Promise.all(Array.from({ length: 20 }, () => act(uid, 'same-key')));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const r of answers) expect(await r.json()).toEqual({ results: [{ uid, ok: true }] });
    expect(control().calls('eventActions')).toHaveLength(1);
    expect(events()[0]?.isIgnored).toBe(true);
    expect(await deps.act?.actions.auditTrail()).toHaveLength(1);
    expect(await seen(uid)).toEqual({ edits: 1, replies: 1, resolves: 1 });
  });

  it('20 requests with one Idempotency-Key at once through the Lambda handler: one upstream call, one follow-up per destination', async () => {
    const { act, actOnLambda, seen } = await setUp();
    const uid = uidAt(1);
    const answers = await Promise.all(Array.from({ length: 20 }, () => actOnLambda(uid, 'lambda-key')));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    for (const r of answers) expect(JSON.parse(r.body ?? '')).toEqual({ results: [{ uid, ok: true }] });
    expect(control().calls('eventActions')).toHaveLength(1);
    // The same key later, through the other door: still that one action.
    expect(await (await act(uid, 'lambda-key')).json()).toEqual({ results: [{ uid, ok: true }] });
    expect(control().calls('eventActions')).toHaveLength(1);
    expect(await seen(uid)).toEqual({ edits: 1, replies: 1, resolves: 1 });
  });

  it('two clicks on one button (two action_ts) and an API call at once: the flag changed once, one follow-up per destination', async () => {
    const { deps, act, click, settled, seen } = await setUp();
    const uid = uidAt(2);
    const answers = await Promise.all([
      click(uid, '1716999999.000001'),
      click(uid, '1716999999.000002'),
      act(uid, 'from-a-runbook'),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    await settled();
    expect(events()[2]?.isIgnored).toBe(true);
    // Three actions, each asked upstream (harmless: its actions are idempotent); one changed the flag.
    const trail = (await deps.act?.actions.auditTrail()) ?? [];
    expect(trail).toHaveLength(3);
    expect(trail.filter((e) => e.changed?.includes(uid))).toHaveLength(1);
    expect(await seen(uid)).toEqual({ edits: 1, replies: 1, resolves: 1 });
  });

  it('two clicks at once on a message an incoming webhook posted: it is replaced once; the other click hears it was done already', async () => {
    const { click, settled, replies } = await setUp();
    const uid = uidAt(3);
    const answers = await Promise.all([
      click(uid, '1716999999.000011', 'webhook'),
      click(uid, '1716999999.000012', 'webhook'),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    await settled();
    expect(events()[3]?.isIgnored).toBe(true);
    const replaced = replies().filter((r) => r.replace_original === true);
    expect(replaced).toHaveLength(1);
    expect(JSON.stringify(replaced[0]?.blocks)).toContain('"action_id":"exposure:unignore"');
    expect(replies().filter((r) => r.text?.includes('ignored already'))).toHaveLength(1);
  });
});
