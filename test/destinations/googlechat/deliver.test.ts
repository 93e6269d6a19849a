/**
 * Google Chat through the whole product (the emulator and dynalite over HTTP, the incoming-webhook
 * stand-in): every event once as a card the space takes, none live; one message a second per space,
 * two destinations on one space sharing it; a 429 waited out without an attempt counted; 5xx
 * retried; a refusal dead and reported once; a crash between send and record repeating that one
 * message at most; no password, not even masked. The stand-in's rate runs on the test's clock,
 * which skips the waits instead of sleeping them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolveDestinations } from '../../../lib/deliver/destinations.ts';
import { paceFor } from '../../../lib/deliver/pace.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { skipClock } from '../../helpers/clock.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import {
  CHAT_KEY,
  CHAT_SPACE,
  CHAT_TOKEN,
  type ChatMessage,
  type GoogleChatStandIn,
  startGoogleChat,
} from '../../helpers/googlechat.ts';
import { crashingOnce, expectNoPassword, oneDestination } from '../../helpers/one-destination.ts';
import { configFrom, makeWorld } from '../../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 40 });
const db = useDynalite();
const open: GoogleChatStandIn[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const uids = () =>
  emu.running.emulator.dataset
    .tenant('acme')
    .events.map((e) => (e.item as unknown as EventItem).metadata.uid);

const fromHtml = (html: string) =>
  html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** The uid of the event a card is about (its Item field). */
const uidOf = (m: ChatMessage) =>
  fromHtml(/<b>Item:<\/b> (.*?)(?:<br>|")/.exec(JSON.stringify(m.body))?.[1] ?? '');
const loginsIn = (messages: ChatMessage[]) =>
  messages.flatMap((m) => [...JSON.stringify(m.body).matchAll(/[a-z.]+\d+@[a-z.]+/g)].map((x) => x[0]));

async function setUp(
  options: {
    url?: (url: string) => string;
    credentials?: boolean;
    passwords?: string;
    threads?: boolean;
    threshold?: number;
    retryAfter?: string;
  } = {},
) {
  const clock = skipClock();
  const chat = await startGoogleChat({ now: clock.now, retryAfter: options.retryAfter });
  open.push(chat);
  const destination = {
    type: 'googlechat',
    url: { secret: 'chatUrl' },
    ...(options.threads ? { threads: true } : {}),
  };
  const world = await makeWorld(
    emu,
    db,
    {
      ...oneDestination('chat', destination, {
        credentials: options.credentials,
        passwords: options.passwords,
        threshold: options.threshold,
      }),
      destinations: { chat: destination, ops: { type: 'console' } },
      ops: { to: ['ops'] },
    },
    { secrets: { chatUrl: options.url ? options.url(chat.url) : chat.url }, clock },
  );
  return { world, chat, clock };
}

describe('Google Chat', () => {
  it('every event once as a card the space takes, none live, one a second; no key or token in a log', async () => {
    const { world, chat } = await setUp();
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(uids().length);
    expect(chat.messages.map(uidOf).sort()).toEqual([...uids()].sort());
    expect(chat.live).toEqual([]);
    expect(chat.requests.every((r) => r.status === 200)).toBe(true);
    const times = chat.messages.map((m) => m.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(1_000);
    const logs = world.logs.join('\n');
    expect(logs).not.toContain(CHAT_TOKEN);
    expect(logs).not.toContain(CHAT_KEY);
  });

  it('429: paused for its Retry-After, no attempt counted, then every card goes once', async () => {
    const { world, chat, clock } = await setUp();
    chat.script({
      status: 429,
      body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Resource has been exhausted' } },
      headers: { 'Retry-After': '7' },
    });
    const first = await world.cycle('events');
    expect(first.delivery.destinations.find((d) => d.destination === 'chat')?.status).toBe('paused');
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['chat'] });
    expect(pending).toHaveLength(uids().length);
    expect(pending.every((r) => r.attempts === 0)).toBe(true);
    const lease = await world.runtime.destinationState.peek('chat');
    expect((lease.pause?.until ?? 0) - clock.now()).toBeGreaterThan(5_000);
    await clock.sleep(7_500);
    await world.deliver();
    expect(chat.messages.map(uidOf).sort()).toEqual([...uids()].sort());
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['chat'] });
    expect(sent.every((r) => r.attempts === 1)).toBe(true);
  });

  it('a wrong token, an unknown space, a wrong key, a refused card: dead, and reported once', async () => {
    const wrong = await setUp({ url: (u) => u.replace(CHAT_TOKEN, 'revoked') });
    await wrong.world.cycle('events');
    await wrong.world.deliver();
    const dead = await wrong.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    expect(dead).toHaveLength(uids().length);
    expect(dead[0]?.lastError).toContain('HTTP 403 PERMISSION_DENIED');
    expect(wrong.world.console.join('').split('refuses deliveries').length - 1).toBe(1);
    expect(wrong.world.metrics.get('DestinationRefused')).toBe(1);
    for (const url of [
      (u: string) => u.replace(CHAT_SPACE, 'AAAAgone'),
      (u: string) => u.replace(CHAT_KEY, 'bad'),
    ]) {
      const other = await setUp({ url });
      await other.world.cycle('events');
      const gone = await other.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
      expect(gone).toHaveLength(uids().length);
      expect(gone[0]?.lastError).toMatch(/HTTP (404 NOT_FOUND|400 INVALID_ARGUMENT: API key not valid)/);
    }
    const refused = await setUp();
    refused.chat.script({
      status: 400,
      body: { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'bad card' } },
    });
    await refused.world.cycle('events');
    const one = await refused.world.runtime.deliveries.list({ status: 'dead', destinations: ['chat'] });
    expect(one).toHaveLength(1);
    expect(refused.chat.messages).toHaveLength(uids().length - 1);
  });

  it('5xx is retried; a crash between send and record repeats that one card at most, nothing lost', async () => {
    const { world, chat } = await setUp();
    chat.script({ status: 503, body: { error: { code: 503, status: 'UNAVAILABLE', message: 'try again' } } });
    await crashingOnce(world, () => world.cycle('events'));
    await world.deliver();
    await world.deliver();
    const posted = chat.messages.map(uidOf);
    expect(new Set(posted)).toEqual(new Set(uids()));
    expect(posted.length).toBeLessThanOrEqual(uids().length + 1);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['chat'] });
    expect(sent).toHaveLength(uids().length);
  });

  it('two destinations on one space share its second: each keeps 2 s, the space gets one a second', async () => {
    const clock = skipClock();
    const chat = await startGoogleChat({ now: clock.now });
    open.push(chat);
    const config = {
      ...oneDestination('a', {}),
      destinations: {
        a: { type: 'googlechat', url: { secret: 'a' } },
        b: { type: 'googlechat', url: { secret: 'b' } },
        elsewhere: { type: 'googlechat', url: { secret: 'c' } },
      },
      routes: [{ name: 'all', to: ['a', 'b'] }],
    };
    const secrets = {
      a: chat.webhook(CHAT_SPACE, 'token-a'),
      b: chat.webhook(CHAT_SPACE, 'token-b'),
      c: chat.webhook('AAAAother', 'token-c'),
    };
    // Two webhooks of one space (different URLs) pace at 2 s each; a webhook of another space at 1 s.
    const resolved = resolveDestinations(configFrom(config), secrets);
    expect(['a', 'b', 'elsewhere'].map((n) => paceFor(resolved.get(n) as never))).toEqual([
      2_000, 2_000, 1_000,
    ]);
    const world = await makeWorld(emu, db, config, { secrets, clock });
    await world.cycle('events');
    for (let pass = 0; pass < 5; pass++) {
      const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['a', 'b'] });
      if (!pending.length) break;
      await clock.sleep(2_000);
      await world.deliver();
    }
    for (const token of ['token-a', 'token-b']) {
      const own = chat.messages.filter((m) => m.token === token);
      expect(own.map(uidOf).sort()).toEqual([...uids()].sort());
      for (let i = 1; i < own.length; i++)
        expect((own[i]?.at as number) - (own[i - 1]?.at as number)).toBeGreaterThanOrEqual(2_000);
    }
    const times = chat.messages.map((m) => m.at).sort((x, y) => x - y);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(1_000);
    // Two passes starting together can meet in one second: the later message waits, uncounted.
    const refused = chat.requests.filter((r) => r.status === 429).length;
    expect(refused).toBeLessThanOrEqual(3);
    const sent = await world.runtime.deliveries.list({ status: 'sent', destinations: ['a', 'b'] });
    expect(sent).toHaveLength(2 * uids().length);
    expect(sent.every((r) => r.attempts === 1)).toBe(true);
    expect(chat.live).toEqual([]);
  });

  it('no password in a card under masked or hidden, not even masked', async () => {
    const credentials = emu.running.emulator.dataset.credentials.filter((c) => c.domain === 'acme.test');
    for (const passwords of ['masked', 'hidden']) {
      const { world, chat } = await setUp({ credentials: true, passwords });
      await world.cycle('credentials');
      expect(chat.messages.length).toBeGreaterThan(0);
      expectNoPassword(JSON.stringify(chat.messages.map((m) => m.body)), credentials);
      expect(JSON.stringify(chat.messages.map((m) => m.body))).not.toMatch(/password|\*{4}/i);
    }
  });
});

describe('Google Chat with threads: a digest is a thread', () => {
  it('a parent without logins and every login once in its thread, one thread, keyed on the URL', async () => {
    const { world, chat } = await setUp({ credentials: true, threads: true, threshold: 1 });
    const summary = await world.cycle('credentials');
    const logins = summary.delivery.sent;
    expect(logins).toBeGreaterThan(5);
    const [parent, ...replies] = chat.messages;
    expect(JSON.stringify(parent?.body)).toContain('The logins are in the thread');
    expect(loginsIn([parent as ChatMessage])).toEqual([]);
    expect(replies.length).toBeGreaterThanOrEqual(1);
    expect(new Set(chat.messages.map((m) => m.thread)).size).toBe(1);
    expect(chat.ignoredKeys).toEqual([]);
    const listed = loginsIn(replies);
    expect(listed).toHaveLength(logins);
    expect(new Set(listed).size).toBe(logins);
    expect(chat.live).toEqual([]);
  });

  it.each([
    ['parent-posted', 1, 0],
    ['reply-posted', 0, 1],
    ['accepted', 0, 0],
  ] as const)(
    'a crash after Google accepted a message (%s) repeats at most that one, in the same thread',
    async (step, parents, replies) => {
      const { world, chat } = await setUp({ credentials: true, threads: true, threshold: 1 });
      let crashed = false;
      const crash = (at: string) => {
        if (at === step && !crashed) {
          crashed = true;
          throw new Error(`crash at ${at}`);
        }
      };
      world.runtime.deliver.threadCheckpoint = crash;
      world.runtime.deliver.checkpoint = crash;
      const first = await world.cycle('credentials');
      expect(crashed).toBe(true);
      expect(first.delivery.destinations.find((d) => d.destination === 'chat')?.status).toBe('failed');
      const second = await world.deliver();
      expect(second.destinations.find((d) => d.destination === 'chat')?.status).toBe('done');
      const records = await world.runtime.deliveries.list({
        status: 'sent',
        destinations: ['chat'],
        limit: 1000,
      });
      const logins = records.length;
      expect(logins).toBeGreaterThan(5);
      // One thread: a repeated parent joins its own thread by its key.
      expect(new Set(chat.messages.map((m) => m.thread)).size).toBe(1);
      const parentsPosted = chat.messages.filter((m) =>
        JSON.stringify(m.body).includes('The logins are in the thread'),
      );
      expect(parentsPosted).toHaveLength(1 + parents);
      const repliesPosted = chat.messages.length - parentsPosted.length;
      const distinct = new Set(chat.messages.map((m) => JSON.stringify(m.body))).size;
      expect(chat.messages.length - distinct).toBe(parents + replies);
      const listed = loginsIn(chat.messages);
      expect(new Set(listed).size).toBe(logins);
      expect(repliesPosted).toBeGreaterThanOrEqual(1);
      expect(chat.live).toEqual([]);
    },
  );
});
