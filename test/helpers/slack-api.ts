/**
 * A stand-in for Slack's Web API, for tests of the Slack-app destination: `chat.postMessage` and
 * `chat.update` over real HTTP, answering as Slack does (HTTP 200 with `{"ok": true, "channel",
 * "ts"}` or `{"ok": false, "error"}`), and keeping every channel's messages and threads, so a test
 * can assert what a channel would show. It checks what Slack checks: the bearer token, the
 * channel (an id, or a name it knows), and the Block Kit limits (50 blocks, 3,000 characters a
 * section text, about 13,000 characters of blocks in all). Tests script refusals and 429s.
 */
import { createHmac } from 'node:crypto';
import { standIn } from './stand-in.ts';

export interface SlackMessage {
  ts: string;
  text: string;
  blocks: unknown[];
  /** The parent's `ts` when the message is a reply in a thread. */
  threadTs?: string;
  /** Every earlier version, oldest first: what `chat.update` replaced. */
  edits: { text: string; blocks: unknown[] }[];
}

/** An answer a test scripts for the next call: an `ok: false` error, or an HTTP status. */
export type SlackScript =
  | { error: string; method?: 'chat.postMessage' | 'chat.update' }
  | { status: number; retryAfter?: number; method?: 'chat.postMessage' | 'chat.update' };

export interface SlackCall {
  method: string;
  at: number;
  body: Record<string, unknown>;
  answer: Record<string, unknown> | string;
  status: number;
}

export interface SlackStandIn {
  /** The Web API base: a destination's `apiUrl`. */
  url: string;
  token: string;
  /** Channel id to its messages, in the order posted (replies included). */
  channels: Map<string, SlackMessage[]>;
  calls: SlackCall[];
  script(...answers: SlackScript[]): void;
  /** The messages of `channel` not in a thread (what the channel itself shows). */
  top(channel?: string): SlackMessage[];
  /** The replies in the thread of `ts`, in order. */
  thread(ts: string, channel?: string): SlackMessage[];
  /** Deletes a message (as a person in the channel could): a later edit meets `message_not_found`. */
  remove(ts: string, channel?: string): void;
  /** Forgets every message, call and scripted answer: a fresh workspace for the next test. */
  reset(): void;
  close(): Promise<void>;
}

export const SLACK_TOKEN = 'xoxb-test-0000000000-abcdefghijklmnop';
export const SLACK_CHANNEL = 'C0123ABCD';

const MAX_BLOCKS = 50;
const MAX_SECTION_TEXT = 3_000;
const MAX_BLOCKS_CHARS = 13_000;
const MAX_TEXT = 40_000;

/** What Slack's Block Kit check would refuse in `blocks`, or undefined. */
function blockProblem(blocks: unknown): string | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks) || blocks.length > MAX_BLOCKS) return 'invalid_blocks';
  for (const block of blocks as { type?: unknown; text?: { text?: unknown } }[]) {
    if (typeof block?.type !== 'string') return 'invalid_blocks';
    const text = block.text?.text;
    if (typeof text === 'string' && text.length > MAX_SECTION_TEXT) return 'invalid_blocks';
  }
  return JSON.stringify(blocks).length > MAX_BLOCKS_CHARS ? 'msg_blocks_too_long' : undefined;
}

export async function startSlackApi(
  options: { token?: string; channels?: Record<string, string> } = {},
): Promise<SlackStandIn> {
  const token = options.token ?? SLACK_TOKEN;
  // Channel name to id: `#soc` posts to C0123ABCD.
  const names = new Map(Object.entries(options.channels ?? { soc: SLACK_CHANNEL }));
  const channels = new Map<string, SlackMessage[]>([...names.values()].map((id) => [id, []]));
  const calls: SlackCall[] = [];
  const scripted: SlackScript[] = [];
  let seq = 0;
  const nextTs = () => {
    seq += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
  };
  const resolve = (channel: unknown): string | undefined => {
    if (typeof channel !== 'string') return undefined;
    if (channel.startsWith('#')) return names.get(channel.slice(1));
    return channels.has(channel) ? channel : undefined;
  };
  const answer = (method: string, body: Record<string, unknown>, auth: string | undefined) => {
    const index = scripted.findIndex((s) => !s.method || s.method === method);
    const script = index >= 0 ? scripted.splice(index, 1)[0] : undefined;
    if (script && 'status' in script)
      return {
        status: script.status,
        retryAfter: script.retryAfter,
        json: { ok: false, error: 'ratelimited' },
      };
    if (script) return { status: 200, json: { ok: false, error: script.error } };
    if (auth !== `Bearer ${token}`)
      return { status: 200, json: { ok: false, error: auth ? 'invalid_auth' : 'not_authed' } };
    const channel = resolve(body.channel);
    if (!channel) return { status: 200, json: { ok: false, error: 'channel_not_found' } };
    const messages = channels.get(channel) as SlackMessage[];
    const text = typeof body.text === 'string' ? body.text : '';
    if (!text && body.blocks === undefined) return { status: 200, json: { ok: false, error: 'no_text' } };
    if (text.length > MAX_TEXT) return { status: 200, json: { ok: false, error: 'msg_too_long' } };
    const problem = blockProblem(body.blocks);
    if (problem) return { status: 200, json: { ok: false, error: problem } };
    const blocks = (body.blocks as unknown[] | undefined) ?? [];
    if (method === 'chat.update') {
      const message = messages.find((m) => m.ts === body.ts);
      if (!message) return { status: 200, json: { ok: false, error: 'message_not_found' } };
      message.edits.push({ text: message.text, blocks: message.blocks });
      message.text = text;
      message.blocks = blocks;
      return { status: 200, json: { ok: true, channel, ts: message.ts, text } };
    }
    const threadTs = typeof body.thread_ts === 'string' ? body.thread_ts : undefined;
    if (threadTs && !messages.some((m) => m.ts === threadTs && !m.threadTs))
      return { status: 200, json: { ok: false, error: 'thread_not_found' } };
    const message: SlackMessage = {
      ts: nextTs(),
      text,
      blocks,
      edits: [],
      ...(threadTs ? { threadTs } : {}),
    };
    messages.push(message);
    return { status: 200, json: { ok: true, channel, ts: message.ts, message: { text } } };
  };

  const server = await standIn((req, raw, res) => {
    const method = (req.url ?? '').replace(/^\//, '').split('?')[0] ?? '';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // Slack says invalid_json; handled below.
    }
    let reply: { status: number; retryAfter?: number; json: Record<string, unknown> };
    if (method !== 'chat.postMessage' && method !== 'chat.update')
      reply = { status: 404, json: { ok: false, error: 'unknown_method' } };
    else if (!/^application\/json/.test(req.headers['content-type'] ?? '') || !raw.startsWith('{'))
      reply = { status: 200, json: { ok: false, error: 'invalid_json' } };
    else reply = answer(method, body, req.headers.authorization);
    calls.push({ method, at: Date.now(), body, answer: reply.json, status: reply.status });
    res.writeHead(reply.status, {
      'Content-Type': 'application/json; charset=utf-8',
      ...(reply.retryAfter !== undefined ? { 'Retry-After': String(reply.retryAfter) } : {}),
    });
    res.end(JSON.stringify(reply.json));
  });
  const first = () => [...channels.keys()][0] as string;
  return {
    url: server.url,
    token,
    channels,
    calls,
    script: (...answers) => scripted.push(...answers),
    top: (channel = first()) => (channels.get(channel) ?? []).filter((m) => !m.threadTs),
    thread: (ts, channel = first()) => (channels.get(channel) ?? []).filter((m) => m.threadTs === ts),
    reset: () => {
      for (const list of channels.values()) list.length = 0;
      calls.length = 0;
      scripted.length = 0;
    },
    remove: (ts, channel = first()) => {
      const list = channels.get(channel) ?? [];
      const i = list.findIndex((m) => m.ts === ts);
      if (i >= 0) list.splice(i, 1);
    },
    close: () => server.close(),
  };
}

/** The headers Slack signs a request to our app with: `v0=` HMAC-SHA256 of `v0:<timestamp>:<body>`. */
export function slackSigned(
  body: string,
  secret: string,
  at = Math.floor(Date.now() / 1000),
): Record<string, string> {
  return {
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Slack-Request-Timestamp': String(at),
    'X-Slack-Signature': `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`,
  };
}
