/**
 * A Discord webhook stand-in for tests: a real local HTTP server at `/api/webhooks/<id>/<token>`
 * that answers as Discord does (docs/destinations/discord.md). 204 for a message it posts; 401 for a wrong
 * token, 404 for an unknown webhook; 400 `Invalid Form Body` for a message over an embed limit. A
 * bucket of 5 messages in 2 s (on `now`, so a test's clock can drive it) and the `X-RateLimit-*`
 * headers on every answer; past the bucket, 429 with `Retry-After` and a JSON `retry_after`. A
 * message without `allowed_mentions: {"parse": []}` is posted, as Discord would, and noted in
 * `pinged`, which every test can assert empty. Answers can be scripted.
 */

import { DISCORD_LIMITS, type DiscordPayload, embedChars } from '../../lib/destinations/discord/limits.ts';
import { standIn } from './stand-in.ts';

export const DISCORD_TOKEN = 'discord-webhook-token-for-tests';

export interface DiscordStandIn {
  /** The webhook URL, with its token. */
  url: string;
  posted: DiscordPayload[];
  requests: { at: number; status: number }[];
  /** Messages that would have pinged: no `allowed_mentions: {"parse": []}`. */
  pinged: string[];
  script(...answers: { status: number; body?: unknown; headers?: Record<string, string> }[]): void;
  close(): Promise<void>;
}

/** Why Discord would refuse the message, or undefined. */
function formError(message: DiscordPayload): string | undefined {
  if (!Array.isArray(message.embeds) || (!message.embeds.length && !message.content)) return 'empty message';
  if ((message.content?.length ?? 0) > DISCORD_LIMITS.content) return 'content: too long';
  if (message.embeds.length > DISCORD_LIMITS.embeds) return 'embeds: too many';
  let total = 0;
  for (const e of message.embeds) {
    total += embedChars(e);
    if (e.title.length > DISCORD_LIMITS.title) return 'embeds.title: too long';
    if ((e.description?.length ?? 0) > DISCORD_LIMITS.description) return 'embeds.description: too long';
    if ((e.fields?.length ?? 0) > DISCORD_LIMITS.fields) return 'embeds.fields: too many';
    for (const f of e.fields ?? [])
      if (!f.name || f.name.length > DISCORD_LIMITS.fieldName || !f.value || f.value.length > 1_024)
        return 'embeds.fields: a name or value of the wrong length';
  }
  return total > DISCORD_LIMITS.total ? 'embeds: over 6000 characters in all' : undefined;
}

export async function startDiscord(
  options: { now?: () => number; bucket?: number; windowMs?: number } = {},
): Promise<DiscordStandIn> {
  const now = options.now ?? Date.now;
  const bucket = options.bucket ?? 5;
  const windowMs = options.windowMs ?? 2_000;
  const queue: { status: number; body?: unknown; headers?: Record<string, string> }[] = [];
  let windowStart = 0;
  let used = 0;
  const stand: DiscordStandIn = {
    url: '',
    posted: [],
    requests: [],
    pinged: [],
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, text, res) => {
    const at = now();
    if (at - windowStart >= windowMs) {
      windowStart = at;
      used = 0;
    }
    const resetAfter = Math.max(0, windowStart + windowMs - at) / 1000;
    const limits = (remaining: number) => ({
      'X-RateLimit-Limit': String(bucket),
      'X-RateLimit-Remaining': String(remaining),
      'X-RateLimit-Reset-After': resetAfter.toFixed(3),
    });
    const answer = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      stand.requests.push({ at, status });
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const scripted = queue.shift();
    if (scripted) return answer(scripted.status, scripted.body, scripted.headers);
    const match = /^\/api\/webhooks\/(\d+)\/([^/?]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (req.method !== 'POST' || !match) return answer(404, { message: 'Unknown Webhook', code: 10015 });
    if (match[2] !== DISCORD_TOKEN) return answer(401, { message: 'Invalid Webhook Token', code: 50027 });
    if (used >= bucket) {
      const retry = Math.max(0.001, resetAfter);
      return answer(
        429,
        { message: 'You are being rate limited.', retry_after: retry, global: false },
        { ...limits(0), 'Retry-After': String(Math.ceil(retry)) },
      );
    }
    let message: DiscordPayload;
    try {
      message = JSON.parse(text) as DiscordPayload;
    } catch {
      return answer(400, { message: 'Cannot send an empty message', code: 50006 });
    }
    const error = formError(message);
    if (error)
      return answer(400, { message: 'Invalid Form Body', code: 50035, errors: error }, limits(bucket - used));
    used++;
    const parse = message.allowed_mentions?.parse;
    if (!Array.isArray(parse) || parse.length) stand.pinged.push(message.embeds[0]?.title ?? '');
    stand.posted.push(message);
    return answer(204, undefined, limits(bucket - used));
  });
  stand.url = `${server.url}/api/webhooks/1234567890/${DISCORD_TOKEN}`;
  return stand;
}
