/**
 * Acting on events, through the whole product: the real CLI (`events ignore`) against the emulator
 * over HTTP, dynalite, the Slack Web API stand-in and a PagerDuty stand-in. Each action changes the
 * upstream's flags, is audited, and is followed up at each destination once; the same action id
 * twice is one action; an action that changes no flag sends no follow-up; an upstream refusal
 * changes nothing else; and a crash at every step boundary still ends with each of those exactly
 * once after the next delivery pass.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ActDeps, actOnEvents, finishActions } from '../../lib/actions/events.ts';
import { runCli } from '../../lib/cli/run.ts';
import type { ActionStore } from '../../lib/state/actions.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import {
  type PagerDutyReceiver,
  TEST_ROUTING_KEY,
  usePagerDutyReceivers,
} from '../helpers/pagerduty-receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../helpers/slack-api.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 0 });
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

let pd: PagerDutyReceiver;
let world: World;
let env: Record<string, string>;
/** The world's clock, which the CLI's runs share: Slack's and PagerDuty's pace skipped, not waited. */
let clock: ReturnType<typeof skipClock>;

beforeEach(async () => {
  control().clearFaults();
  control().clearLog();
  for (const e of events()) {
    e.isIgnored = false;
    e.isRemediated = false;
  }
  slack.reset();
  pd = await pagerduty();
  const config = {
    sources: { tenantEvents: { lookback: 'P30D' } },
    destinations: {
      app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
      pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
    },
    routes: [{ name: 'all', to: ['app', 'pager'] }],
    digest: { threshold: 50, maxItems: 20 },
  };
  clock = skipClock();
  world = await makeWorld(emu, db, config, { secrets: { bot: slack.token }, clock });
  const polled = await world.cycle('events');
  expect(polled.delivery.sent).toBe(events().length * 2);
  const dir = await mkdtemp(join(tmpdir(), 'ea-act-'));
  await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ bot: slack.token }));
  env = {
    ALERTS_CONFIG: join(dir, 'alerts.config.json'),
    SECRETS_FILE: join(dir, 'secrets.json'),
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    TABLE_NAME: world.table,
    DYNAMODB_ENDPOINT: db.endpoint,
  };
});

async function cli(argv: string[]) {
  const io = captureIo(env);
  io.clock = clock;
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

/** What each destination shows of `uid`: the Slack message's edits and replies, PagerDuty's resolves. */
async function seen(uid: string) {
  const id = deliveryId('app', 'event', uid);
  const posted = (await world.runtime.deliveries.getMany([id])).get(id)?.posted;
  const message = slack.top().find((m) => m.ts === posted?.ts);
  return {
    edits: message?.edits.length ?? 0,
    replies: slack.thread(posted?.ts ?? '').length,
    shows: JSON.stringify(message?.blocks ?? []),
    resolves: pd.requests.filter(
      (r) => r.event?.event_action === 'resolve' && r.event?.dedup_key === `event:${uid}`,
    ).length,
    open: pd.alerts.find((a) => a.dedupKey === `event:${uid}`)?.open,
  };
}

describe('events ignore through the real CLI', () => {
  it('sets the flag upstream once, audits it, and follows up in Slack and PagerDuty, each once', async () => {
    const uid = uidAt(0);
    const r = await cli(['events', 'ignore', uid, '--reason', 'test account']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`${uid}  ignored`);
    expect(r.out).toMatch(/action [0-9a-f-]{36}: 1 of 1 events ignored; 2 follow-ups/);
    expect(events()[0]?.isIgnored).toBe(true);
    expect(control().calls('eventActions')).toHaveLength(1);
    const trail = await (await world.runtime.act()).actions.auditTrail();
    expect(trail).toHaveLength(1);
    expect(trail[0]).toMatchObject({ type: 'ignore', uids: [uid], reason: 'test account', changed: [uid] });
    expect(trail[0]?.by).toMatch(/^cli:/);
    expect(trail[0]?.results).toEqual([{ uid, ok: true }]);
    const now = await seen(uid);
    expect(now).toMatchObject({ edits: 1, replies: 1, resolves: 1, open: false });
    expect(now.shows).toContain('Ignored by cli:');
    expect(now.shows).toContain('Reason: test account');

    // Ignoring it again: the upstream is asked (harmless), but no flag changed, so no follow-up.
    const again = await cli(['events', 'ignore', uid]);
    expect(again.code).toBe(0);
    expect(again.out).toContain('0 follow-ups');
    expect(await seen(uid)).toMatchObject({ edits: 1, replies: 1, resolves: 1 });
    // Undoing it: a follow-up of its own in Slack; PagerDuty's incident stays resolved.
    const undo = await cli(['events', 'unignore', uid]);
    expect(undo.out).toContain('1 follow-up ');
    expect(events()[0]?.isIgnored).toBe(false);
    expect(await seen(uid)).toMatchObject({ edits: 2, replies: 2, resolves: 1 });
  });

  it('an upstream refusal of one uid changes nothing for it; the others go, each with its own answer; exit 1', async () => {
    const uid = uidAt(1);
    const r = await cli(['events', 'remediate', 'no/such/event', uid]);
    expect(r.code).toBe(1);
    // The upstream refuses the request of both whole; each uid is then asked alone.
    expect(r.out).toContain('no/such/event  refused: not_found');
    expect(r.out).not.toContain(`${uid}  refused`);
    expect(r.out).toContain(`${uid}  marked remediated`);
    expect(r.out).toMatch(/1 of 2 events marked remediated; 2 follow-ups/);
    expect(control().calls('eventActions')).toHaveLength(3);
    expect(events()[1]?.isRemediated).toBe(true);
    expect(await seen(uid)).toMatchObject({ edits: 1, replies: 1, resolves: 1 });
    const [entry] = await (await world.runtime.act()).actions.auditTrail();
    expect(entry?.results).toEqual([
      { uid: 'no/such/event', ok: false, error: expect.stringMatching(/^not_found: .*no\/such\/event/) },
      { uid, ok: true },
    ]);
  });

  it('the upstream refusing our credentials: nothing recorded or changed, exit 3, and the same id tries again later', async () => {
    control().addFault({ endpoint: 'eventActions', status: 401 });
    const uid = uidAt(2);
    const r = await cli(['events', 'ignore', uid]);
    expect(r.code).toBe(3);
    expect(await (await world.runtime.act()).actions.auditTrail()).toHaveLength(0);
    expect(events()[2]?.isIgnored).toBe(false);
    const act = await world.runtime.act();
    control().addFault({ endpoint: 'eventActions', status: 401 });
    const first = await actOnEvents(act, { type: 'ignore', uids: [uid], by: 'api:soar', id: 'k-1' });
    expect(first.unanswered?.code).toBe('unauthorized');
    const second = await actOnEvents(act, { type: 'ignore', uids: [uid], by: 'api:soar', id: 'k-1' });
    expect(second).toMatchObject({ replayed: false, results: [{ uid, ok: true }], followUps: 2 });
  });

  it('the same action id twice is one action: the second answers as the first and does nothing', async () => {
    const uid = uidAt(3);
    const act = await world.runtime.act();
    const request = {
      type: 'remediate' as const,
      uids: [uid],
      by: 'api:soar',
      id: 'idem-1',
      reason: 'patched',
    };
    const first = await actOnEvents(act, request);
    const second = await actOnEvents(act, request);
    expect(first).toMatchObject({ replayed: false, followUps: 2 });
    expect(second).toMatchObject({ replayed: true, followUps: 0, results: first.results });
    expect(control().calls('eventActions')).toHaveLength(1);
    expect(await act.actions.auditTrail()).toHaveLength(1);
  });
});

describe('an upstream slower than the hold', () => {
  it('the hold is renewed while it waits: a pass meanwhile takes nothing, and the upstream is asked once', async () => {
    const uid = uidAt(1);
    const act = await world.runtime.act();
    const calls = control().calls('eventActions').length;
    let taken: number | undefined;
    const upstream: ActDeps['upstream'] = {
      eventActions: async (...args) => {
        // A minute passes while the upstream takes its time, and a delivery pass runs meanwhile.
        await clock.sleep(61_000);
        // Until the hold is renewed past the moved clock (its heartbeat looks every half second).
        while (((await act.actions.get('slow-1'))?.heldUntil ?? 0) <= clock.now())
          await new Promise((resolve) => setTimeout(resolve, 20));
        taken = await finishActions(act);
        return act.upstream.eventActions(...args);
      },
    };
    const outcome = await actOnEvents(
      { ...act, upstream },
      { type: 'ignore', uids: [uid], by: 'cli:ana', id: 'slow-1' },
    );
    expect(taken).toBe(0);
    expect(outcome.results).toEqual([{ uid, ok: true }]);
    expect(control().calls('eventActions').length - calls).toBe(1);
  });
});

describe('an interrupted action the upstream does not answer', () => {
  it('stays open, pass after pass, and is finished once the upstream answers', async () => {
    const uid = uidAt(6);
    const act = await world.runtime.act();
    // The run dies once the action is recorded, before the upstream hears of it.
    const upstream = {
      eventActions: () => {
        throw new Error('crash');
      },
    };
    for (const id of ['open-1', 'open-2'])
      await expect(
        actOnEvents({ ...act, upstream }, { type: 'ignore', uids: [uid], by: 'cli:ana', id }),
      ).rejects.toThrow('crash');
    await world.runtime.deliver.clock.sleep(61_000);
    control().addFault({ endpoint: 'eventActions', status: 401, times: 5 });
    const calls = control().calls('eventActions').length;
    await world.deliver();
    expect((await act.actions.get('open-1'))?.status).toBe('pending');
    // The first refusal ends the pass's tries: the deliveries do not wait on one upstream call each.
    expect(control().calls('eventActions').length - calls).toBe(1);
    control().clearFaults();
    expect(world.logs.join('\n')).toContain('could not finish an interrupted action');
    await world.deliver();
    expect((await act.actions.get('open-1'))?.status).toBe('done');
    expect((await act.actions.get('open-2'))?.status).toBe('done');
    expect(events()[6]?.isIgnored).toBe(true);
    expect(await seen(uid)).toMatchObject({ edits: 1, replies: 1, resolves: 1 });
  });
});

describe('a crash at every step boundary of an action', () => {
  type Step =
    | 'after-begin'
    | 'after-upstream'
    | 'after-flags'
    | 'after-answer'
    | 'after-audit'
    | 'after-follow-ups';
  /** The runtime's action deps, with the run dying at `step` (once). */
  function crashing(act: ActDeps, step: Step): ActDeps {
    const store = act.actions;
    const die = () => {
      throw new Error(`crash ${step}`);
    };
    const actions = Object.create(store) as ActionStore;
    // A dead run gives nothing back: its hold on the action lapses by itself.
    actions.release = async () => undefined;
    if (step === 'after-upstream') actions.changeFlags = die;
    if (step === 'after-flags') actions.answered = die;
    if (step === 'after-answer') actions.audit = die;
    if (step === 'after-follow-ups') actions.done = die;
    return {
      ...act,
      actions,
      ...(step === 'after-begin' ? { upstream: { eventActions: die } } : {}),
      followUp: step === 'after-audit' ? die : act.followUp,
    };
  }

  it.each<[Step, number]>([
    ['after-begin', 4],
    ['after-upstream', 5],
    ['after-flags', 2],
    ['after-answer', 6],
    ['after-audit', 7],
    ['after-follow-ups', 0],
  ])('%s: the next delivery pass finishes it; each effect once', async (step, index) => {
    const uid = uidAt(index);
    const act = await world.runtime.act();
    await expect(
      actOnEvents(crashing(act, step), { type: 'ignore', uids: [uid], by: 'cli:ana', id: `crash-${step}` }),
    ).rejects.toThrow(`crash ${step}`);
    // A pass at once leaves it: it may still be under way (and it is still held). A minute later,
    // the hold has lapsed, and the pass finishes it.
    await world.deliver();
    await world.runtime.deliver.clock.sleep(61_000);
    await world.deliver();
    expect(events()[index]?.isIgnored).toBe(true);
    expect((await act.actions.get(`crash-${step}`))?.status).toBe('done');
    expect((await act.actions.auditTrail()).filter((e) => e.id === `crash-${step}`)).toHaveLength(1);
    expect(await seen(uid)).toMatchObject({ edits: 1, replies: 1, resolves: 1 });
    // And nothing more on a later pass.
    await world.runtime.deliver.clock.sleep(61_000);
    await world.deliver();
    expect(await seen(uid)).toMatchObject({ edits: 1, replies: 1, resolves: 1 });
  });
});
