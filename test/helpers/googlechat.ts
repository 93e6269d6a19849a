/**
 * A Google Chat incoming-webhook stand-in for tests: a real local HTTP server at
 * `/v1/spaces/<space>/messages?key=…&token=…` that checks what Google Chat checks and answers as it
 * does (docs/destinations/googlechat.md): 200 with the message as created (`name`, `thread.name`); 400
 * `INVALID_ARGUMENT` for a wrong key, a body that is not JSON, over 32,000 bytes, a `text` of 4,096
 * characters or more, a malformed `cardsV2` (a card of more than 100 widgets, a widget it does not
 * know, an unknown field); 403 `PERMISSION_DENIED` for a wrong token; 404 for an unknown space.
 * A thread key joins the space's thread of that key only with `messageReplyOption` on the URL
 * (without it, Google ignores the key: a new thread each, noted in `ignoredKeys`). One message a
 * second per space, whichever webhook sends it (on `now`, so a test's clock can drive it); past it,
 * 429 `RESOURCE_EXHAUSTED`. Answers can be scripted.
 *
 * What it holds the product to, apart from what Google refuses: no upstream text can come alive. A
 * message is `live` (noted with why, so every test can assert the list empty) when it has `text`,
 * `fallbackText` or a `textSyntax`; when a card's HTML text (a paragraph, a decorated text, a
 * section header) holds markup outside `<b>`, `<i>`, `<br>`, `<font color="#rrggbb">` and their
 * closing tags (so `<users/all>`, `<a href>`), a bare `&`, or a `://` a client could auto-link; or
 * when a card title or a button label holds `<`, `>` or `&`.
 */
import { standIn } from './stand-in.ts';

export const CHAT_KEY = 'AIzaSy-google-chat-key-for-tests';
export const CHAT_TOKEN = 'google-chat-webhook-token-for-tests';
export const CHAT_SPACE = 'AAAAsoc';
const MAX_BYTES = 32_000;
const REPLY_OPTIONS = ['REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD', 'REPLY_MESSAGE_OR_FAIL'];

export interface ChatMessage {
  /** `spaces/<space>/messages/<id>` */
  name: string;
  space: string;
  /** The token of the webhook that sent it. */
  token: string;
  /** `spaces/<space>/threads/<id>` */
  thread: string;
  body: Record<string, unknown>;
  at: number;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

export interface GoogleChatStandIn {
  /** The webhook of CHAT_SPACE, with its key and token. */
  url: string;
  /** Another webhook (its own token) of `space`: the space's rate is shared with every other. */
  webhook(space: string, token?: string): string;
  /** Accepted messages, in order. */
  messages: ChatMessage[];
  requests: { at: number; status: number; space?: string }[];
  /** Messages where upstream text could mention, link or format, each with why. */
  live: string[];
  /** Thread keys sent without `messageReplyOption`: Google ignored them. */
  ignoredKeys: string[];
  /** The messages of one thread, in order (its first opened it). */
  thread(name: string): ChatMessage[];
  script(...answers: Answer[]): void;
  close(): Promise<void>;
}

const error = (code: number, status: string, message: string): Answer => ({
  status: code,
  body: { error: { code, message, status } },
});

const OURS = /<\/?b>|<\/?i>|<br>|<font color="#[0-9a-fA-F]{6}">|<\/font>/g;
const ENTITY = /&(amp|lt|gt|quot|#39|#\d+|#x[0-9a-fA-F]+);/g;

/** Why an HTML text of a card could hold live markup, or undefined. */
function liveHtml(text: string): string | undefined {
  const bare = text.replace(OURS, '');
  if (/<users\//i.test(bare)) return 'a mention (<users/…>)';
  if (/<a[\s>]/i.test(bare)) return 'a link (<a …>)';
  if (/[<>]/.test(bare)) return 'markup that is not ours';
  const plain = bare.replace(ENTITY, '');
  if (plain.includes('&')) return 'a bare &';
  if (plain.includes('://')) return 'a URL a client could auto-link';
  return undefined;
}

/** Where the message could be live, or nothing. */
function liveness(message: Record<string, unknown>): string[] {
  const out: string[] = [];
  if ('text' in message) out.push('text is set (Markdown-like, mentions and links live, no escape)');
  if ('fallbackText' in message) out.push('fallbackText is set');
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const at = `${path}.${k}`;
        if (k === 'textSyntax') out.push(`${at}: card text as Markdown`);
        if (typeof v !== 'string') {
          walk(v, at);
          continue;
        }
        // The card's title and a button's label show their text as it is: no markup at all.
        const own =
          (path.endsWith('.card.header') && (k === 'title' || k === 'subtitle')) ||
          (k === 'text' && /\.(buttons\[\d+\]|button)$/.test(path));
        if (own) {
          if (/[<>&]/.test(v)) out.push(`${at}: <, > or & in a title or a label`);
        } else if (k === 'text' || k === 'topLabel' || k === 'bottomLabel' || k === 'header') {
          const why = liveHtml(v);
          if (why) out.push(`${at}: ${why}`);
        }
      }
    }
  };
  walk(message.cardsV2, 'cardsV2');
  return out;
}

const WIDGETS = new Set(['textParagraph', 'decoratedText', 'buttonList', 'divider', 'image', 'columns']);
const MESSAGE_FIELDS = new Set([
  'text',
  'cardsV2',
  'thread',
  'fallbackText',
  'accessoryWidgets',
  'privateMessageViewer',
]);

/** Why Google Chat would refuse the message's shape, or undefined. */
function shapeError(message: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(message))
    if (!MESSAGE_FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}"`;
  if (message.text !== undefined && (typeof message.text !== 'string' || message.text.length >= 4_096))
    return 'text: longer than 4096 characters';
  const cards = message.cardsV2;
  if (cards === undefined) return message.text ? undefined : 'Message cannot be empty.';
  if (!Array.isArray(cards) || !cards.length) return 'cardsV2: expected a list of cards';
  for (const c of cards as { cardId?: unknown; card?: { sections?: unknown } }[]) {
    if (typeof c?.cardId !== 'string' || !c.card || typeof c.card !== 'object')
      return 'cardsV2: a card needs cardId and card';
    const sections = c.card.sections;
    if (!Array.isArray(sections) || !sections.length) return 'card: at least one section';
    let widgets = 0;
    for (const s of sections as { widgets?: unknown }[]) {
      if (!Array.isArray(s?.widgets) || !s.widgets.length) return 'section: at least one widget';
      for (const w of s.widgets as Record<string, unknown>[]) {
        widgets++;
        const kinds = Object.keys(w ?? {});
        if (kinds.length !== 1 || !WIDGETS.has(kinds[0] as string))
          return `widget: unknown ${kinds.join(',')}`;
        const inner = w[kinds[0] as string] as Record<string, unknown>;
        if (kinds[0] === 'textParagraph' && typeof inner?.text !== 'string') return 'textParagraph: text';
        if (kinds[0] === 'decoratedText' && typeof inner?.text !== 'string') return 'decoratedText: text';
        if (kinds[0] === 'buttonList') {
          const buttons = inner?.buttons as { text?: unknown; onClick?: { openLink?: { url?: unknown } } }[];
          if (!Array.isArray(buttons) || !buttons.length) return 'buttonList: buttons';
          for (const b of buttons)
            if (typeof b?.text !== 'string' || typeof b.onClick?.openLink?.url !== 'string')
              return 'button: text and onClick';
        }
      }
    }
    if (widgets > 100) return `card: ${widgets} widgets, more than 100`;
  }
  const thread = message.thread as { threadKey?: unknown; name?: unknown } | undefined;
  if (thread !== undefined && typeof thread?.threadKey !== 'string' && typeof thread?.name !== 'string')
    return 'thread: threadKey or name';
  return undefined;
}

export async function startGoogleChat(
  options: { now?: () => number; intervalMs?: number; retryAfter?: string } = {},
): Promise<GoogleChatStandIn> {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? 1_000;
  const queue: Answer[] = [];
  const tokens = new Map<string, Set<string>>([[CHAT_SPACE, new Set([CHAT_TOKEN])]]);
  const lastAt = new Map<string, number>();
  const threadsByKey = new Map<string, string>();
  let ids = 0;
  const stand: GoogleChatStandIn = {
    url: '',
    webhook: (space, token = CHAT_TOKEN) => {
      tokens.set(space, new Set([...(tokens.get(space) ?? []), token]));
      return `${server.url}/v1/spaces/${space}/messages?key=${CHAT_KEY}&token=${encodeURIComponent(token)}`;
    },
    messages: [],
    requests: [],
    live: [],
    ignoredKeys: [],
    thread: (name) => stand.messages.filter((m) => m.thread === name),
    script: (...answers) => queue.push(...answers),
    close: () => server.close(),
  };
  const server = await standIn((req, body, res, raw) => {
    const at = now();
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const space = /^\/v1\/spaces\/([^/]+)\/messages$/.exec(url.pathname)?.[1];
    const answer = ({ status, body: out, headers = {} }: Answer) => {
      stand.requests.push({ at, status, ...(space ? { space } : {}) });
      res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', ...headers });
      res.end(out === undefined ? undefined : JSON.stringify(out));
    };
    const scripted = queue.shift();
    if (scripted) return answer(scripted);
    if (!space || !tokens.has(space))
      return answer(error(404, 'NOT_FOUND', 'Requested entity was not found.'));
    if (req.method !== 'POST') return answer(error(405, 'METHOD_NOT_ALLOWED', 'POST only.'));
    if (url.searchParams.get('key') !== CHAT_KEY)
      return answer(error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.'));
    if (!tokens.get(space)?.has(url.searchParams.get('token') ?? ''))
      return answer(error(403, 'PERMISSION_DENIED', 'The caller does not have permission'));
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
      return answer(error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Content-Type'));
    if (raw.length > MAX_BYTES)
      return answer(
        error(400, 'INVALID_ARGUMENT', `Message too long: ${raw.length} bytes, at most ${MAX_BYTES}.`),
      );
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return answer(error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
    }
    if (!message || typeof message !== 'object' || Array.isArray(message))
      return answer(error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
    const shape = shapeError(message);
    if (shape) return answer(error(400, 'INVALID_ARGUMENT', shape));
    const option = url.searchParams.get('messageReplyOption');
    if (option !== null && !REPLY_OPTIONS.includes(option) && option !== 'MESSAGE_REPLY_OPTION_UNSPECIFIED')
      return answer(error(400, 'INVALID_ARGUMENT', `Invalid value at 'message_reply_option' (${option})`));
    const last = lastAt.get(space);
    if (last !== undefined && at - last < intervalMs)
      return answer({
        ...error(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'),
        ...(options.retryAfter ? { headers: { 'Retry-After': options.retryAfter } } : {}),
      });
    const key = (message.thread as { threadKey?: string } | undefined)?.threadKey;
    const replying = option !== null && REPLY_OPTIONS.includes(option);
    if (key && !replying) stand.ignoredKeys.push(key);
    let thread = key && replying ? threadsByKey.get(`${space} ${key}`) : undefined;
    if (!thread && key && option === 'REPLY_MESSAGE_OR_FAIL')
      return answer(error(404, 'NOT_FOUND', 'Thread not found.'));
    ids++;
    thread ??= `spaces/${space}/threads/t${ids}`;
    if (key && replying) threadsByKey.set(`${space} ${key}`, thread);
    lastAt.set(space, at);
    const name = `spaces/${space}/messages/m${ids}.t${ids}`;
    for (const why of liveness(message)) stand.live.push(`${name}: ${why}`);
    stand.messages.push({
      name,
      space,
      token: url.searchParams.get('token') ?? '',
      thread,
      body: message,
      at,
    });
    return answer({
      status: 200,
      body: {
        name,
        sender: { name: 'users/114022495153014004089', type: 'BOT' },
        createTime: new Date(at).toISOString(),
        ...message,
        thread: { name: thread, ...(key ? { threadKey: key } : {}) },
        space: { name: `spaces/${space}`, type: 'ROOM' },
      },
    });
  });
  stand.url = stand.webhook(CHAT_SPACE);
  return stand;
}
