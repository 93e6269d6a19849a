/**
 * Text the CLI prints but did not write itself (upstream fields, stored delivery records, a
 * destination's error reply, an upstream error message) may carry terminal control sequences:
 * `ESC ] 0 ; … BEL` retitles the window, `ESC [ 2 J` clears the screen, OSC 8 hides a link behind
 * text, a CR lets a line overwrite itself, some terminals take the 8-bit C1 codes (U+009B is CSI),
 * and the bidi controls (U+202E and friends) reorder what is shown so one id reads as another.
 *
 * The renderers strip such characters from alerts (render/escape.ts `stripControl`), since an
 * alert's reader needs the text, not the attack. The CLI shows them instead, as visible escapes:
 * an operator inspecting a record needs to see that something was there.
 *
 * The escape is JSON's own `\uXXXX` form (every character concerned is in the BMP), so JSON output
 * goes through the same function and still parses to the same value. That matters: JSON.stringify
 * escapes only U+0000-U+001F and leaves DEL, the C1 controls and the bidi controls raw.
 */

// C0 and C1 controls (ESC among them), DEL, the bidi marks, embeddings, overrides and isolates,
// and the Unicode line and paragraph separators (some terminals break lines on them).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// The same without `\n` and `\t`, for text that spans lines by design (a pretty-printed JSON
// document, a rendered e-mail, a list of config problems). Neither can move the cursor back.
const UNSAFE_BUT_LINES =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Whether to colour what goes to the terminal: only on a terminal, and never when NO_COLOR is set
 * to anything but an empty string (no-color.org).
 */
export function useColor(io: { isTTY: boolean; env: Record<string, string | undefined> }): boolean {
  return io.isTTY && !io.env.NO_COLOR;
}

/**
 * The width tables fit: COLUMNS when set to a number (what the user or the shell says), else the
 * terminal's own, else 80 (stdout is a pipe or a file: the narrowest terminal anyone uses).
 */
export function tableWidth(io: { env: Record<string, string | undefined>; columns?: number }): number {
  const given = Number(io.env.COLUMNS?.trim());
  if (Number.isInteger(given) && given > 0) return given;
  return io.columns && io.columns > 0 ? io.columns : 80;
}

/**
 * How far away a time is, as a reader takes it in, in a table's few columns: `in 3 h`, `12 min ago`.
 *
 * @example
 * fromNow('2026-11-20T13:00:00Z', Date.parse('2026-11-20T10:00:00Z')) // 'in 3 h'
 */
export function fromNow(iso: string, now: number): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const span = (x: number) =>
    x < 120
      ? `${x} s`
      : x < 7_200
        ? `${Math.round(x / 60)} min`
        : x < 172_800
          ? `${Math.round(x / 3_600)} h`
          : `${Math.round(x / 86_400)} d`;
  return s > 0 ? `in ${span(s)}` : `${span(-s)} ago`;
}

/** A column is never cut below this (or below its header, or its own widest cell when smaller). */
const LEAST = 8;

/**
 * Rows as a table that fits `width` columns: a header row first, two spaces between columns,
 * indented by two, one line per row whatever its cells hold. When too wide, the widest columns
 * give way first, all of them together down to the next widest, and their cells are cut with `…`
 * (a value is never folded onto a second line, where it would read as another row). The `keep`
 * columns are never cut: ids a user copies into the next command. A `room` column (a detail that
 * says why) is not cut below `least` while a `drop` column can go instead: those are left out, in
 * order, until it fits. Cells are made terminal-safe first. Every table of the CLI is made here.
 *
 * @example
 * formatTable([['ID', 'REASON'], ['s-1', 'paste noise']], { width: 80, keep: [0] })
 * // ['  ID   REASON', '  s-1  paste noise']
 */
export function formatTable(
  rows: string[][],
  options: { width: number; keep?: number[]; room?: { column: number; least: number; drop: number[] } },
): string[] {
  const safe = rows.map((r) => r.map((cell) => terminalSafe(cell)));
  const { room } = options;
  let widths = fitWidths(safe, options.width, options.keep, room);
  const wide = 2 * widths.length + widths.reduce((n, w) => n + w, 0) > options.width;
  if (room && wide) {
    const [gone, ...drop] = room.drop;
    if (gone === undefined) widths = fitWidths(safe, options.width, options.keep);
    else {
      const shift = (i: number) => (i > gone ? i - 1 : i);
      return formatTable(
        rows.map((r) => r.filter((_, i) => i !== gone)),
        {
          width: options.width,
          keep: options.keep?.filter((i) => i !== gone).map(shift),
          room: { column: shift(room.column), least: room.least, drop: drop.map(shift) },
        },
      );
    }
  }
  // Widths count characters, not UTF-16 units, so a cell with an emoji lines up like any other.
  const sized = (cell: string, w: number) => {
    const chars = [...cell];
    if (chars.length > w) return `${chars.slice(0, Math.max(0, w - 1)).join('')}…`;
    return cell + ' '.repeat(w - chars.length);
  };
  return safe.map((row) => `  ${row.map((cell, i) => sized(cell, widths[i] ?? 0)).join('  ')}`.trimEnd());
}

/** Each column's width in a table of terminal-safe cells that fits `width` (see formatTable). */
function fitWidths(
  safe: string[][],
  width: number,
  keep: number[] = [],
  room?: { column: number; least: number },
): number[] {
  const columns = safe[0]?.length ?? 0;
  const widths = Array.from({ length: columns }, () => 0);
  for (const row of safe)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
  const floors = widths.map((w, i) =>
    keep.includes(i)
      ? w
      : Math.min(w, Math.max(i === room?.column ? room.least : LEAST, [...(safe[0]?.[i] ?? '')].length)),
  );
  let over = 2 + widths.reduce((n, w) => n + w, 0) + 2 * Math.max(0, columns - 1) - width;
  while (over > 0) {
    const open = widths.flatMap((w, i) => (w > (floors[i] ?? 0) ? [i] : []));
    if (open.length === 0) break; // as narrow as it goes: the terminal wraps the line, not us
    const top = Math.max(...open.map((i) => widths[i] ?? 0));
    const widest = open.filter((i) => widths[i] === top);
    // Down to the next widest column, or to the highest floor among the widest, whichever is first.
    const next = Math.max(
      0,
      ...open.map((i) => widths[i] ?? 0).filter((w) => w < top),
      ...widest.map((i) => floors[i] ?? 0),
    );
    const step = Math.min(top - next, Math.ceil(over / widest.length));
    for (const i of widest) {
      const cut = Math.min(step, over);
      widths[i] = top - cut;
      over -= cut;
    }
  }
  return widths;
}

export interface TerminalSafeOptions {
  /**
   * Keep `\n` and `\t`. Off by default, so a field cannot start a line of its own that looks
   * like the CLI's; on only for whole blocks whose line breaks are the CLI's own (or JSON's).
   */
  multiline?: boolean;
}

/**
 * Text safe to print on a terminal: every control character, DEL and bidi control becomes a
 * visible `\uXXXX` escape; everything else is unchanged.
 *
 * @example
 * terminalSafe('a\u001b[2Jb\u202ec'); // 'a\\u001b[2Jb\\u202ec'
 * terminalSafe(JSON.stringify(value, null, 2), { multiline: true }); // still valid JSON, same value
 */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  return text.replace(
    options.multiline ? UNSAFE_BUT_LINES : UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
