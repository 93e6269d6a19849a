/**
 * Escaping for every place upstream text lands: Slack mrkdwn, HTML, plain text and the terminal.
 * Upstream text is written by strangers (forum posts, pastes, leak names), so it is always escaped,
 * and clipping happens on the raw text before escaping, never in the middle of an entity. Its
 * control and bidi characters are stripped in every medium (`stripControl`): an ESC sequence can
 * retitle a terminal, and U+202E can make a chat message show a file name or a URL backwards.
 *
 * Highlights: the upstream wraps matched text in `<mark>…</mark>`. That one tag is parsed;
 * everything else, including other tags and entities such as `&amp;`, is text and is shown
 * literally (`&amp;` reaches Slack as `&amp;amp;`, which Slack displays as `&amp;`).
 *
 * Bold in Slack: a highlight becomes `*…*`. Inside it, `*` would close the bold early and a
 * backtick would open a code span that swallows the closing `*`, so those two are replaced by
 * look-alikes (`∗` U+2217, `ˋ` U+02CB). `_` and `~` are left alone: they cannot end the bold, an
 * unpaired one shows literally, and underscores are common in the very text an analyst must read
 * exactly (logins, hostnames). Newlines inside a highlight become spaces (bold cannot span lines),
 * and whitespace at a highlight's edges moves outside the `*` (Slack ignores `* x*`). None of this
 * is a security boundary: escaping `&`, `<`, `>` is what stops pings and forged links.
 */

import { wellFormed } from '../text.ts';

/** Slack mrkdwn: only `&`, `<` and `>` are special (docs/destinations/slack.md). */
export function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

// C0 and C1 controls (ESC, and the 8-bit CSI U+009B among them), DEL, the bidi controls that can
// make a terminal, a subject line or a chat message lie about what it shows (U+202E turns
// `exe.txt` into `txt.exe`), and the invisible characters that make look-alike names
// (`exa\u200bmple.com`): zero-width space and non-joiner, word joiner and invisible operators,
// the byte-order mark, the soft hyphen, the Mongolian vowel separator. The zero-width joiner is
// kept where it joins emoji (`visible`) and removed everywhere else.
// On one line, whitespace controls become a space so an upstream newline cannot forge a line.
const LINE_BREAKING = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const CONTROL =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// Where the format allows line breaks: CR goes (CRLF becomes LF), the rarer breaks become LF, and
// LF and tab are the only controls left.
const OTHER_BREAKS = /[\v\f\u0085\u2028\u2029]/g;
const CONTROL_BUT_LINES =
  /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// A zero-width joiner that does not join two emoji (👩🏽‍💻 keeps its own).
const STRAY_JOINER =
  /(?<!\p{Extended_Pictographic}\ufe0f?[\u{1F3FB}-\u{1F3FF}]?)\u200d|\u200d(?!\p{Extended_Pictographic})/gu;

/**
 * Upstream text as it may be shown at all: well-formed (a lone UTF-16 surrogate, which a strict
 * JSON parser at a destination may refuse, becomes U+FFFD) and without a zero-width joiner that
 * joins no emoji. Whole text only: whether a joiner joins emoji depends on its neighbours.
 */
export function visible(text: string): string {
  const formed = wellFormed(text);
  return formed.includes('\u200d') ? formed.replace(STRAY_JOINER, '') : formed;
}

/**
 * Upstream text with its control and bidi characters removed: one line (line breaks become
 * spaces) for a terminal, a mail header or a single-line field; with `lines`, `\n` and `\t` kept,
 * for a format where a line break is only a line break (Slack mrkdwn, an HTML body). Every
 * renderer goes through this one function, whatever it escapes afterwards.
 */
export function stripControl(text: string, { lines = false }: { lines?: boolean } = {}): string {
  const formed = wellFormed(text);
  if (!lines) return formed.replace(LINE_BREAKING, ' ').replace(CONTROL, '');
  return formed.replaceAll('\r', '').replace(OTHER_BREAKS, '\n').replace(CONTROL_BUT_LINES, '');
}

/** `1234567` -> `1,234,567`, without relying on the runtime's locale data. */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function truncationNote(more: number, unit = 'characters'): string {
  return `… (truncated, ${formatCount(more)} more ${unit})`;
}

export interface Segment {
  text: string;
  marked: boolean;
}

/** Splits highlight text on `<mark>`/`</mark>` (any case). An unclosed mark runs to the end; a stray close is dropped. */
export function parseHighlight(text: string): Segment[] {
  const segments: Segment[] = [];
  let depth = 0;
  for (const part of visible(text).split(/(<\/?mark\s*>)/i)) {
    if (/^<mark\s*>$/i.test(part)) depth++;
    else if (/^<\/mark\s*>$/i.test(part)) depth = Math.max(0, depth - 1);
    else if (part) {
      const last = segments[segments.length - 1];
      if (last && last.marked === depth > 0) last.text += part;
      else segments.push({ text: part, marked: depth > 0 });
    }
  }
  return segments;
}

/** The highlight's text without the tags. */
export function highlightPlain(text: string): string {
  return parseHighlight(text)
    .map((s) => s.text)
    .join('');
}

export interface MarkStyle {
  /** Escapes one character outside a highlight. */
  escape(char: string): string;
  /** Escapes one character inside a highlight (default: `escape`). */
  escapeMarked?(char: string): string;
  open: string;
  close: string;
}

/** Characters (code points) in `text`, without iterating it as strings: digests clip thousands of long highlights. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character; a lone surrogate counts as one.
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Renders segments in a style, at most `max` characters long; past that, the text is cut between
 * characters and ends with a note saying how many characters were left out.
 */
export function renderSegments(
  segments: Segment[],
  style: MarkStyle,
  max = Number.POSITIVE_INFINITY,
  note: (more: number) => string = truncationNote,
): string {
  const escMarked = style.escapeMarked ?? style.escape;
  const wrap = (inner: string): string => {
    const core = inner.trim();
    if (!core) return inner;
    const lead = inner.slice(0, inner.length - inner.trimStart().length);
    const trail = inner.slice(inner.trimEnd().length);
    return `${lead}${style.open}${core}${style.close}${trail}`;
  };
  const overhead = style.open.length + style.close.length;
  // Joiners are judged on the whole text, before it is walked a character at a time.
  segments = segments.map((s) => {
    const text = visible(s.text);
    return text === s.text ? s : { ...s, text };
  });
  // Renders until the next character would pass `budget`; stops early, so a 10,000-character
  // highlight clipped to 150 costs about 150 steps, not 10,000.
  const fill = (budget: number) => {
    let out = '';
    let used = 0;
    for (const segment of segments) {
      let inner = '';
      let stopped = false;
      for (const char of segment.text) {
        const escaped = segment.marked ? escMarked(char) : style.escape(char);
        const room = budget - out.length - (segment.marked ? overhead + inner.length : 0);
        if (escaped.length > room) {
          stopped = true;
          break;
        }
        if (segment.marked) inner += escaped;
        else out += escaped;
        used++;
      }
      if (segment.marked) out += wrap(inner);
      if (stopped) return { out, used, complete: false };
    }
    return { out, used, complete: true };
  };
  const whole = fill(max);
  if (whole.complete) return whole.out;
  let total = 0;
  for (const segment of segments) total += codePoints(segment.text);
  const clipped = fill(max - note(total).length);
  return `${clipped.out}${note(total - clipped.used)}`;
}

/**
 * A per-character escape, remembered: a digest escapes hundreds of thousands of characters from
 * a small alphabet, and a Map lookup costs far less than the replaces (measured: the e-mail render
 * check with maxItems 1,000 went from about 780 ms to about 250 ms). Bounded, so hostile text in
 * every script cannot grow it without end.
 */
export function perChar(escapeOne: (c: string) => string): (c: string) => string {
  const known = new Map<string, string>();
  return (c) => {
    let out = known.get(c);
    if (out === undefined) {
      out = escapeOne(c);
      if (known.size < 10_000) known.set(c, out);
    }
    return out;
  };
}

const plainEscape = perChar((c) => stripControl(c));
/** Slack mrkdwn, one line: controls stripped, line breaks as spaces, `&`, `<`, `>` escaped. */
const slackLineEscape = perChar((c) => escapeSlack(stripControl(c)));
/** Slack mrkdwn where a line break is allowed. */
const slackLinesEscape = perChar((c) => escapeSlack(stripControl(c, { lines: true })));
/** Inside a highlight's `*…*`: one line always (bold cannot span lines), `*` and backtick swapped. */
const slackMarkedEscape = perChar((c) => (c === '*' ? '\u2217' : c === '`' ? '\u02cb' : slackLineEscape(c)));
const slackLineStyle: MarkStyle = {
  escape: slackLineEscape,
  escapeMarked: slackMarkedEscape,
  open: '*',
  close: '*',
};
const slackLinesStyle: MarkStyle = { ...slackLineStyle, escape: slackLinesEscape };
/** HTML: a line break in text is only whitespace there, so `\n` and `\t` may stay. */
const htmlEscape = perChar((c) => escapeHtml(stripControl(c, { lines: true })));

/** For excerpts (digest lines), where a bare ellipsis says enough. */
export const ellipsis = (): string => '…';

/**
 * Upstream highlight text as Slack mrkdwn: escaped, `<mark>` shown bold, clipped to `max`. One
 * line unless `lines` (a digest line must stay one line, or upstream text could forge the next).
 */
export function highlightToSlack(
  text: string,
  max?: number,
  note?: (more: number) => string,
  { lines = false }: { lines?: boolean } = {},
): string {
  return renderSegments(parseHighlight(text), lines ? slackLinesStyle : slackLineStyle, max, note);
}

/** Upstream highlight text as HTML: escaped, `<mark>` kept as a (re-created, attribute-free) `<mark>`. */
export function highlightToHtml(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments(
    parseHighlight(text),
    { escape: htmlEscape, open: '<mark>', close: '</mark>' },
    max,
    note,
  );
}

/** Upstream highlight text for a terminal or a plain-text mail: controls stripped, marks as `open`/`close`. */
export function highlightToPlain(
  text: string,
  max?: number,
  marks: { open: string; close: string } = { open: '*', close: '*' },
  note?: (more: number) => string,
): string {
  return renderSegments(parseHighlight(text), { escape: plainEscape, ...marks }, max, note);
}

/** Plain upstream text as one line of Slack mrkdwn, escaped and clipped to `max` with a note. */
export function slackText(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments([{ text, marked: false }], slackLineStyle, max, note);
}

/** Plain upstream text as Slack mrkdwn keeping its line breaks (notes, notice bodies). */
export function slackLines(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments([{ text, marked: false }], slackLinesStyle, max, note);
}

/** Plain upstream text as HTML, escaped and clipped to `max` with a note. */
export function htmlText(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments([{ text, marked: false }], { escape: htmlEscape, open: '', close: '' }, max, note);
}

/** Plain upstream text on one line, controls stripped and clipped to `max` with a note. */
export function lineText(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments([{ text, marked: false }], { escape: plainEscape, open: '', close: '' }, max, note);
}

const plainSwap = perChar((c) => (c === '<' ? '‹' : c === '>' ? '›' : c === '&' ? '＆' : stripControl(c)));

/**
 * Text for a Slack `plain_text` object (headers): there is no markup to escape, but to keep every
 * Slack text field free of `<`, `>` and `&` whatever Slack does with entities there, those three
 * are replaced by look-alikes; controls are stripped.
 */
export function slackPlain(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments([{ text, marked: false }], { escape: plainSwap, open: '', close: '' }, max, note);
}
