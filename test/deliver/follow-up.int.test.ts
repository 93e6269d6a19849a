/**
 * Follow-ups through the whole product (the emulator and dynalite over HTTP, the Slack Web API
 * stand-in, a PagerDuty stand-in, real local webhook receivers), driven directly with made-up
 * actions: every destination that was sent the item hears of the action once, each as its type
 * says; the records are deliveries like any other (pending, sent, retried, dead, listed); and the
 * edge cases: a message gone, an item sent inside a digest, a refusal, a crash between the edit
 * and the reply.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followUp } from '../../lib/deliver/follow-up.ts';
import { followUpTargets } from '../../lib/deliver/follow-up-targets.ts';
import type { FollowUpAction } from '../../lib/model.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../helpers/slack-api.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const receiver = useReceivers();
const pagerduty = usePagerDutyReceivers();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const SIGNING = 'follow-up-signing-secret';

async function setUp(threshold = 10) {
  slack.reset();
  const hook = await receiver();
  const plain = await receiver();
  const pd = await pagerduty();
  const config = {
    sources: { tenantEvents: { lookback: 'P30D' } },
    destinations: {
      app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
      pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
      hook: { type: 'webhook', url: hook.url, signingSecret: SIGNING, followUps: true },
      plain: { type: 'webhook', url: plain.url },
    },
    routes: [{ name: 'all', to: ['app', 'pager', 'hook', 'plain'] }],
    digest: { threshold, maxItems: 2 },
  };
  // The Slack pace (a message a second) is waited on this clock, not in real time.
  const world = await makeWorld(emu, db, config, { secrets: { bot: slack.token }, clock: skipClock() });
  const summary = await world.cycle('events');
  const uids = emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);
  expect(summary.delivery.sent).toBe(uids.length * 4);
  const act = (uid: string, action: Partial<FollowUpAction> = {}) =>
    followUp(
      {
        records: world.runtime.records,
        targets: async () => followUpTargets(world.runtime.destinations.values()),
        clock: world.runtime.deliver.clock,
      },
      {
        kind: 'event',
        key: uid,
        action: { id: 'a1', type: 'ignore', by: 'cli:alice', at: '2026-11-25T12:00:00.000Z', ...action },
      },
    );
  const record = async (destination: string, uid: string) =>
    (await world.runtime.deliveries.getMany([deliveryId(destination, 'event', uid)])).get(
      deliveryId(destination, 'event', uid),
    );
  return { world, uids, hook, plain, pd, act, record };
}

const blocksOf = (m: { blocks: unknown[] }) => JSON.stringify(m.blocks);

async function followUpsOf(world: World, status: 'sent' | 'pending' | 'dead') {
  return (await world.runtime.deliveries.list({ status, limit: 1000 })).filter((r) => r.followUp);
}

describe('followUp: every destination that got the item hears of the action once', () => {
  it('a Slack app edits the message in place and replies in its thread; PagerDuty resolves; a webhook with followUps gets a signed action body', async () => {
    const { world, uids, hook, plain, pd, act, record } = await setUp();
    const uid = uids[0] as string;
    const posted = (await record('app', uid))?.posted;
    expect(posted?.channel).toBe(SLACK_CHANNEL);
    const plainBefore = plain.requests.length;

    const created = await act(uid, { reason: 'a test account' });
    expect(created.map((r) => r.destination).sort()).toEqual(['app', 'hook', 'pager']);
    // The same action again (a retry, a rerun): no second record.
    expect(await act(uid, { reason: 'a test account' })).toEqual([]);
    expect(await followUpsOf(world, 'pending')).toHaveLength(3);

    const pass = await world.deliver();
    expect(pass.sent).toBe(3);
    // Slack: the item's own message, edited once, still its alert, now saying who did what; one reply.
    const message = slack.top().find((m) => m.ts === posted?.ts);
    expect(message?.edits).toHaveLength(1);
    expect(blocksOf(message as { blocks: unknown[] })).toContain(
      'Ignored by cli:alice at 2026-11-25 12:00 UTC',
    );
    expect(blocksOf(message as { blocks: unknown[] })).toContain('a test account');
    // Still the alert it was: its uid, its link.
    expect(blocksOf(message as { blocks: unknown[] })).toContain(`uid ${uid}`);
    const replies = slack.thread(posted?.ts ?? '');
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toContain('Ignored by cli:alice');
    // PagerDuty: the event's own incident is resolved.
    const alert = pd.alerts.find((a) => a.dedupKey === `event:${uid}`);
    expect(alert?.open).toBe(false);
    expect(pd.alerts.filter((a) => a.open)).toHaveLength(uids.length - 1);
    // The webhook: one signed body of kind `action` with the item; the other webhook: nothing.
    const bodies = hook.requests.map((r) => r.json() as { kind: string });
    const actionBodies = hook.requests.filter((r) => (r.json() as { kind: string }).kind === 'action');
    expect(bodies.filter((b) => b.kind === 'action')).toHaveLength(1);
    const request = actionBodies[0];
    const body = request?.json() as {
      version: number;
      destination: string;
      action: Record<string, string>;
      items: EventItem[];
    };
    expect(body.version).toBe(1);
    expect(body.destination).toBe('hook');
    expect(body.action).toEqual({
      type: 'ignore',
      by: 'cli:alice',
      at: '2026-11-25T12:00:00.000Z',
      reason: 'a test account',
    });
    expect(body.items.map((i) => i.metadata.uid)).toEqual([uid]);
    const timestamp = request?.headers['x-signature-timestamp'] ?? '';
    const expected = `sha256=${createHmac('sha256', SIGNING).update(`${timestamp}.${request?.body}`).digest('hex')}`;
    expect(request?.headers['x-signature-256']).toBe(expected);
    expect(request?.headers['idempotency-key']).toMatch(/^[0-9a-f]{64}$/);
    expect(plain.requests).toHaveLength(plainBefore);

    // They are deliveries: sent, listed, and never sent again.
    expect((await followUpsOf(world, 'sent')).map((r) => r.destination).sort()).toEqual([
      'app',
      'hook',
      'pager',
    ]);
    const again = await world.deliver();
    expect(again.sent).toBe(0);
    expect(slack.thread(posted?.ts ?? '')).toHaveLength(1);
    // The original alert's record keeps its place; an undo is a follow-up of its own.
    expect((await record('app', uid))?.posted).toEqual(posted);
    const undo = await act(uid, { id: 'a2', type: 'unignore' });
    // PagerDuty hears nothing of an undo: a resolved incident stays resolved.
    expect(undo.map((r) => r.destination).sort()).toEqual(['app', 'hook']);
    await world.deliver();
    expect(blocksOf(slack.top().find((m) => m.ts === posted?.ts) as { blocks: unknown[] })).toContain(
      'No longer ignored by cli:alice',
    );
    expect(slack.thread(posted?.ts ?? '')).toHaveLength(2);
  });

  it('a made-up action: shown as it is named; PagerDuty gets nothing; a message gone gets the reply alone', async () => {
    const { world, uids, act, record } = await setUp();
    const [first, second] = uids as [string, string];
    const made = await act(first, { id: 'x1', type: 'escalate', by: 'api:tier2' });
    expect(made.map((r) => r.destination).sort()).toEqual(['app', 'hook']);
    // The second event's message was deleted in Slack meanwhile.
    const gone = (await record('app', second))?.posted;
    slack.remove(gone?.ts ?? '');
    await act(second, { id: 'x2', type: 'remediate' });
    await world.deliver();
    const firstMessage = slack.top().find((m) => m.ts === (made[0]?.posted?.ts ?? ''));
    expect(blocksOf(firstMessage as { blocks: unknown[] })).toContain('Action \\"escalate\\" by api:tier2');
    const updates = slack.calls.filter((c) => c.method === 'chat.update');
    expect(updates.map((c) => (c.answer as { error?: string }).error)).toEqual([
      undefined,
      'message_not_found',
    ]);
    // Its thread went with it: the reply was refused, and the news went in the channel instead.
    const replies = slack.calls.filter(
      (c) => c.method === 'chat.postMessage' && c.body.thread_ts === gone?.ts,
    );
    expect(replies.map((c) => (c.answer as { error?: string }).error)).toEqual(['thread_not_found']);
    const inChannel = slack.top().filter((m) => m.text.includes('Marked remediated by cli:alice'));
    expect(inChannel).toHaveLength(1);
    expect((await followUpsOf(world, 'sent')).filter((r) => r.destination === 'app')).toHaveLength(2);
    expect(world.logs.join('\n')).toContain('gone or too old to edit');
    expect(world.logs.join('\n')).toContain('the follow-up goes in the channel');
  });

  it('an item sent inside a digest: the reply goes on the parent, no edit; its PagerDuty digest gets nothing', async () => {
    const { world, uids, act, record } = await setUp(1);
    const uid = uids[3] as string;
    const posted = (await record('app', uid))?.posted;
    expect(posted?.digest).toBe(true);
    expect((await record('pager', uid))?.inDigest).toBe(true);
    const made = await act(uid);
    expect(made.map((r) => r.destination).sort()).toEqual(['app', 'hook']);
    const before = slack.thread(posted?.ts ?? '').length;
    await world.deliver();
    expect(slack.calls.filter((c) => c.method === 'chat.update')).toHaveLength(0);
    const thread = slack.thread(posted?.ts ?? '');
    expect(thread).toHaveLength(before + 1);
    expect(thread.at(-1)?.text).toContain('Ignored by cli:alice');
  });

  it('the reply refused for now: the edit is kept and not repeated; refused for good: dead, the destination marked refusing', async () => {
    const { world, uids, act, record } = await setUp();
    const [first, second] = uids as [string, string];
    const posted = (await record('app', first))?.posted;
    await act(first);
    // The edit goes through; the reply meets Slack's own trouble.
    slack.script({ error: 'internal_error', method: 'chat.postMessage' });
    const pass = await world.deliver();
    expect(pass.destinations.find((d) => d.destination === 'app')?.retrying).toBe(1);
    const [waiting] = (await followUpsOf(world, 'pending')).filter((r) => r.destination === 'app');
    expect(waiting?.followUp?.edited).toBe(true);
    expect(waiting?.attempts).toBe(1);
    // Its retry is due later: make it due now, as `deliveries retry` would.
    await world.runtime.deliveries.requeue(waiting?.id ?? '');
    await world.deliver();
    expect(slack.top().find((m) => m.ts === posted?.ts)?.edits).toHaveLength(1);
    expect(slack.thread(posted?.ts ?? '')).toHaveLength(1);
    // A permanent refusal of the reply: dead, like any delivery, listed as such.
    await act(second, { id: 'a9' });
    slack.script({ error: 'is_archived', method: 'chat.postMessage' });
    const refused = await world.deliver();
    expect(refused.destinations.find((d) => d.destination === 'app')?.dead).toBe(1);
    const dead = (await followUpsOf(world, 'dead')).filter((r) => r.destination === 'app');
    expect(dead.map((r) => r.lastError)).toEqual(['slack is_archived']);
    // The destination now shows as refusing (status), as after any permanent refusal.
    expect((await world.runtime.destinationState.peek('app')).refused?.code).toBeTruthy();
    expect(world.logs.filter((l) => l.includes('destination refused the message'))).toHaveLength(1);
  });

  it('Slack rate limits a follow-up: paused, no attempt counted, sent after the pause', async () => {
    const { world, uids, act } = await setUp();
    await act(uids[0] as string);
    slack.script({ status: 429, retryAfter: 1, method: 'chat.update' });
    const pass = await world.deliver();
    const app = pass.destinations.find((d) => d.destination === 'app');
    expect(app?.status).toBe('paused');
    const [waiting] = (await followUpsOf(world, 'pending')).filter((r) => r.destination === 'app');
    expect(waiting?.attempts).toBe(0);
    // A second later (on this test's clock) the pause is over and the follow-up goes.
    await world.runtime.deliver.clock.sleep(1_500);
    const after = await world.deliver();
    expect(after.destinations.find((d) => d.destination === 'app')?.sent).toBe(1);
    expect(slack.calls.filter((c) => c.method === 'chat.update' && c.status === 200)).toHaveLength(1);
  });
});
