/**
 * Discord through the whole product (the emulator and dynalite over HTTP, the webhook stand-in):
 * every event once as an embed Discord takes, with `allowed_mentions: {"parse": []}`; one message
 * every 2 s; an empty bucket (`X-RateLimit-Remaining: 0`) holds the next message, so no 429 comes;
 * a 429's JSON `retry_after` is waited out without an attempt counted; a wrong token, an unknown
 * webhook and a refused form are dead and reported; a crash between send and record repeats that
 * one message at most; no password under any policy. The stand-in's bucket runs on the test's
 * clock, which skips the waits instead of sleeping them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { discordProblems } from '../../../lib/destinations/discord/limits.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { DISCORD_TOKEN, type DiscordStandIn, startDiscord } from '../../helpers/discord.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 12, lateMatchesPerTenant: 0, credentials: 80 });
const db = useDynalite();
const open: DiscordStandIn[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const uids = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);

/** The uid of the event an embed is about (its Item field, with the escapes taken out). */
const uidOf = (embed: { fields?: { name: string; value: string }[] }) =>
  (embed.fields?.find((f) => f.name === 'Item')?.value ?? '').replace(/\\(.)/g, '$1');

async function setUp(
  options: {
    url?: (url: string) => string;
    credentials?: boolean;
    passwords?: string;
    bucket?: number;
    windowMs?: number;
  } = {},
) {
  const clock = skipClock();
  const discord = await startDiscord({ now: clock.now, bucket: options.bucket, windowMs: options.windowMs });
  open.push(discord);
  const world = await makeWorld(
    emu,
    db,
    {
      ...oneDestination(
        'chat',
        { type: 'discord', url: { secret: 'discordUrl' } },
        { credentials: options.credentials, passwords: options.passwords },
      ),
      destinations: { chat: { type: 'discord', url: { secret: 'discordUrl' } }, ops: { type: 'console' } },
      ops: { to: ['ops'] },
    },
    { secrets: { discordUrl: options.url ? options.url(discord.url) : discord.url }, clock },
  );
  return { world, discord, clock };
}

describe('Discord', () => {
  it('every event once as an embed Discord takes, never a mention, one message every 2 s', async () => {
    const { world, discord } = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(discord.posted.map((m) => uidOf(m.embeds[0] ?? {})).sort()).toEqual([...uids()].sort());
    expect(discord.pinged).toEqual([]);
    for (const m of discord.posted) expect(discordProblems(m)).toEqual([]);
    const times = discord.requests.map((r) => r.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(1_990);
    // The emulator's hostile text arrives escaped; the webhook's token is in no log line.
    expect(JSON.stringify(discord.posted)).not.toMatch(/[^\\]<!channel>/);
    expect(world.logs.join('\n')).not.toContain(DISCORD_TOKEN);
  });

  it('an empty bucket holds the next message as long as the headers say: no 429 at all', async () => {
    // One message per 5 s: the 2 s pace alone would be refused.
    const { world, discord } = await setUp({ bucket: 1, windowMs: 5_000 });
    await world.cycle('events');
    expect(discord.requests.map((r) => r.status).filter((s) => s !== 204)).toEqual([]);
    expect(discord.posted).toHaveLength(uids().length);
    const times = discord.requests.map((r) => r.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(4_990);
  });

  it("429: waits its JSON retry_after (longer than the header's), no attempt counted, then delivers", async () => {
    const { world, discord, clock } = await setUp();
    discord.script({
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 42.5, global: false },
      headers: { 'Retry-After': '1' },
    });
    const first = await world.cycle('events');
    expect(first.delivery.destinations[0]?.status).toBe('paused');
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['chat'] });
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    const lease = await world.runtime.destinationState.peek('chat');
    expect((lease.pause?.until ?? 0) - clock.now()).toBeGreaterThan(40_000);
    await clock.sleep(43_000);
    await world.deliver();
    expect(discord.posted).toHaveLength(uids().length);
  });

  it('a wrong token, an unknown webhook, a refused form: dead, the destination reported', async () => {
    const wrong = await setUp({ url: (u) => u.replace(DISCORD_TOKEN, 'revoked') });
    await wrong.world.cycle('events');
    const dead = await wrong.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    expect(dead[0]?.lastError).toContain('Invalid Webhook Token');
    expect((await wrong.world.runtime.destinationState.peek('chat')).refused).toBeDefined();
    expect(wrong.world.console.join('')).toMatch(/chat.*refuse|refuse.*chat/s);
    const unknown = await setUp({ url: (u) => u.replace('/api/webhooks/', '/api/webhook/') });
    await unknown.world.cycle('events');
    const gone = await unknown.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    expect(gone[0]?.lastError).toContain('Unknown Webhook');
    const form = await setUp();
    form.discord.script({ status: 400, body: { message: 'Invalid Form Body', code: 50035 } });
    await form.world.cycle('events');
    const refused = await form.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    expect(refused).toHaveLength(1);
    expect(refused[0]?.lastError).toContain('Invalid Form Body');
  });

  it('5xx is retried; a crash between send and record repeats that one message, nothing lost', async () => {
    const { world, discord } = await setUp();
    discord.script({ status: 502, body: { message: 'Bad Gateway' } });
    await crashingOnce(world, () => world.cycle('events'));
    await world.deliver();
    await world.deliver();
    const posted = discord.posted.map((m) => uidOf(m.embeds[0] ?? {}));
    expect(new Set(posted)).toEqual(new Set(uids()));
    expect(posted.length).toBeLessThanOrEqual(uids().length + 1);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['chat'] });
    expect(sent).toHaveLength(uids().length);
  });

  it('no password under any policy: only the login and the kind of secret', async () => {
    for (const passwords of ['masked', 'hidden', 'clear']) {
      const { world, discord } = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(discord.posted.length).toBeGreaterThan(0);
      expectNoPassword(
        JSON.stringify(discord.posted),
        emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test'),
      );
    }
  });
});
