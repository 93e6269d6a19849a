/**
 * The pieces of a Teams Adaptive Card (version 1.4) and the rules that keep upstream text harmless
 * and the message within Teams' size (docs/destinations/teams.md):
 *
 * - A `TextBlock` renders a Markdown subset (`**bold**`, `[text](url)`, lists, headings) and Teams
 *   clients disagree on backslash escapes, so no escaping can make upstream text safe there. A
 *   `TextBlock` here takes only one of our fixed labels (`TeamsLabel`, checked by the type system),
 *   and every other text, ours or the upstream's, goes into a `RichTextBlock` of `TextRun`s, which
 *   process no Markdown. A highlight is a `TextRun` with `"weight": "Bolder"`. No `FactSet` (its
 *   values are Markdown too) and no `msteams.entities`, so nothing can mention anyone.
 * - Control and bidi characters are stripped (escape.ts `stripControl`), and a run is one line:
 *   an upstream newline cannot forge the next line of the card.
 * - Size: Workflows refuses bodies over about 28 KB with a 413. Runs are clipped by their size in
 *   the JSON body (UTF-8 bytes, with JSON's escapes), not by characters, so a card of emoji or
 *   quotes fits as surely as one of ASCII; a clipped text ends with a note saying how much went.
 */

import { ellipsis, formatCount, lineText, type Segment, stripControl, visible } from '../../render/escape.ts';
import { joinList } from '../../render/format.ts';
import { identityLine } from '../../render/identity.ts';
import type { DeliveryAlert, RenderOptions } from '../../render/types.ts';
import type { Severity } from '../../upstream/event-types.ts';

/** One element of an Adaptive Card body; the builders here make the only shapes we send. */
export type CardElement = Record<string, unknown> & { type: string };

/** Body of a Teams Workflows webhook POST (docs/destinations/teams.md): a message wrapping one card. */
export interface TeamsPayload {
  type: 'message';
  attachments: [
    {
      contentType: 'application/vnd.microsoft.card.adaptive';
      contentUrl: null;
      content: {
        $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
        type: 'AdaptiveCard';
        version: '1.4';
        body: CardElement[];
        actions: CardElement[];
      };
    },
  ];
}

/** The body size Teams accepts, in bytes (UTF-8). */
export const TEAMS_MAX_BYTES = 28_000;
/** What the renderers aim for: a margin under the limit for the safety net's note. */
export const TEAMS_BUDGET_BYTES = 27_000;

/** Our own fixed labels: the only texts a TextBlock ever holds. */
export const TEAMS_LABELS = [
  'What matched',
  'Who it concerns',
  'Where it was found',
  'Leaked credentials',
  'Logins',
  'Digest',
] as const;
export type TeamsLabel = (typeof TEAMS_LABELS)[number];

export type RunStyle = {
  weight?: 'Bolder';
  isSubtle?: true;
  italic?: true;
  size?: 'Small' | 'Large';
  color?: 'Attention' | 'Warning' | 'Accent' | 'Good' | 'Default';
  selectAction?: CardElement;
};
export type TextRun = { type: 'TextRun'; text: string } & RunStyle;

/** Size of a value in a JSON body, in bytes. */
export function bytesOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** One of our labels as a TextBlock (the only TextBlocks we send). */
export function label(text: TeamsLabel): CardElement {
  return { type: 'TextBlock', text, weight: 'Bolder', spacing: 'Medium', wrap: true };
}

/** A run of our own text (counts, field names); upstream text goes through `upstreamRuns`. */
export function run(text: string, style: RunStyle = {}): TextRun {
  return { type: 'TextRun', text: clean(text), ...style };
}

/** A line of runs. */
export function rich(inlines: TextRun[], spacing?: 'None' | 'Small'): CardElement {
  const runs = inlines.filter((r) => r.text !== '');
  return {
    type: 'RichTextBlock',
    inlines: runs.length ? runs : [run('–', { isSubtle: true })],
    ...(spacing ? { spacing } : {}),
  };
}

export function openUrl(url: string, title: string): CardElement {
  return { type: 'Action.OpenUrl', title, url };
}

/** The message the Workflows webhook takes: the `attachments` wrapper around one card. */
export function teamsMessage(body: CardElement[], actions: CardElement[]): TeamsPayload {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          actions,
        },
      },
    ],
  };
}

const cleaned = new Map<string, string>();
/** A character as a run shows it: controls and bidi marks gone, line breaks as spaces. */
function cleanChar(c: string): string {
  let out = cleaned.get(c);
  if (out === undefined) {
    out = stripControl(c);
    if (cleaned.size < 10_000) cleaned.set(c, out);
  }
  return out;
}

function clean(text: string): string {
  return stripControl(visible(text));
}

/** Bytes one (already cleaned) character takes inside a JSON string. */
function charBytes(c: string): number {
  let n = 0;
  for (const ch of c) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') n += 2;
    else if (code < 0x80) n += 1;
    else if (code < 0x800) n += 2;
    // A lone surrogate is written as a \uXXXX escape.
    else if (code >= 0xd800 && code <= 0xdfff) n += 6;
    else if (code < 0x10000) n += 3;
    else n += 4;
  }
  return n;
}

const RUN_BYTES = bytesOf(run('')) + 1;
const BOLDER_BYTES = bytesOf({ weight: 'Bolder' }) - 1;

function fill(segments: Segment[], budget: number) {
  const runs: TextRun[] = [];
  let bytes = 0;
  let used = 0;
  for (const segment of segments) {
    const overhead = RUN_BYTES + (segment.marked ? BOLDER_BYTES : 0);
    let text = '';
    let size = overhead;
    let stopped = bytes + overhead > budget;
    if (!stopped) {
      for (const ch of segment.text) {
        const c = cleanChar(ch);
        const cost = charBytes(c);
        if (bytes + size + cost > budget) {
          stopped = true;
          break;
        }
        text += c;
        size += cost;
        used++;
      }
    }
    if (text) {
      runs.push(segment.marked ? { type: 'TextRun', text, weight: 'Bolder' } : { type: 'TextRun', text });
      bytes += size;
    }
    if (stopped) return { runs, used, complete: false };
  }
  return { runs, used, complete: true };
}

function codePoints(segments: Segment[]): number {
  let n = 0;
  for (const s of segments) for (const _ of s.text) n++;
  return n;
}

/** The note after a clipped text; digest lines pass `excerptNote`, a bare ellipsis. */
export type ClipNote = (more: number) => TextRun;
const truncated: ClipNote = (more) =>
  run(`… (truncated, ${formatCount(more)} more characters)`, { italic: true, isSubtle: true });
export const excerptNote: ClipNote = () => run('…', { isSubtle: true });

/**
 * Upstream text as runs taking at most `maxBytes` of the JSON body: marked segments bolder, the
 * rest plain; past the budget, cut between characters and followed by a note of what was cut.
 *
 * @example
 * rich([run('content: ', { isSubtle: true }), ...upstreamRuns(parseHighlight(text), 3_000)])
 */
export function upstreamRuns(segments: Segment[], maxBytes: number, note: ClipNote = truncated): TextRun[] {
  const { runs, clip } = clipSegments(segments, maxBytes, note);
  return clip ? [...runs, clip] : runs;
}

function clipSegments(segments: Segment[], maxBytes: number, note: ClipNote) {
  // Joiners are judged on the whole text, before it is walked a character at a time (escape.ts).
  segments = segments.map((s) => ({ ...s, text: visible(s.text) }));
  const whole = fill(segments, maxBytes);
  if (whole.complete) return { runs: whole.runs };
  const total = codePoints(segments);
  const clipped = fill(segments, Math.max(0, maxBytes - bytesOf(note(total)) - 1));
  return { runs: clipped.runs, clip: note(total - clipped.used) };
}

/** Plain upstream text (no highlights) as runs within `maxBytes`, in `style` (the clip note keeps its own). */
export function upstreamText(
  text: string,
  maxBytes: number,
  style: RunStyle = {},
  note: ClipNote = truncated,
): TextRun[] {
  const { runs, clip } = clipSegments([{ text, marked: false }], maxBytes, note);
  const styled = runs.map((r) => ({ ...r, ...style }));
  return clip ? [...styled, clip] : styled;
}

/** Severity colours of the header and digest lines. */
export const COLOR: Record<Severity, TextRun['color']> = {
  critical: 'Attention',
  high: 'Attention',
  medium: 'Warning',
  low: 'Accent',
  info: 'Default',
};

/** Bytes one highlight may take: a few long ones must leave room for the others. */
export const HIGHLIGHT_BYTES = 3_000;
/** Kept free for the note that says what was left out. */
export const NOTE_RESERVE = 200;
export const URL_MAX = 2_000;
/** A link in a digest or credential line: longer ones are left out rather than crowd the list. */
export const LINE_URL_MAX = 300;

export const subtle = { isSubtle: true } as const;
export const note = (text: string) => rich([run(text, { italic: true, isSubtle: true })]);
export const listOf = (values: string[], max: number) =>
  joinList(values, max, (v) => lineText(v, 120, ellipsis));

/** `Name: value`, the value upstream text clipped to `maxBytes`. */
export function fact(name: string, value: string, maxBytes: number): CardElement {
  return rich([run(`${name}: `, subtle), ...upstreamText(value || '–', maxBytes)], 'None');
}

export function usable(url: string | undefined, max: number): string | undefined {
  return url && url.length <= max ? url : undefined;
}

/** A run that opens `url`, or nothing when there is no usable link. */
export function linkRun(url: string | undefined, text: string): TextRun[] {
  const href = usable(url, LINE_URL_MAX);
  return href ? [run(' '), run(text, { color: 'Accent', selectAction: openUrl(href, text) })] : [];
}

export function footer(text: string): CardElement {
  return rich(upstreamText(text, 1_200, { isSubtle: true, size: 'Small' }));
}

/** Elements from `make`, in order, while they fit in `room` bytes; returns them and how many fit. */
export function within<T>(values: T[], room: number, make: (value: T) => CardElement) {
  const shown: CardElement[] = [];
  let left = room;
  for (const value of values) {
    const element = make(value);
    const size = bytesOf(element) + 1;
    if (size > left) break;
    shown.push(element);
    left -= size;
  }
  return shown;
}

/**
 * A login's line, and under it its identity verdict (render/identity.ts) as runs like any upstream
 * text (the provider's display name is in it), the two in one Container so that a list counts
 * one element a login; the line alone for a login without a verdict.
 */
export function loginWithVerdict(
  line: CardElement,
  alert: DeliveryAlert,
  opts: Pick<RenderOptions, 'identityLabel'>,
): CardElement {
  const verdict = identityLine(alert, opts);
  if (!verdict) return line;
  const under = rich([run('    ↳ ', subtle), ...upstreamText(verdict, 900, subtle, excerptNote)], 'None');
  return { type: 'Container', spacing: 'None', items: [line, under] };
}
