/**
 * Upstream text as Discord Markdown (render.ts): escaped with render/escape.ts's machinery, clipped
 * on the raw text with a note.
 */
import { parseHighlight, perChar, renderSegments, stripControl } from '../../render/escape.ts';

/**
 * Discord Markdown: every ASCII punctuation character gets a backslash, which Discord shows as the
 * character itself. That one rule takes the power from everything upstream text could use there:
 * `@everyone` and `<@123>` (no mention, besides `allowed_mentions`), `[x](https://evil)` (no masked
 * link), `||spoiler||`, `**bold**`, `# heading`, `> quote`, `-# subtext`, `:emoji:` and a bare
 * `https://` link (no auto-link). Controls are stripped first, as everywhere.
 */
const DISCORD_SPECIAL = /[!-/:-@[-`{-~]/;
const discordOne = (c: string, lines: boolean) => {
  const shown = stripControl(c, { lines });
  return DISCORD_SPECIAL.test(shown) ? `\\${shown}` : shown;
};
const discordLineEscape = perChar((c) => discordOne(c, false));
const discordLinesEscape = perChar((c) => discordOne(c, true));

/** Upstream highlight text as Discord Markdown: escaped, `<mark>` shown bold, one line, clipped to `max`. */
export function highlightToDiscord(text: string, max?: number, note?: (more: number) => string): string {
  return renderSegments(
    parseHighlight(text),
    { escape: discordLineEscape, open: '**', close: '**' },
    max,
    note,
  );
}

/** Plain upstream text as Discord Markdown, escaped and clipped to `max`; one line unless `lines`. */
export function discordText(
  text: string,
  max?: number,
  note?: (more: number) => string,
  { lines = false }: { lines?: boolean } = {},
): string {
  return renderSegments(
    [{ text, marked: false }],
    { escape: lines ? discordLinesEscape : discordLineEscape, open: '', close: '' },
    max,
    note,
  );
}
