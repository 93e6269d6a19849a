/**
 * JSON a person wrote (an alert config, a secrets file, a silence's match): a syntax error says
 * where, as line and column, the way an editor counts them, not as a character offset.
 */

/** Where in `text` the character at `offset` is: 1-based line and column. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: [...(lines.at(-1) ?? '')].length + 1 };
}

/**
 * The offset of the first character that makes `text` invalid: the shortest prefix whose parse
 * fails for another reason than its end (every longer prefix fails the same way).
 */
function errorOffset(text: string): number {
  const failsBeforeEnd = (n: number) => {
    try {
      JSON.parse(text.slice(0, n));
      return false;
    } catch (error) {
      // A prefix cut inside a string or before a comma fails at its very end: that is not it.
      const message = (error as Error).message;
      const at = /at position (\d+)/.exec(message);
      return at ? Number(at[1]) < n : !/end of JSON input/.test(message);
    }
  };
  let lo = 0;
  let hi = text.length;
  if (!failsBeforeEnd(hi)) return text.length;
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (failsBeforeEnd(mid)) hi = mid;
    else lo = mid;
  }
  return hi - 1;
}

/**
 * Why `text` is not JSON, as one line that says where and never quotes the text (it may be a
 * secrets file): `line 3, column 3: Expected ',' or '}' after property value`.
 *
 * @example
 * describeJsonError('{\n  "a": 1\n  "b": 2\n}', error) // 'line 3, column 3: Expected ...'
 */
export function describeJsonError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const what = message
    // The text around the error, which V8 quotes (cut to `..."…"...` in a long text): never said.
    .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/,?\s*(?:in JSON )?at position \d+/, '')
    .replace(/ in JSON$/, '')
    .trim();
  const at = /at position (\d+)/.exec(message);
  const { line, column } = lineAndColumn(text, at ? Number(at[1]) : errorOffset(text));
  return `line ${line}, column ${column}: ${what}`;
}

/** Parses `text`, or throws a SyntaxError whose message says where and what (see describeJsonError). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(describeJsonError(text, error));
  }
}
