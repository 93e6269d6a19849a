/**
 * `deliver --once`, the real CLI (runCli in this process, a runtime of its own), finishes an action a crash interrupted
 * (a delivery pass does, by the contract): the upstream asked, the event's flag set, the Slack
 * message edited and replied to, PagerDuty resolved, each once. Without upstream credentials it
 * still delivers, says what is missing, and leaves the action open for a pass that has them.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ActDeps, actOnEvents } from '../../lib/actions/events.ts';
import { runCli } from '../../lib/cli/run.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { TEST_ROUTING_KEY, usePagerDutyReceivers } from '../helpers/pagerduty-receiver.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../helpers/slack-api.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const pagerduty = usePagerDutyReceivers();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const events = () => emu.running.emulator.dataset.tenant('acme').events;
const uidAt = (i: number) => (events()[i]?.item as unknown as EventItem | undefined)?.metadata.uid ?? '';

/** A world polled and alerted, its config on disk, and an action on `uid` a crash cut short two minutes ago. */
async function interrupted(uid: string, id: string) {
  const pd = await pagerduty();
  const config = {
    sources: { tenantEvents: { lookback: 'P30D' } },
    destinations: {
      app: { type: 'slack', token: { secret: 'bot' }, channel: SLACK_CHANNEL, apiUrl: slack.url },
      pager: { type: 'pagerduty', url: pd.url, routingKey: TEST_ROUTING_KEY },
    },
    routes: [{ name: 'all', to: ['app', 'pager'] }],
    digest: { threshold: 50, maxItems: 20 },
  };
  const world = await makeWorld(emu, db, config, { secrets: { bot: slack.token }, clock: skipClock() });
  await world.cycle('events');
  await world.deliver();
  const dir = await mkdtemp(join(tmpdir(), 'ea-deliver-act-'));
  await writeFile(join(dir, 'alerts.config.json'), JSON.stringify(config));
  await writeFile(join(dir, 'secrets.json'), JSON.stringify({ bot: slack.token }));
  // The run died once the action was recorded, before the upstream heard of it (its hold lapsed).
  const act = await world.runtime.act();
  const dying: ActDeps = {
    ...act,
    clock: { now: () => Date.now() - 120_000, sleep: act.clock.sleep },
    upstream: {
      eventActions: () => {
        throw new Error('killed');
      },
    },
  };
  await expect(actOnEvents(dying, { type: 'ignore', uids: [uid], by: 'cli:ana', id })).rejects.toThrow(
    'killed',
  );
  const env = {
    ALERTS_CONFIG: join(dir, 'alerts.config.json'),
    SECRETS_FILE: join(dir, 'secrets.json'),
    EXPOSURE_API_URL: emu.url,
    TABLE_NAME: world.table,
    DYNAMODB_ENDPOINT: db.endpoint,
    LOG_LEVEL: 'warn',
  };
  const seen = async () => {
    const key = deliveryId('app', 'event', uid);
    const posted = (await world.runtime.deliveries.getMany([key])).get(key)?.posted;
    const message = slack.top().find((m) => m.ts === posted?.ts);
    return {
      edits: message?.edits.length ?? 0,
      replies: slack.thread(posted?.ts ?? '').length,
      resolves: pd.requests.filter(
        (r) => r.event?.event_action === 'resolve' && r.event?.dedup_key === `event:${uid}`,
      ).length,
    };
  };
  return { world, dir, env, seen, status: async () => (await act.actions.get(id))?.status };
}

async function deliver(argv: string[], env: Record<string, string | undefined>) {
  const io = captureIo(env);
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('deliver --once and an action a crash interrupted', () => {
  it('finishes it: the upstream asked once, the flag set, each destination followed up once', async () => {
    const uid = uidAt(0);
    const { env, seen, status } = await interrupted(uid, 'cut-short-1');
    const calls = emu.running.emulator.control.calls('eventActions').length;
    const run = await deliver(['deliver', '--once', '--max-seconds', '30'], {
      ...env,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
    });
    expect(run.err).not.toContain('could not finish');
    expect(run.code).toBe(0);
    expect(emu.running.emulator.control.calls('eventActions').length - calls).toBe(1);
    expect(events()[0]?.isIgnored).toBe(true);
    expect(await status()).toBe('done');
    expect(await seen()).toEqual({ edits: 1, replies: 1, resolves: 1 });
    // A second pass does nothing more.
    await deliver(['deliver', '--once'], { ...env, EXPOSURE_API_TOKEN: 'emu-acme-token' });
    expect(await seen()).toEqual({ edits: 1, replies: 1, resolves: 1 });
  }, 30_000);

  it('without upstream credentials: delivers, says what is missing, and leaves the action open', async () => {
    const uid = uidAt(1);
    const { env, status } = await interrupted(uid, 'cut-short-2');
    const run = await deliver(['deliver', '--once', '--max-seconds', '30'], {
      ...env,
      EXPOSURE_API_TOKEN: undefined,
      EXPOSURE_API_KEY: undefined,
    });
    expect(run.code).toBe(0);
    expect(run.out).toContain('delivery:');
    expect(run.err).toContain('could not finish an interrupted action');
    expect(run.err).toContain('EXPOSURE_API_TOKEN or EXPOSURE_API_KEY');
    expect(await status()).toBe('pending');
    expect(events()[1]?.isIgnored).toBe(false);
  }, 30_000);
});
