/**
 * Mattermost through the whole product (the emulator and dynalite over HTTP, the webhook
 * stand-in): every event once as a post the server takes, none the stand-in finds live; one post
 * every 200 ms; a 429 waited out for its `Retry-After` with no attempt counted; an unknown hook
 * (400) dead and reported once; 5xx retried; a crash between send and record repeats that one post
 * at most; no password under any policy. The test's clock skips the waits instead of sleeping them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mattermostProblems } from '../../../lib/destinations/mattermost/render.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { MATTERMOST_HOOK, type MattermostStandIn, startMattermost } from '../../helpers/mattermost.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 12, lateMatchesPerTenant: 0, credentials: 80 });
const db = useDynalite();
const open: MattermostStandIn[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const uids = () => emu.running.emulator.dataset.tenant('acme').events.map((e) => e.item.metadata.uid);

/** The uid of the event a post is about (its Item line, the look-alikes turned back). */
const uidOf = (text = '') =>
  (/^\*\*Item\*\* `([^`]*)`/m.exec(text)?.[1] ?? '').replace(/‹/g, '<').replace(/›/g, '>');

async function setUp(
  options: {
    url?: (url: string) => string;
    credentials?: boolean;
    passwords?: string;
    perSecond?: number;
  } = {},
) {
  const clock = skipClock();
  const mattermost = await startMattermost({ now: clock.now, perSecond: options.perSecond });
  open.push(mattermost);
  const chat = { type: 'mattermost', url: { secret: 'mattermostUrl' }, channel: 'security-alerts' };
  const world = await makeWorld(
    emu,
    db,
    {
      ...oneDestination('chat', chat, { credentials: options.credentials, passwords: options.passwords }),
      destinations: { chat, ops: { type: 'console' } },
      ops: { to: ['ops'] },
    },
    { secrets: { mattermostUrl: options.url ? options.url(mattermost.url) : mattermost.url }, clock },
  );
  return { world, mattermost, clock };
}

describe('Mattermost', () => {
  it('every event once as a post the server takes, none live, one every 200 ms, the URL in no log', async () => {
    const { world, mattermost } = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(mattermost.posted.map((p) => uidOf(p.text)).sort()).toEqual([...uids()].sort());
    expect(mattermost.flagged).toEqual([]);
    for (const p of mattermost.posted) {
      expect(mattermostProblems({ text: p.text ?? '' })).toEqual([]);
      expect(p.channel).toBe('security-alerts');
    }
    const times = mattermost.requests.map((r) => r.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(195);
    expect(world.logs.join('\n')).not.toContain(MATTERMOST_HOOK);
  });

  it('429: waits its Retry-After, no attempt counted, then delivers each event once', async () => {
    const { world, mattermost, clock } = await setUp();
    mattermost.script({
      status: 429,
      body: 'limit exceeded\n',
      headers: { 'Content-Type': 'text/plain', 'Retry-After': '30', 'X-RateLimit-Reset': '30' },
    });
    const first = await world.cycle('events');
    expect(first.delivery.destinations[0]?.status).toBe('paused');
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['chat'] });
    expect(pending).toHaveLength(uids().length);
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    const lease = await world.runtime.destinationState.peek('chat');
    expect((lease.pause?.until ?? 0) - clock.now()).toBeGreaterThan(28_000);
    await clock.sleep(31_000);
    await world.deliver();
    expect(mattermost.posted.map((p) => uidOf(p.text)).sort()).toEqual([...uids()].sort());
  });

  it("the server's rate limiter on at 2 a second: its 429s pause, cost no attempt, and every event goes once", async () => {
    const { world, mattermost, clock } = await setUp({ perSecond: 2 });
    await world.cycle('events');
    for (let pass = 0; pass < 40 && mattermost.posted.length < uids().length; pass++) {
      await clock.sleep(1_000);
      await world.deliver();
    }
    expect(mattermost.requests.some((r) => r.status === 429)).toBe(true);
    expect(mattermost.posted.map((p) => uidOf(p.text)).sort()).toEqual([...uids()].sort());
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['chat'] });
    expect(sent.every((r) => r.attempts === 1)).toBe(true);
  });

  it('an unknown hook (400): every delivery dead after one try, said as the server said it, reported once', async () => {
    const { world, mattermost } = await setUp({ url: (u) => u.replace(MATTERMOST_HOOK, 'deletedhook') });
    await world.cycle('events');
    await world.cycle('events');
    await world.deliver();
    expect(mattermost.posted).toEqual([]);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    // Each delivery tried once and never again, across three passes.
    expect(mattermost.requests).toHaveLength(uids().length);
    expect(dead).toHaveLength(uids().length);
    expect(dead[0]?.lastError).toBe('HTTP 400 Invalid webhook. (web.incoming_webhook.invalid.app_error)');
    expect((await world.runtime.destinationState.peek('chat')).refused).toBeDefined();
    expect(world.console.join('').match(/destination "chat" refuses deliveries/g)).toHaveLength(1);
    expect(world.metrics.totals.get('DestinationRefused')).toBe(1);
    expect(world.console.join('') + world.logs.join('\n')).not.toContain('deletedhook');
  });

  it('5xx is retried; a crash between send and record repeats that one post, nothing lost', async () => {
    const { world, mattermost } = await setUp();
    mattermost.script({ status: 503, body: '{"message":"unavailable"}' });
    await crashingOnce(world, () => world.cycle('events'));
    await world.deliver();
    await world.deliver();
    const posted = mattermost.posted.map((p) => uidOf(p.text));
    expect(new Set(posted)).toEqual(new Set(uids()));
    expect(posted.length).toBeLessThanOrEqual(uids().length + 1);
    expect(mattermost.requests[0]?.status).toBe(503);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['chat'] });
    expect(sent).toHaveLength(uids().length);
  });

  it('no password under any policy: only the login and the kind of secret', async () => {
    for (const passwords of ['masked', 'hidden', 'clear']) {
      const { world, mattermost } = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(mattermost.posted.length).toBeGreaterThan(0);
      expect(mattermost.flagged).toEqual([]);
      expectNoPassword(
        JSON.stringify(mattermost.posted),
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
    }
  });
});
