/**
 * Mattermost Markdown where upstream text stays text: every piece of it goes inside an inline code
 * span, and this module is the only place that writes one.
 *
 * Why code spans. Mattermost has no escape that holds: before Markdown, the server rewrites
 * `<!channel>`, `<!here>`, `<!all>` to `@channel`/`@here`/`@all`, `<@id>` to `@name` and
 * `<url|text>` to a Markdown link, in `text` and in attachments alike; after that, mentions are
 * found in Markdown's text nodes, where a backslash escape (`\@all`) or an HTML entity (`&#64;all`)
 * has already turned back into `@all`; bare URLs are auto-linked and the first is fetched for a
 * preview, and `![x](url)` is fetched as an image. A code span is none of that: no mention, link,
 * emoji, hashtag, image or emphasis is read inside one, by the server or the apps.
 *
 * The invariant, and why it holds:
 * 1. A span is one backtick, its content, one backtick. Its content has no backtick (swapped for
 *    `ˋ` U+02CB), so nothing inside can close it early or make a longer delimiter; no line break or
 *    control character (stripControl, one line), so it cannot end its paragraph and leave the rest
 *    as live Markdown; and it is never empty (`` `` `` would open a two-backtick span).
 * 2. No `<` anywhere in a post (upstream `<` and `>` become `‹` and `›`; our own text has none),
 *    so the server's rewrites find nothing to rewrite, and no HTML tag or autolink can form.
 * 3. Our own text, outside the spans, is plain words, digits and `·…—(),.-`, with `**` pairs around
 *    a label or a span, `- ` bullets and `#### ` headings at the start of a line: no `@`, `[`, `<`,
 *    `:`, `\`, `&`, `_`, `~`, URL or emoji. The Markdown parser of the web and mobile apps (marked)
 *    matches `**…**` and `[…](…)` by regular expressions that look past code spans, so an opener in
 *    our text must find its closer in our text: a `**` pair closes before any span, or wraps exactly
 *    one span whose content has no `*` (swapped for `∗` U+2217).
 * 4. The one link is ours: `[Open in the web app](url)` on the last line, nothing after it (so
 *    marked cannot stretch it to a `](` further on), its URL from link.ts with what could end or
 *    escape a Markdown link's destination (parentheses, brackets, `<`, `>`, a backslash, quotes,
 *    backticks, spaces) percent-encoded.
 * `liveMarkup` checks 1 to 4 on any post; `problems` reports what it finds.
 */
import { parseHighlight, perChar, stripControl, visible } from '../../render/escape.ts';

/** Mattermost's longest post, in characters (code points); a longer webhook text is split in several posts. */
export const MATTERMOST_MAX_CHARS = 16_383;

/** The label of our one link. */
export const LINK_LABEL = 'Open in the web app';

const inCode = perChar((c) => {
  if (c === '`') return '\u02cb';
  if (c === '<') return '‹';
  if (c === '>') return '›';
  return stripControl(c);
});
const inBoldCode = perChar((c) => (c === '*' ? '\u2217' : inCode(c)));

/** Characters (code points) of `text`. */
export function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `text` as span content: escaped, at most `max` characters of it, whitespace at its ends apart. */
function content(text: string, swap: (c: string) => string, max: number) {
  let body = '';
  let used = 0;
  let more = 0;
  for (const c of visible(text)) {
    if (used >= max) {
      more++;
      continue;
    }
    body += swap(c);
    used++;
  }
  const core = body.trim();
  const lead = core ? body.slice(0, body.length - body.trimStart().length) : body;
  const trail = core ? body.slice(body.trimEnd().length) : '';
  return { lead: lead ? ' ' : '', core, trail: trail ? ' ' : '', used, more };
}

/** `… (N more)`, our words after a clipped span. */
const clipped = (more: number) => (more ? ` … (${more} more characters)` : '');

/**
 * Upstream text as one code span, at most `max` of its characters (then a note counting the rest);
 * `—` for text with nothing to show.
 */
export function code(text: string, max = 1_000): string {
  const { core, more } = content(text, inCode, max);
  return core ? `\`${core}\`${clipped(more)}` : '—';
}

/** Upstream text as one code span in bold (`*` swapped, so marked's `**` cannot close inside it). */
export function boldCode(text: string, max = 1_000): string {
  const { core, more } = content(text, inBoldCode, max);
  return core ? `**\`${core}\`**${clipped(more)}` : '—';
}

/** Upstream values as code spans joined by `, `, within `max` characters, then how many were left. */
export function codeList(values: readonly string[], max: number, each = 200): string {
  if (!values.length) return '—';
  let out = '';
  let shown = 0;
  for (const value of values) {
    const piece = `${shown ? ', ' : ''}${code(value, each)}`;
    const rest = values.length - shown - 1;
    if (out.length + piece.length + (rest ? 24 : 0) > max && shown) break;
    out += piece;
    shown++;
  }
  return shown === values.length ? out : `${out} … and ${values.length - shown} more`;
}

/**
 * A highlight (`<mark>` tags around what matched) as code spans, the matched parts in bold spans,
 * at most `max` of its characters, then a note counting the rest.
 */
export function highlight(text: string, max: number): string {
  let out = '';
  let room = max;
  let more = 0;
  for (const segment of parseHighlight(text)) {
    const part = content(segment.text, segment.marked ? inBoldCode : inCode, Math.max(0, room));
    room -= part.used;
    more += part.more;
    if (!part.core) {
      if (part.lead && !out.endsWith(' ')) out += ' ';
      continue;
    }
    const span = segment.marked ? `**\`${part.core}\`**` : `\`${part.core}\``;
    out += `${out && !out.endsWith(' ') ? part.lead : ''}${span}${part.trail}`;
  }
  out = out.trimEnd();
  return out ? `${out}${clipped(more)}` : '—';
}

const MARKDOWN_URL_BREAKERS = /[()[\]<>\\`"'\s]/g;

/** The last line of a message about one item: our link to it, or nothing when it has none. */
export function linkLine(url: string | undefined): string {
  if (!url || url.length > 2_000) return '';
  const parsed = new URL(url);
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(
    MARKDOWN_URL_BREAKERS,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `\n[${LINK_LABEL}](${parsed.protocol}//${parsed.host}${rest})`;
}

/** Our own text outside the spans: plain words, `**` pairs, `- ` bullets and `#### ` headings. */
const OWN_TEXT = /^[\p{L}\p{N} ·…—(),.\-\n*#]*$/u;

/**
 * What in `text` would be live in Mattermost against the invariant in this module's header: a `<`,
 * a span that is empty, spans a line or is left open, or our own text holding anything but plain
 * words (a mention, a link but ours on the last line, an emoji, a URL). Empty when all is well.
 */
export function liveMarkup(text: string): string[] {
  const problems: string[] = [];
  if (text.includes('<')) problems.push('a < (the server rewrites <!channel>, <@id> and <url|text>)');
  const link = new RegExp(`\\n\\[${LINK_LABEL}\\]\\(https?://[^\\s()<>\\[\\]\\\\\`"']+\\)$`).exec(text);
  const body = link ? text.slice(0, link.index) : text;
  const parts = body.split('`');
  if (parts.length % 2 === 0) problems.push('a code span left open');
  let own = '';
  let bold = false;
  for (const [i, part] of parts.entries()) {
    if (i % 2 === 0) {
      own += part;
      bold = (part.match(/\*\*/g) ?? []).length % 2 === 1 ? !bold : bold;
    } else if (!part.trim()) problems.push('an empty code span');
    else if (/[\n\r]/.test(part)) problems.push('a code span across lines');
    else {
      if (bold && part.includes('**'))
        problems.push('a ** inside a bold code span (the apps close the bold there)');
      own += 'x';
    }
  }
  if (!OWN_TEXT.test(own)) problems.push('markup outside code spans (a mention, a link, an emoji or a URL)');
  const stars = own.replace(/\*\*/g, '');
  if (stars.includes('*') || (own.match(/\*\*/g) ?? []).length % 2) problems.push('a * outside a ** pair');
  if (own.replace(/^#{1,6} /gm, '').includes('#')) problems.push('a # outside a heading');
  return problems;
}
