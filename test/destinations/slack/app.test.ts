/**
 * The Slack-app destination (a bot token and a channel) through the whole product: the emulator
 * and dynalite over HTTP, the Slack Web API stand-in (test/helpers/slack-api.ts) over real HTTP.
 * Messages are posted with `chat.postMessage` and each record keeps where its message is; Slack's
 * `ok: false` answers are read as Slack means them: permanent errors dead and reported once, a 429
 * or `ratelimited` pausing the destination without costing an attempt, a digest too long split.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../lib/clock.ts';
import { StatusReader } from '../../../lib/state/status.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { SLACK_CHANNEL, type SlackStandIn, startSlackApi } from '../../helpers/slack-api.ts';
import { makeWorld } from '../../helpers/world.ts';

// Two events: each alert its own message at Slack's pace of one a second.
const emu = useEmulator({ eventsPerTenant: 2, lateMatchesPerTenant: 0, credentials: 10 });
const db = useDynalite();
let slack: SlackStandIn;
beforeAll(async () => {
  slack = await startSlackApi();
});
afterAll(() => slack.close());

const events = () => emu.running.emulator.dataset.tenant('acme').events.length;

function config(
  extra: { channel?: string; digest?: { threshold: number; maxItems: number }; ops?: boolean } = {},
) {
  return {
    sources: { tenantEvents: { lookback: 'P30D' } },
    destinations: {
      soc: {
        type: 'slack',
        token: { secret: 'socSlackBotToken' },
        channel: extra.channel ?? SLACK_CHANNEL,
        apiUrl: slack.url,
      },
      ...(extra.ops ? { ops: { type: 'console' } } : {}),
    },
    routes: [{ name: 'all', to: ['soc'] }],
    digest: extra.digest ?? { threshold: 100, maxItems: 20 },
    ...(extra.ops ? { ops: { to: ['ops'] } } : {}),
  };
}

const secrets = () => ({ socSlackBotToken: slack.token });
const reset = () => slack.reset();

describe('Slack as an app', () => {
  it('posts each alert with chat.postMessage, and each record keeps its channel id and ts', async () => {
    reset();
    const world = await makeWorld(emu, db, config({ channel: '#soc' }), {
      secrets: secrets(),
      clock: skipClock(),
    });
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(events());
    expect(slack.top()).toHaveLength(events());
    // The request: the bot token, the channel as configured, the blocks and the fallback text.
    const call = slack.calls[0];
    expect(call?.method).toBe('chat.postMessage');
    expect(call?.body).toMatchObject({ channel: '#soc', unfurl_links: false, unfurl_media: false });
    expect(typeof call?.body.text).toBe('string');
    expect(Array.isArray(call?.body.blocks)).toBe(true);
    // Each record: where its message is, by the channel's id (the answer's), not its name.
    const records = await world.runtime.deliveries.list({
      status: 'sent',
      destinations: ['soc'],
      limit: 100,
    });
    const posted = new Set(slack.top().map((m) => m.ts));
    for (const r of records) {
      expect(r.posted?.channel).toBe(SLACK_CHANNEL);
      expect(posted.has(r.posted?.ts ?? '')).toBe(true);
      expect(r.posted?.digest).toBeUndefined();
    }
    // A digest's items share their parent's place, marked as such.
    reset();
    const digest = await makeWorld(emu, db, config({ digest: { threshold: 1, maxItems: 20 } }), {
      secrets: secrets(),
      clock: skipClock(),
    });
    await digest.cycle('events');
    expect(slack.top()).toHaveLength(1);
    const inDigest = await digest.runtime.deliveries.list({
      status: 'sent',
      destinations: ['soc'],
      limit: 100,
    });
    expect(new Set(inDigest.map((r) => `${r.posted?.ts}:${r.posted?.digest}`))).toEqual(
      new Set([`${slack.top()[0]?.ts}:true`]),
    );
  });

  it('a permanent ok:false (the bot is not in the channel) is dead, and reported once', async () => {
    reset();
    const world = await makeWorld(emu, db, config({ ops: true }), { secrets: secrets(), clock: skipClock() });
    slack.script(...Array.from({ length: events() + 1 }, () => ({ error: 'not_in_channel' })));
    const first = await world.cycle('events');
    expect(first.delivery.dead).toBe(events());
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['soc'], limit: 100 });
    expect(dead[0]?.lastError).toContain('slack not_in_channel');
    expect(dead.every((r) => r.attempts === 1)).toBe(true);
    const reports = () => world.console.filter((line) => line.includes('refuses deliveries')).length;
    expect(reports()).toBe(1);
    // Retried by hand and refused again: still one report.
    await world.runtime.deliveries.requeue(dead[0]?.id ?? '');
    await world.deliver();
    expect(reports()).toBe(1);
    // `status` shows the refusing bot token as it shows a refusing webhook.
    const io = { client: world.runtime.dynamo, tableName: world.table, clock: systemClock };
    const status = await new StatusReader(io, world.runtime.silences).read();
    expect(status.destinations.find((d) => d.destination === 'soc')).toMatchObject({
      refusing: true,
      dead: events(),
    });
  });

  it('429 with Retry-After, and ratelimited in a 200: the destination pauses, no attempt counted', async () => {
    for (const script of [{ status: 429, retryAfter: 30 }, { error: 'ratelimited' }] as const) {
      reset();
      const world = await makeWorld(emu, db, config(), { secrets: secrets(), clock: skipClock() });
      slack.script(script);
      const summary = await world.cycle('events');
      const soc = summary.delivery.destinations.find((d) => d.destination === 'soc');
      expect(soc?.status).toBe('paused');
      const pausedFor = Date.parse(soc?.pausedUntil ?? '') - Date.now();
      if ('retryAfter' in script) expect(pausedFor).toBeGreaterThan(25_000);
      else expect(pausedFor).toBeGreaterThan(0);
      const pending = await world.runtime.deliveries.list({
        status: 'pending',
        destinations: ['soc'],
        limit: 100,
      });
      expect(pending).toHaveLength(events());
      expect(pending.every((r) => r.attempts === 0)).toBe(true);
      // One request, then nothing more to the paused destination.
      expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
    }
  });

  it('msg_blocks_too_long on a digest splits it; every item is sent once', async () => {
    reset();
    const world = await makeWorld(emu, db, config({ digest: { threshold: 1, maxItems: 20 } }), {
      secrets: secrets(),
      clock: skipClock(),
    });
    slack.script({ error: 'msg_blocks_too_long' });
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(events());
    expect(summary.delivery.dead).toBe(0);
    // Refused once whole, then sent in halves.
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage').length).toBeGreaterThanOrEqual(3);
    expect(slack.top().length).toBeGreaterThanOrEqual(2);
  });
});
