/**
 * A Mattermost incoming-webhook stand-in for tests: a real local HTTP server (stand-in.ts) at
 * `/hooks/<id>` that answers as Mattermost does. 200 `text/plain` `ok` for a post; errors as JSON `{id, message,
 * detailed_error, request_id, status_code}`: an unknown hook 400 (`web.incoming_webhook.invalid`),
 * a body that is not JSON 400 (`parse`), neither text nor attachments 400 (`text`). A text over
 * 16,383 characters is answered 400 here, where the server would split it into several posts (a
 * split would cut code spans in two): stricter, so a test sees it. Its rate limiter, off unless
 * asked for as on the server, answers 429 `limit exceeded` with `Retry-After` and
 * `X-RateLimit-Reset` in seconds, on `now` (a test's clock). Answers can be scripted; `onPost`
 * runs once a post is recorded and before it is answered (a test kills the sender there, and
 * the post is left unanswered).
 *
 * Every post is also read as the server and the apps would read it (`wouldBeLive`, written apart
 * from the renderer's own check): one whose text could mention, link, embed or format from what
 * it carries is noted in `flagged`, which every test can assert empty.
 */
import { standIn } from './stand-in.ts';

export const MATTERMOST_HOOK = 'xk3mfmattermosthookid4tests';
export const MATTERMOST_MAX = 16_383;
/** The only link label a post may carry: the renderer's own link to the item. */
const OUR_LINK = 'Open in the web app';

export interface MattermostPost {
  text?: string;
  channel?: string;
  username?: string;
  attachments?: unknown[];
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface MattermostStandIn {
  /** The webhook URL (a secret in a config). */
  url: string;
  posted: MattermostPost[];
  requests: { at: number; status: number }[];
  /** Posts whose text could mention, link, embed or format, with why. */
  flagged: { text: string; why: string[] }[];
  script(...answers: Answer[]): void;
  /** Runs once a post is recorded, before its answer; `hang` leaves it unanswered (a sender killed). */
  onPost?: (post: MattermostPost) => undefined | 'hang';
  close(): Promise<void>;
}

const appError = (status: number, id: string, message: string): Answer => ({
  status,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ id, message, detailed_error: '', request_id: 'r1', status_code: status }),
});

/** The server's rewrites before Markdown (app/slack.go, app/webhook.go). */
const REWRITES: [RegExp, string][] = [
  [/<!(channel|here|all)>/, 'a <!channel> form, rewritten to a channel-wide mention'],
  [/<@[a-zA-Z0-9]+>/, 'a <@id>, rewritten to @name'],
  [/<[^\n<|>]+\|[^|\n>]+>/, 'a <url|text>, rewritten to a link'],
];

/** Live in Markdown text outside code spans: what a post may hold of its own is plain words. */
const LIVE: [RegExp, string][] = [
  [/@[\p{L}\p{N}]/u, 'a mention'],
  [/~[a-z0-9]/i, 'a channel link'],
  [/<|\]\(|!\[|\[/, 'a link, an image or HTML'],
  [/https?:\/\/|www\./i, 'a bare URL (auto-linked, fetched for a preview)'],
  [/&#?[a-z0-9]+;/i, 'an HTML entity (turned back into its character)'],
  [/\\[!-/:-@[-`{-~]/, 'a backslash escape (turned back into its character)'],
  [/:[a-z0-9_+-]+:/i, 'an emoji'],
  [/(^|\s)#[\p{L}\p{N}]/u, 'a hashtag'],
  [/\|/, 'a table cell'],
  [/(^|[^*])\*([^*]|$)|_|~~/, 'emphasis other than a ** label'],
];

/**
 * Why `text` could be live once Mattermost has it: the server's rewrites, then Markdown as
 * CommonMark reads code spans (a run of n backticks to the next run of exactly n, within one
 * paragraph), everything outside them checked for mentions, links, images, entities, escapes,
 * URLs, emoji and emphasis. Our one link to the item, on the last line, is allowed.
 */
export function wouldBeLive(text: string): string[] {
  const why: string[] = [];
  for (const [pattern, what] of REWRITES) if (pattern.test(text)) why.push(what);
  let rest = text;
  const link = new RegExp(`\\n\\[${OUR_LINK}\\]\\((https?://[^\\s()]+)\\)$`).exec(rest);
  if (link) rest = rest.slice(0, link.index);
  let outside = '';
  /** Where code spans lie in `rest`, delimiters included. */
  const spans: [number, number][] = [];
  let offset = 0;
  for (const block of rest.split(/(\n[ \t]*\n)/)) {
    let i = 0;
    while (i < block.length) {
      const tick = block.indexOf('`', i);
      if (tick < 0) {
        outside += block.slice(i);
        break;
      }
      outside += block.slice(i, tick);
      let n = 0;
      while (block[tick + n] === '`') n++;
      const close = new RegExp(`(?<!\`)\`{${n}}(?!\`)`, 'g');
      close.lastIndex = tick + n;
      const end = close.exec(block);
      if (!end) {
        why.push('a backtick that opens no code span (the text after it is Markdown)');
        outside += block.slice(tick + n);
        break;
      }
      if (n > 1) why.push('a code span of more than one backtick');
      if (!block.slice(tick + n, end.index).trim()) why.push('an empty code span');
      spans.push([offset + tick, offset + end.index + n]);
      i = end.index + n;
    }
    offset += block.length;
  }
  // The apps' Markdown (marked) closes a `**` at the next `**`, code spans or not.
  const inSpan = (at: number) => spans.some(([from, to]) => at >= from && at < to);
  for (let at = rest.indexOf('**'); at >= 0; ) {
    const closer = rest.indexOf('**', at + 2);
    if (closer < 0) break;
    if (!inSpan(at) && inSpan(closer)) why.push('a ** that the apps would close inside a code span');
    at = inSpan(at) ? rest.indexOf('**', at + 2) : rest.indexOf('**', closer + 2);
  }
  const lines = outside.replace(/^#{1,6} /gm, '');
  for (const [pattern, what] of LIVE) if (pattern.test(lines)) why.push(`${what} outside code spans`);
  return why;
}

/** Characters as the server counts them (runes). */
const runes = (text: string) => [...text].length;

export async function startMattermost(
  options: { now?: () => number; perSecond?: number; burst?: number } = {},
): Promise<MattermostStandIn> {
  const now = options.now ?? Date.now;
  const queue: Answer[] = [];
  // The rate limiter, as throttled's GCRA: a request is let through when the bucket has a token.
  const interval = options.perSecond ? 1_000 / options.perSecond : 0;
  let theoretical = 0;
  const stand: MattermostStandIn = {
    url: '',
    posted: [],
    requests: [],
    flagged: [],
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, body, res) => {
    const at = now();
    const answer = (given: Answer) => {
      stand.requests.push({ at, status: given.status });
      res.writeHead(given.status, { 'Content-Type': 'application/json', ...given.headers });
      res.end(given.body);
    };
    const scripted = queue.shift();
    if (scripted) return answer(scripted);
    if (interval) {
      const burst = (options.burst ?? 0) * interval;
      const next = Math.max(theoretical, at) + interval;
      if (next - at > burst + interval) {
        const wait = Math.ceil((next - interval - burst - at) / 1_000);
        return answer({
          status: 429,
          headers: {
            'Content-Type': 'text/plain',
            'Retry-After': String(wait),
            'X-RateLimit-Reset': String(wait),
            'X-RateLimit-Remaining': '0',
          },
          body: 'limit exceeded\n',
        });
      }
      theoretical = next;
    }
    const hook = /^\/hooks\/([a-z0-9]+)$/.exec((req.url ?? '').split('?')[0] ?? '');
    if (req.method !== 'POST' || !hook)
      return answer(appError(404, 'api.context.404.app_error', 'Not found'));
    let post: MattermostPost;
    try {
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new Error('not JSON');
      post = JSON.parse(body) as MattermostPost;
      if (!post || typeof post !== 'object') throw new Error('not an object');
    } catch {
      return answer(appError(400, 'web.incoming_webhook.parse.app_error', 'Unable to parse incoming data.'));
    }
    if (hook[1] !== MATTERMOST_HOOK)
      return answer(appError(400, 'web.incoming_webhook.invalid.app_error', 'Invalid webhook.'));
    if (!post.text && !post.attachments)
      return answer(appError(400, 'web.incoming_webhook.text.app_error', 'No text specified.'));
    if (typeof post.text === 'string' && runes(post.text) > MATTERMOST_MAX)
      return answer(
        appError(400, 'standin.split', `text of ${runes(post.text)} characters: the server would split it`),
      );
    stand.posted.push(post);
    const why = wouldBeLive(post.text ?? '');
    if (why.length) stand.flagged.push({ text: (post.text ?? '').slice(0, 300), why });
    if (stand.onPost?.(post) === 'hang') return;
    return answer({ status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'ok' });
  });
  stand.url = `${server.url}/hooks/${MATTERMOST_HOOK}`;
  return stand;
}
