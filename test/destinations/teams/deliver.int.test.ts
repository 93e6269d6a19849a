/**
 * Delivery to Microsoft Teams, end to end: the real delivery pass and stores on real dynalite, a
 * real local stand-in for a Workflows URL (test/helpers/teams-receiver.ts). A 202 with an empty
 * body is success; 429 waits as asked and costs no attempt; a 5xx is retried; any other 4xx makes
 * the delivery dead and reports the destination once; a crash between send and record sends that
 * one card once more at most; the pace holds (one a second per URL, shared URLs included); and a
 * 1,000-item digest goes as one card under 28,000 bytes. The pass and the stand-in run on the
 * test's clock, which skips the pace's and pauses' waits instead of sleeping them (the send timeout
 * stays real).
 */
import { describe, expect, it } from 'vitest';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import { deliveryWorld } from '../../deliver/seed.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../../helpers/pagerduty-receiver.ts';
import { type TeamsReceiver, useTeamsReceivers } from '../../helpers/teams-receiver.ts';

const db = useDynalite();
const teamsReceiver = useTeamsReceivers();
const pagerduty = usePagerDutyReceivers();

class Crash extends Error {}

/** Uids of the events of every card the channel got, one entry per card. */
function postedUids(teams: TeamsReceiver): string[] {
  return teams.posted.map((p) => /forum_post\/seed\/thread\/\d+/.exec(JSON.stringify(p.card))?.[0] ?? '?');
}

async function setup(extra: Record<string, unknown> = {}, count = 3) {
  const clock = skipClock();
  const teams = await teamsReceiver({ now: clock.now });
  const world = await deliveryWorld(
    db,
    {
      destinations: { teams: { type: 'teams', url: { secret: 'teamsUrl' } }, ops: { type: 'console' } },
      routes: [{ name: 'all', match: {}, to: ['teams'] }],
      digest: { threshold: 100, maxItems: 20 },
      ops: { to: ['ops'] },
      ...extra,
    },
    { secrets: { teamsUrl: teams.url }, clock },
  );
  world.runtime.deliver.random = () => 0;
  const ids = await world.seed('teams', count);
  return { teams, world, ids, clock };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number));

describe('Teams delivery', () => {
  it('202 with an empty body is success: each event one valid card, one a second', async () => {
    const { teams, world } = await setup();
    const summary = await world.pass();
    expect(summary.sent).toBe(3);
    expect(teams.requests.map((r) => r.status)).toEqual([202, 202, 202]);
    expect(teams.failedRuns).toEqual([]);
    expect(postedUids(teams).sort()).toEqual([0, 1, 2].map((i) => `forum_post/seed/thread/${i}`));
    for (const gap of gaps(teams.requests.map((r) => r.at))) expect(gap).toBeGreaterThanOrEqual(990);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['teams'] });
    expect(sent.map((r) => r.attempts)).toEqual([1, 1, 1]);
    expect(world.metrics.get('DeliveriesSent')).toBe(3);
    // The URL is a secret: it is in no log line.
    expect(world.logs.join('\n')).not.toContain('sig=test-signature');
  }, 20_000);

  it('two destinations on one URL keep its pace between them', async () => {
    const clock = skipClock();
    const teams = await teamsReceiver({ now: clock.now });
    const world = await deliveryWorld(
      db,
      {
        destinations: { a: { type: 'teams', url: teams.url }, b: { type: 'teams', url: teams.url } },
        routes: [{ name: 'all', match: {}, to: ['a', 'b'] }],
        digest: { threshold: 100, maxItems: 20 },
      },
      { clock },
    );
    await world.seed('a', 2);
    await world.seed('b', 2);
    const summary = await world.pass();
    expect(summary.sent).toBe(4);
    const times = teams.requests.map((r) => r.at).sort((x, y) => x - y);
    // Each destination waits two seconds between its own cards, so the URL gets one a second on average.
    expect((times[3] as number) - (times[0] as number)).toBeGreaterThanOrEqual(1_980);
    expect(teams.posted).toHaveLength(4);
  }, 20_000);

  it('429 waits its Retry-After without costing an attempt; then every card goes once', async () => {
    const { teams, world, clock } = await setup();
    teams.script({ status: 429, headers: { 'Retry-After': '1' }, body: '' });
    const first = await world.pass();
    expect(first.destinations[0]?.status).toBe('paused');
    expect(teams.requests).toHaveLength(1);
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['teams'] });
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    // Before the pause ends, nothing is sent.
    expect((await world.pass()).destinations[0]?.status).toBe('paused');
    expect(teams.requests).toHaveLength(1);
    await clock.sleep(1_100);
    expect((await world.pass()).sent).toBe(3);
    expect(postedUids(teams)).toHaveLength(3);
    expect(new Set(postedUids(teams)).size).toBe(3);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['teams'] });
    expect(sent.map((r) => r.attempts)).toEqual([1, 1, 1]);
  }, 20_000);

  it('5xx and a timeout are retried; each card reaches the channel once', async () => {
    const { teams, world, clock } = await setup();
    world.runtime.deliver.sendTimeoutMs = 400;
    teams.script({ status: 500, body: 'InternalServerError' }, { status: 202, delayMs: 1_500 });
    const first = await world.pass();
    expect(first.sent).toBe(1);
    expect(first.retrying).toBe(2);
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['teams'] });
    expect(pending.map((r) => r.lastError).sort()).toEqual([
      'HTTP 500 InternalServerError',
      'no answer within 400 ms',
    ]);
    await clock.sleep(1_100);
    expect((await world.pass()).sent).toBe(2);
    expect(new Set(postedUids(teams)).size).toBe(3);
    expect(postedUids(teams)).toHaveLength(3);
  }, 20_000);

  it('another 4xx makes the delivery dead and reports the destination once', async () => {
    const { teams, world } = await setup();
    teams.script(
      { status: 404, body: 'WorkflowTriggerIsNotEnabled' },
      { status: 404, body: 'WorkflowTriggerIsNotEnabled' },
      { status: 404, body: 'WorkflowTriggerIsNotEnabled' },
    );
    const summary = await world.pass();
    expect(summary.dead).toBe(3);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['teams'] });
    expect(dead).toHaveLength(3);
    expect(dead.every((r) => r.lastError === 'HTTP 404 WorkflowTriggerIsNotEnabled')).toBe(true);
    const notices = world.console.filter((line) => line.includes('refuses deliveries'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('"teams" (teams)');
    expect(world.metrics.get('DestinationRefused')).toBe(1);
    expect(world.metrics.get('DeliveriesDead')).toBe(3);
    expect(teams.posted).toHaveLength(0);
  }, 20_000);

  it('a crash between send and record re-sends that one card once, nothing else', async () => {
    const { teams, world } = await setup();
    let crashed: string[] = [];
    world.runtime.deliver.checkpoint = (_step, ids) => {
      if (crashed.length === 0) {
        crashed = ids;
        throw new Crash('died after the send');
      }
    };
    const first = await world.pass();
    expect(first.destinations[0]?.status).toBe('failed');
    world.runtime.deliver.checkpoint = undefined;
    expect((await world.pass()).sent).toBe(3);
    const uids = postedUids(teams);
    expect(new Set(uids).size).toBe(3);
    expect(uids).toHaveLength(4);
    const twice = uids.filter((u, i) => uids.indexOf(u) !== i);
    expect(crashed.map((id) => id.replace('teams~event~', ''))).toEqual(twice);
  }, 20_000);

  it('1,000 hostile events in one pass go as one digest card under 28,000 bytes', async () => {
    const { teams, world } = await setup({ digest: { threshold: 5, maxItems: 1_000 } }, 0);
    await world.seed('teams', 1_000, {
      // Batch-written, as an exclusive stream writes a page: what is checked is the card.
      exclusive: true,
      item: (i) => {
        const item = sampleHostileEvent(new Date());
        return { ...item, metadata: { ...item.metadata, uid: `paste/pastebin/${i}/x` } };
      },
    });
    const summary = await world.pass();
    expect(summary.sent).toBe(1_000);
    expect(teams.requests).toHaveLength(1);
    expect(teams.requests[0]?.status).toBe(202);
    expect(teams.requests[0]?.bytes).toBeLessThan(28_000);
    expect(teams.failedRuns).toEqual([]);
    expect(JSON.stringify(teams.posted[0]?.card)).toMatch(/more items? not listed \(1000 in all\)/);
  }, 60_000);
});

describe('ops notices', () => {
  it('a refusing Teams destination is reported once to a PagerDuty ops destination, and only once', async () => {
    const clock = skipClock();
    const teams = await teamsReceiver({ now: clock.now });
    const pd = await pagerduty();
    const world = await deliveryWorld(
      db,
      {
        destinations: {
          teams: { type: 'teams', url: teams.url },
          pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
        },
        routes: [{ name: 'all', match: {}, to: ['teams'] }],
        digest: { threshold: 100, maxItems: 20 },
        ops: { to: ['pager'] },
      },
      { clock },
    );
    await world.seed('teams', 2);
    teams.script({ status: 403, body: 'Forbidden' }, { status: 403, body: 'Forbidden' });
    expect((await world.pass()).dead).toBe(2);
    expect(pd.alerts).toHaveLength(1);
    const event = pd.alerts[0]?.event as { payload: { severity: string; class: string; summary: string } };
    expect(event.payload.severity).toBe('error');
    expect(event.payload.class).toBe('exposure_alerts_ops');
    expect(event.payload.summary).toBe('exposure-alerts: destination "teams" refuses deliveries');
    expect(pd.requests).toHaveLength(1);
  }, 20_000);
});

describe('Teams answers', () => {
  it('an old-connector style 200 with body "1" is success too (any 2xx), a 413 on one item is dead', async () => {
    const { teams, world } = await setup({}, 2);
    teams.script({ status: 200, body: '1' }, { status: 413, body: 'Request Entity Too Large' });
    const summary = await world.pass();
    expect(summary.sent).toBe(1);
    expect(summary.dead).toBe(1);
    // One item too large says nothing of the destination: not reported.
    expect(world.console.filter((line) => line.includes('refuses deliveries'))).toHaveLength(0);
  }, 20_000);
});
