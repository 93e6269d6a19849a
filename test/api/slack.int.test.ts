import { describe, expect, it } from 'vitest';
import { REPEAT_VICTIM } from '../../lib/emulator/dataset.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { ANA, SLACK_SECRET, SLACK_TEAM, useSlackActions } from '../helpers/slack-actions.ts';
import { slackSigned } from '../helpers/slack-api.ts';

const emu = useEmulator({ eventsPerTenant: 5, lateMatchesPerTenant: 0, credentials: 400 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();
const doors = useSlackActions(emu, db);

const control = () => emu.running.emulator.control;
const events = () => emu.running.emulator.dataset.tenant('acme').events;
const itemAt = (i: number) => events()[i]?.item as unknown as EventItem;

const signed = (body: string, { secret = SLACK_SECRET, at = Math.floor(Date.now() / 1000) } = {}) =>
  slackSigned(body, secret, at);

async function setUp() {
  const pd = await pagerduty();
  // The same channel through an incoming webhook: its messages can only be replaced through a response_url.
  const webhook: Receiver = await doors.receivers();
  const metrics = new MemoryMetrics();
  const api = await doors.setUp(
    {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: {
        pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
        chat: { type: 'slack', url: webhook.url },
      },
      routes: [{ name: 'all', to: ['app', 'pager', 'chat'] }],
    },
    { app: { metrics } },
  );
  const click = (actionId: string, uid: string, extra: Record<string, unknown> = {}, user = ANA) =>
    api.interaction(
      {
        action_id: actionId,
        block_id: `exposure:${uid}`,
        value: uid,
        action_ts: '1716999999.000123',
        ...extra,
      },
      { user },
    );
  return { ...api, pd, webhook, metrics, click };
}

describe('Slack doors', () => {
  it('a click on a message an incoming webhook posted: acted once, and the message replaced through response_url', async () => {
    const { post, interaction, settled, answers, webhook } = await setUp();
    const item = itemAt(2);
    const posted = webhook.requests
      .map((r) => r.json() as { text: string; blocks: Record<string, unknown>[] })
      .find((m) => JSON.stringify(m.blocks).includes(`"exposure-w:${item.metadata.uid}"`));
    expect(posted).toBeDefined();
    const body = interaction(
      {
        action_id: 'exposure:remediate',
        block_id: `exposure-w:${item.metadata.uid}`,
        value: item.metadata.uid,
        action_ts: '1716999999.000999',
      },
      { message: posted },
    );
    expect((await post('/slack/interactions', body)).status).toBe(200);
    await settled();
    expect(events()[2]?.isRemediated).toBe(true);
    const replaced = answers.requests.at(-1)?.json() as {
      replace_original: boolean;
      blocks: unknown[];
      text: string;
    };
    expect(replaced.replace_original).toBe(true);
    expect(JSON.stringify(replaced.blocks)).toContain('"action_id":"exposure:unremediate"');
    expect(JSON.stringify(replaced.blocks)).toContain(`Marked remediated by slack:${ANA}`);
    // The alert is still the alert: its own blocks kept.
    expect(JSON.stringify(replaced.blocks)).toContain(`uid ${item.metadata.uid}`);
  });

  it('a signed click acts once: flags, the edited message with its undo, a thread reply, PagerDuty resolved; a replay does nothing', async () => {
    control().clearFaults();
    doors.slack.reset();
    const { world, pd, post, click, settled, messageOf } = await setUp();
    const uid = itemAt(0).metadata.uid;
    const before = await messageOf(uid);
    const buttons = JSON.stringify(before?.blocks);
    expect(buttons).toContain('"action_id":"exposure:ignore"');
    expect(buttons).toContain('"action_id":"exposure:silence"');
    const calls = control().calls('eventActions').length;
    const res = await post('/slack/interactions', click('exposure:ignore', uid));
    expect(res.status).toBe(200);
    await settled();
    expect(events()[0]?.isIgnored).toBe(true);
    // The same click again (Slack retries, or someone replays it within the window): nothing more.
    expect((await post('/slack/interactions', click('exposure:ignore', uid))).status).toBe(200);
    await settled();
    expect(control().calls('eventActions').length - calls).toBe(1);
    await world.deliver();
    const after = await messageOf(uid);
    expect(after?.edits).toHaveLength(1);
    expect(JSON.stringify(after?.blocks)).toContain('"action_id":"exposure:unignore"');
    expect(JSON.stringify(after?.blocks)).toContain(`Ignored by slack:${ANA}`);
    expect(doors.slack.thread(after?.ts ?? '')).toHaveLength(1);
    expect(pd.alerts.find((a) => a.dedupKey === `event:${uid}`)?.open).toBe(false);
  });

  it('refuses a bad signature, an old timestamp, a body changed after signing: 401, counted, nothing changed', async () => {
    const { post, click, metrics, settled } = await setUp();
    const uid = itemAt(1).metadata.uid;
    const body = click('exposure:remediate', uid);
    const cases: [string, Record<string, string>, string][] = [
      ['a wrong secret', signed(body, { secret: 'guess' }), body],
      ['an old timestamp', signed(body, { at: Math.floor(Date.now() / 1000) - 6 * 60 }), body],
      ['a changed body', signed(body), body.replace('remediate', 'ignore')],
      ['no signature', { 'Content-Type': 'application/x-www-form-urlencoded' }, body],
    ];
    for (const [what, headers, sent] of cases) {
      const res = await post('/slack/interactions', sent, headers);
      expect(res.status, what).toBe(401);
    }
    await settled();
    expect(events()[1]?.isRemediated).toBe(false);
    expect(metrics.get('SlackRequestsRejected')).toBe(cases.length);
  });

  it('takes only a form body of at most 64 KiB; answers only under responseUrlPrefix', async () => {
    const { post, settled, answers } = await setUp();
    const json = JSON.stringify({ type: 'block_actions' });
    const wrongType = await post('/slack/interactions', json, {
      ...signed(json),
      'Content-Type': 'application/json',
    });
    expect(wrongType.status).toBe(415);
    const big = `payload=${'x'.repeat(64 * 1024)}`;
    expect((await post('/slack/interactions', big)).status).toBe(413);
    // A response_url elsewhere than the prefix (a forged one in a signed request): never POSTed to.
    const command = new URLSearchParams({
      team_id: SLACK_TEAM,
      user_id: ANA,
      command: '/exposure',
      text: `lookup ${REPEAT_VICTIM}`,
      response_url: 'https://elsewhere.example/hook',
    }).toString();
    const before = answers.requests.length;
    expect((await post('/slack/commands', command)).status).toBe(200);
    await settled();
    expect(answers.requests).toHaveLength(before);
  });

  it('a user not allowed gets a refusal only they see, and nothing happens', async () => {
    const { post, click, settled, answers } = await setUp();
    const uid = itemAt(2).metadata.uid;
    const calls = control().calls('eventActions').length;
    expect((await post('/slack/interactions', click('exposure:ignore', uid, {}, 'U0STRANGER'))).status).toBe(
      200,
    );
    await settled();
    expect(control().calls('eventActions')).toHaveLength(calls);
    const [refusal] = answers.requests.map((r) => r.json() as { response_type: string; text: string });
    expect(refusal?.response_type).toBe('ephemeral');
    expect(refusal?.text).toMatch(/not allowed/);
  });

  it('Silence similar makes a silence, and the next cycle holds matching events back', async () => {
    const { world, post, click, settled, deps } = await setUp();
    const item = itemAt(3);
    const ids = (item.identifiers ?? []).map((i) => i.id).join(',');
    const body = click('exposure:silence', item.metadata.uid, {
      selected_option: { value: `PT1H|${item.metadata.type}|${ids}` },
    });
    expect((await post('/slack/interactions', body)).status).toBe(200);
    await settled();
    const [silence] = await deps.silences.active();
    expect(silence).toMatchObject({
      createdBy: `slack:${ANA}`,
      match: { kind: 'event', types: [item.metadata.type] },
    });
    // A new event of that type for those identifiers: recorded silenced, not sent.
    const [fresh] = emu.running.emulator.dataset.appendEvents(1001, 1);
    if (!fresh) throw new Error('no event');
    fresh.item.metadata.type = item.metadata.type;
    (fresh.item as unknown as EventItem).identifiers = item.identifiers;
    await world.cycle('events');
    const record = (
      await world.runtime.deliveries.getMany([deliveryId('app', 'event', fresh.item.metadata.uid)])
    ).get(deliveryId('app', 'event', fresh.item.metadata.uid));
    expect(record?.status).toBe('silenced');
  });

  it('the slash command: help at once; a lookup acknowledged at once and answered at response_url', async () => {
    const { post, settled, answers } = await setUp();
    const command = (text: string) =>
      new URLSearchParams({
        team_id: SLACK_TEAM,
        user_id: ANA,
        command: '/exposure',
        text,
        response_url: `${answers.url}/commands/1`,
      }).toString();
    const help = await post('/slack/commands', command('help'));
    expect(((await help.json()) as { text: string }).text).toContain('/exposure lookup');
    const started = Date.now();
    const ack = await post('/slack/commands', command(`lookup ${REPEAT_VICTIM}`));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(((await ack.json()) as { response_type: string }).response_type).toBe('ephemeral');
    await settled();
    const answer = answers.requests.at(-1)?.json() as { response_type: string; text: string };
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toContain(REPEAT_VICTIM);
    // Passwords as the policy says: masked by default, never the cleartext.
    const clear = emu.running.emulator.dataset.credentials.filter((c) => c.identity_name === REPEAT_VICTIM);
    for (const c of clear) if (c.hash.length > 3) expect(answer.text).not.toContain(c.hash);
  });

  it('an upstream slower than Slack waits: the answer within 3 s, the outcome after', async () => {
    const { post, click, settled } = await setUp();
    const uid = itemAt(4).metadata.uid;
    // The issue's own case: the upstream answers after 5 s (a real wait: the emulator's).
    control().addFault({ endpoint: 'eventActions', delayMs: 5_000 });
    const started = Date.now();
    expect((await post('/slack/interactions', click('exposure:remediate', uid))).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(events()[4]?.isRemediated).toBe(false);
    await settled();
    expect(events()[4]?.isRemediated).toBe(true);
  }, 20_000);
});
