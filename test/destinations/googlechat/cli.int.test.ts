/**
 * Google Chat through the CLI (in process, the stand-in over HTTP; the emulator and dynalite for
 * `poll`): `config validate` accepts it and renders the samples through it; `destinations test`
 * sends the marked test card (with threads, and a reply in its thread) and says how it went;
 * `preview` shows the cards and a digest's thread without the webhook's key or token; `poll
 * events --once` sends a digest as a thread, each event once. Real waits: the space's pace.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/cli/run.ts';
import { TEST_MARK } from '../../../lib/render/notice.ts';
import { sampleHostileEvent } from '../../../lib/render/samples.ts';
import type { EventItem } from '../../../lib/upstream/schemas.ts';
import { useDynalite } from '../../helpers/dynamo.ts';
import { useEmulator } from '../../helpers/emulator.ts';
import { CHAT_KEY, CHAT_TOKEN, type GoogleChatStandIn, startGoogleChat } from '../../helpers/googlechat.ts';
import { captureIo } from '../../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 12, lateMatchesPerTenant: 0, credentials: 10 });
const db = useDynalite();
let chat: GoogleChatStandIn;
let dir: string;

beforeAll(async () => {
  chat = await startGoogleChat();
  dir = await mkdtemp(join(tmpdir(), 'ea-googlechat-'));
});

async function write(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

/** Until a second since the space's last request: its pace (one a second, across runs), waited only as long as it still asks. */
async function paced() {
  const wait = (chat.requests.at(-1)?.at ?? 0) + 1_000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const io = captureIo(env);
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

const config = (threads: boolean, extra: Record<string, unknown> = {}) => ({
  sources: { tenantEvents: { lookback: 'P30D' } },
  destinations: { chat: { type: 'googlechat', url: { secret: 'chatUrl' }, threads } },
  routes: [{ name: 'all', to: ['chat'] }],
  passwords: 'masked',
  ...extra,
});

describe('config validate', () => {
  it('accepts it and renders the samples through it (a digest as a thread too); warns of a URL in the config', async () => {
    for (const threads of [false, true]) {
      const r = await cli(['config', 'validate', await write(`ok-${threads}.json`, config(threads))]);
      expect(r.err).toBe('');
      expect(r.out).toBe('config OK: 1 route, 1 destination\n');
    }
    const inline = await cli([
      'config',
      'validate',
      await write('inline.json', {
        destinations: {
          chat: { type: 'googlechat', url: 'https://chat.googleapis.com/v1/spaces/AAAA/messages' },
        },
        routes: [{ name: 'all', to: ['chat'] }],
      }),
    ]);
    expect(inline.code).toBe(0);
    expect(inline.err).toContain(
      'warning: destinations.chat.url: a Google Chat webhook URL holds its key and token',
    );
    expect(inline.err).toContain(
      'warning: destinations.chat.url: not the form of a Google Chat incoming webhook',
    );
    const bad = await cli([
      'config',
      'validate',
      await write('bad.json', {
        destinations: { chat: { type: 'googlechat', url: { secret: 'x' }, threads: 'yes' } },
      }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('destinations.chat.threads');
  });
});

describe('destinations test', () => {
  it('the marked test card, and with threads a reply in its thread; no key or token said', async () => {
    const secrets = await write('secrets.json', { chatUrl: chat.url });
    for (const threads of [false, true]) {
      await paced();
      const before = chat.messages.length;
      const env = {
        ALERTS_CONFIG: await write(`test-${threads}.json`, config(threads)),
        SECRETS_FILE: secrets,
      };
      const r = await cli(['destinations', 'test'], env);
      expect(r.code, r.out + r.err).toBe(0);
      expect(r.out).toContain('chat (googlechat): ok (HTTP 200)');
      const sent = chat.messages.slice(before);
      expect(sent[0]?.body).toMatchObject({ cardsV2: [{ card: { header: { title: TEST_MARK } } }] });
      if (threads) {
        expect(r.out).toContain('chat (googlechat): thread reply ok (HTTP 200)');
        expect(sent).toHaveLength(2);
        expect(sent[1]?.thread).toBe(sent[0]?.thread);
      } else expect(sent).toHaveLength(1);
      for (const secret of [CHAT_KEY, CHAT_TOKEN]) expect(r.out + r.err).not.toContain(secret);
    }
    expect(chat.live).toEqual([]);
  });

  it('a revoked webhook: said as Google said it, exit 1, no secret said', async () => {
    const env = {
      ALERTS_CONFIG: await write('revoked.json', config(false)),
      SECRETS_FILE: await write('revoked-secrets.json', {
        chatUrl: chat.url.replace(CHAT_TOKEN, 'revoked-token'),
      }),
    };
    await paced();
    const r = await cli(['destinations', 'test'], env);
    expect(r.code).toBe(1);
    expect(r.out).toContain('chat (googlechat): FAILED, HTTP 403 PERMISSION_DENIED');
    expect(r.out).toContain('refused: fix the destination');
    expect(r.out + r.err).not.toContain(CHAT_KEY);
  });
});

describe('preview', () => {
  it('the card for the hostile sample and a digest as its thread, escaped, without the secret', async () => {
    const env = {
      ALERTS_CONFIG: await write('preview.json', config(true, { digest: { threshold: 1, maxItems: 1 } })),
    };
    const one = await cli(['preview', await write('hostile.json', sampleHostileEvent(new Date()))], env);
    expect(one.code, one.err).toBe(0);
    expect(one.out).toContain('=== chat (googlechat) · routes: all ===');
    expect(one.out).toContain(
      "POST to the Google Chat space's incoming webhook (its URL holds the webhook's key and token, not shown)",
    );
    expect(one.out).toContain('"cardsV2"');
    expect(one.out).toContain('&lt;!channel&gt; &lt;@U123&gt; &lt;https[:]//evil.example|click&gt;');
    expect(one.out).not.toContain('"text": "<!channel>');
    const events = [0, 1, 2].map((i) => ({
      ...sampleHostileEvent(new Date()),
      metadata: { ...sampleHostileEvent(new Date()).metadata, uid: `paste/pastebin/${i}` },
    }));
    const digest = await cli(['preview', await write('digest.json', events)], env);
    expect(digest.code, digest.err).toBe(0);
    expect(digest.out).toContain('--- reply 1 of 1 in its thread ---');
    expect(digest.out).toContain('"threadKey"');
    for (const secret of [CHAT_KEY, CHAT_TOKEN]) expect(one.out + digest.out).not.toContain(secret);
  });
});

describe('poll events --once', () => {
  it('a digest as a thread in the space: every event once, none live', async () => {
    const before = chat.messages.length;
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: await write(
        'poll.json',
        config(true, {
          digest: { threshold: 1, maxItems: 3 },
          upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
        }),
      ),
      SECRETS_FILE: await write('poll-secrets.json', { chatUrl: chat.url }),
    };
    await paced();
    const r = await cli(['poll', 'events', '--once'], env);
    expect(r.code, r.out + r.err).toBe(0);
    const sent = chat.messages.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent.map((m) => m.thread)).size).toBe(1);
    // The card texts alone (each line's button links to its event, with the uid in its URL).
    const texts = JSON.stringify(
      sent.map((m) => m.body),
      (key, value) => (key === 'url' ? undefined : value),
    );
    const uids = emu.running.emulator.dataset
      .tenant('acme')
      .events.map((e) => (e.item as unknown as EventItem).metadata.uid);
    for (const uid of uids) {
      const shown = uid
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;')
        .replace(/"/g, '&quot;');
      expect(texts.split(JSON.stringify(shown).slice(1, -1)).length - 1, uid).toBe(1);
    }
    expect(chat.live).toEqual([]);
    for (const secret of [CHAT_KEY, CHAT_TOKEN]) expect(r.out + r.err).not.toContain(secret);
  });
});
