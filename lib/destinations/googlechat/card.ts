/**
 * The pieces of a Google Chat card message (`cardsV2`) and the rule that keeps upstream text inert.
 *
 * The invariant, which `googleChatProblems` and the test stand-in check on every message:
 * - a message is one card and an optional `thread`; it never has `text` (Chat formats `text` as
 *   Markdown-like markup with live `<users/…>` mentions and `<url|label>` links, and documents no
 *   escape for it), nor `fallbackText`, nor a `textSyntax` that would turn card text into Markdown;
 * - upstream text appears only in the HTML text of a `textParagraph` or a `decoratedText`, where it
 *   is HTML-escaped (`&`, `<`, `>`, `"`, `'`), its controls stripped, and every `://` defanged as
 *   `[:]//` (visibly, as analysts write a URL not to be followed; an invisible character would make
 *   a look-alike): so `<users/all>`, `<a href=…>` and `<b>` from the wild arrive as `&lt;…`
 *   and show as themselves, and a URL from the wild cannot be auto-linked;
 * - the only markup in those texts is ours, from a closed set: `<b>`, `<i>`, `<br>` and
 *   `<font color="#rrggbb">` (with their closing tags). No `<a>` at all: our one link to the item is
 *   an `openLink` button with our own label;
 * - every other string (the card's header, section headers, button labels) is ours: fixed words,
 *   severities and counts, holding no `<`, `>` or `&`.
 * Size: a message is at most 32,000 bytes of JSON; renderers aim under CHAT_BUDGET_BYTES, measured
 * in UTF-8 bytes of the body as sent, and `fitChat` drops what is still over, saying so.
 */
import {
  escapeHtml,
  parseHighlight,
  perChar,
  renderSegments,
  type Segment,
  stripControl,
} from '../../render/escape.ts';

/** What Google Chat accepts in one message, in bytes of its JSON body. */
export const CHAT_MAX_BYTES = 32_000;
/** What renderers aim for: room under the limit for the safety net's note. */
export const CHAT_BUDGET_BYTES = 30_000;
/** Widgets one card may hold. */
export const CHAT_MAX_WIDGETS = 100;
/**
 * Characters of one text widget. Only `text` is documented to fail past 4,096; card texts are kept
 * under it too, since nothing says they may be longer.
 */
export const PARAGRAPH_MAX = 4_000;
/** A link (the item's, a line's) longer than this is left out rather than crowd the card. */
export const URL_MAX = 2_000;

export interface ChatButton {
  text: string;
  onClick: { openLink: { url: string } };
}
export type ChatWidget =
  | { textParagraph: { text: string } }
  | { decoratedText: { text: string; wrapText: true; button?: ChatButton } }
  | { buttonList: { buttons: ChatButton[] } };
export interface ChatSection {
  header?: string;
  widgets: ChatWidget[];
}
export interface ChatCard {
  header: { title: string; subtitle?: string };
  sections: ChatSection[];
}
/** The body of a POST to a space's incoming webhook, as we send it: one card, maybe a thread. */
export interface GoogleChatPayload {
  cardsV2: [{ cardId: string; card: ChatCard }];
  /** The thread it opens or joins (with `messageReplyOption` on the request's URL). */
  thread?: { threadKey: string };
}

/** The closed set of tags our card texts use; anything else that looks like a tag came from outside. */
export const OUR_TAGS = /<\/?b>|<\/?i>|<br>|<font color="#[0-9a-f]{6}">|<\/font>/g;

/** Size of a value in a JSON body, in bytes. */
export function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * A URL from the wild no longer reads as one to an auto-linker: `https[:]//…`, the usual defanged
 * form. A highlight's bold may fall inside the `://`, so our tags there are looked through.
 */
const unlinked = (html: string) => html.replace(/:((?:<\/?b>)*\/(?:<\/?b>)*\/)/g, '[:]$1');

const lineEscape = perChar((c) => escapeHtml(stripControl(c)));
const linesEscape = perChar((c) => {
  const kept = stripControl(c, { lines: true });
  return kept === '\n' ? '<br>' : escapeHtml(kept);
});

/** Plain upstream text as card HTML on one line, clipped to `max` characters with a note. */
export function chatText(text: string, max?: number, note?: (more: number) => string): string {
  return unlinked(
    renderSegments([{ text, marked: false }], { escape: lineEscape, open: '', close: '' }, max, note),
  );
}

/** Plain upstream text as card HTML keeping its line breaks (`<br>`): notes, notice bodies. */
export function chatLines(text: string, max?: number, note?: (more: number) => string): string {
  return unlinked(
    renderSegments([{ text, marked: false }], { escape: linesEscape, open: '', close: '' }, max, note),
  );
}

/** Upstream highlight text as card HTML: escaped, `<mark>` shown bold, one line, clipped to `max`. */
export function chatHighlight(text: string, max?: number, note?: (more: number) => string): string {
  const segments: Segment[] = parseHighlight(text);
  return unlinked(renderSegments(segments, { escape: lineEscape, open: '<b>', close: '</b>' }, max, note));
}

/** `Label: value` in a card text, the value already escaped (ours, or from `chatText`). */
export const field = (label: string, value: string) => `<b>${label}:</b> ${value || '–'}`;
export const muted = (html: string) => `<font color="#5f6368">${html}</font>`;

export const paragraph = (text: string): ChatWidget => ({ textParagraph: { text: text || '–' } });
export const button = (text: string, url: string): ChatButton => ({ text, onClick: { openLink: { url } } });
export const buttons = (...list: ChatButton[]): ChatWidget => ({ buttonList: { buttons: list } });
/** One line of a list, with its own button when it has a usable link. */
export function line(text: string, link?: { label: string; url: string | undefined }): ChatWidget {
  const url = usable(link?.url);
  return {
    decoratedText: { text, wrapText: true, ...(url && link ? { button: button(link.label, url) } : {}) },
  };
}

export function usable(url: string | undefined, max = URL_MAX): string | undefined {
  return url && url.length <= max ? url : undefined;
}

/** The message: one card, and the thread it belongs to when it has one. */
export function chatMessage(
  cardId: string,
  header: ChatCard['header'],
  sections: ChatSection[],
  threadKey?: string,
): GoogleChatPayload {
  const card: ChatCard = { header, sections: sections.filter((s) => s.widgets.length) };
  return { cardsV2: [{ cardId, card }], ...(threadKey ? { thread: { threadKey } } : {}) };
}

/**
 * Lines (card HTML) joined with `<br>` into as few paragraphs as fit PARAGRAPH_MAX characters each,
 * a line never cut between two of them.
 */
export function packParagraphs(lines: string[]): ChatWidget[] {
  const out: ChatWidget[] = [];
  let current = '';
  for (const text of lines) {
    if (current && current.length + 4 + text.length > PARAGRAPH_MAX) {
      out.push(paragraph(current));
      current = '';
    }
    current = current ? `${current}<br>${text}` : text;
  }
  if (current) out.push(paragraph(current));
  return out;
}

/**
 * Bytes kept for the wrappers `packParagraphs` adds: a line is at most about 2,000 characters, so a
 * paragraph holds at least 2,000 of the budget's, and each wrapper costs about 30 bytes.
 */
export const PACKING_RESERVE = 600;

/** Bytes `text` adds to a JSON body as part of a paragraph (its `<br>` included). */
export function lineBytes(text: string): number {
  return bytesOf(text) - 2 + 4;
}

/**
 * `units` in parts, in order, each within `room` bytes (`size` of each) and `max` units, at least
 * one unit each: a thread's replies.
 */
export function parts<U>(units: U[], size: (unit: U) => number, room: number, max: number): U[][] {
  const out: U[][] = [];
  let current: U[] = [];
  let left = room;
  for (const unit of units) {
    const cost = size(unit);
    if (current.length && (cost > left || current.length >= max)) {
      out.push(current);
      current = [];
      left = room;
    }
    current.push(unit);
    left -= cost;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * The first part of `values` only, each made by `make` when it is looked at: a digest of 5,000
 * lists a few dozen, and makes no more lines than that.
 */
export function firstPart<T, U>(
  values: T[],
  make: (value: T) => U,
  size: (made: U) => number,
  room: number,
  max: number,
): U[] {
  const out: U[] = [];
  let left = room;
  for (const value of values) {
    if (out.length >= max) break;
    const made = make(value);
    left -= size(made);
    if (left < 0) break;
    out.push(made);
  }
  return out;
}

const widgetCount = (p: GoogleChatPayload) =>
  p.cardsV2[0].card.sections.reduce((n, s) => n + s.widgets.length, 0);

/**
 * The safety net after the renderers' own budgets: a message over the byte budget or the widget
 * limit loses widgets from its end (its first section stays), and a note says how many went.
 */
export function fitChat(payload: GoogleChatPayload): GoogleChatPayload {
  const fits = (p: GoogleChatPayload) =>
    bytesOf(p) <= CHAT_BUDGET_BYTES && widgetCount(p) <= CHAT_MAX_WIDGETS;
  if (fits(payload)) return payload;
  const [{ cardId, card }] = payload.cardsV2;
  const sections = card.sections.map((s) => ({ ...s, widgets: [...s.widgets] }));
  let dropped = 0;
  const build = () =>
    chatMessage(
      cardId,
      card.header,
      [...sections, { widgets: [paragraph(`<i>… (truncated, ${dropped} more parts not shown)</i>`)] }],
      payload.thread?.threadKey,
    );
  while (!fits(build())) {
    const last = sections.at(-1);
    if (!last || (sections.length === 1 && last.widgets.length <= 1)) break;
    last.widgets.pop();
    dropped++;
    if (!last.widgets.length) sections.pop();
  }
  return build();
}
