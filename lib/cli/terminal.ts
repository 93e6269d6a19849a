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
 * Rows as a table that fits `width` columns (80, a terminal's least): a header row first, two
 * spaces between columns, indented by two. When too wide, the `shrink` columns (those with free
 * text), in turn, are narrowed: their cells cut with `…`, or with `wrap`, folded onto as many
 * lines as they need, so nothing is lost (a silence's reason). Cells are made terminal-safe first.
 *
 * @example
 * formatTable([['ID', 'REASON'], ['s-1', 'paste noise']], { shrink: 1 })
 * // ['  ID   REASON', '  s-1  paste noise']
 */
export function formatTable(
  rows: string[][],
  options: { shrink: number | number[]; width?: number; wrap?: boolean },
): string[] {
  const safe = rows.map((r) => r.map((cell) => terminalSafe(cell)));
  const widths = (safe[0] ?? []).map((_, i) => Math.max(...safe.map((r) => [...(r[i] ?? '')].length)));
  const least = options.wrap ? 16 : 8;
  for (const column of typeof options.shrink === 'number' ? [options.shrink] : options.shrink) {
    const total = 2 + widths.reduce((n, w) => n + w, 0) + 2 * (widths.length - 1);
    const over = total - (options.width ?? 80);
    if (over <= 0) break;
    const header = [...(safe[0]?.[column] ?? '')].length;
    widths[column] = Math.max(header, (widths[column] ?? 0) - over, least);
  }
  const cut = (cell: string, w: number) => {
    const chars = [...cell];
    return chars.length > w ? `${chars.slice(0, Math.max(0, w - 1)).join('')}…` : cell;
  };
  const lines: string[] = [];
  for (const row of safe) {
    const cells = row.map((cell, i) =>
      options.wrap ? fold(cell, widths[i] ?? 0) : [cut(cell, widths[i] ?? 0)],
    );
    const height = Math.max(...cells.map((c) => c.length));
    for (let k = 0; k < height; k++)
      lines.push(`  ${cells.map((c, i) => (c[k] ?? '').padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd());
  }
  return lines;
}

/** `text` folded into lines of at most `width` characters, at spaces where it can be. */
function fold(text: string, width: number): string[] {
  const chars = [...text];
  if (chars.length <= width) return [text];
  const out: string[] = [];
  let rest = chars;
  while (rest.length > width) {
    const space = rest.slice(0, width + 1).lastIndexOf(' ');
    const at = space > 0 ? space : width;
    out.push(rest.slice(0, at).join('').trimEnd());
    rest = rest.slice(space > 0 ? at + 1 : at);
  }
  if (rest.length) out.push(rest.join(''));
  return out;
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
