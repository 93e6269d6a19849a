/**
 * Reading the docs as the docs tests need them: a page's `sh` blocks as commands with the line each
 * should print, its headings as GitHub anchors, and its relative links. Pure text in, text out, so
 * the two docs tests (commands.test.ts, links.test.ts) share one reading of Markdown.
 */

/** The marker, on the line before a block, of a block that must not run here (a deploy, a service). */
export const SKIP = '<!-- docs-test: skip -->';

export interface Command {
  /** Where it is written: `docs/cli.md`, or `README.md#quick-start`. */
  source: string;
  text: string;
  /** The `# → ` line under it; `…` stands for anything. */
  expect?: string;
  /** Which of the page's run blocks it is in, from 0 (a block is what a reader runs at once). */
  block: number;
}

/**
 * The part of a page under its `## title` heading, down to the next `## ` (its `###` included), or
 * undefined when the page has no such heading.
 */
export function section(markdown: string, title: string): string | undefined {
  const start = markdown.indexOf(`\n## ${title}\n`);
  if (start < 0) return undefined;
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The `sh` blocks of `markdown`, in order: their commands (continuations joined), and the skipped blocks. */
export function shCommands(markdown: string, source: string): { commands: Command[]; skipped: number } {
  const commands: Command[] = [];
  let skipped = 0;
  let block = -1;
  for (const m of markdown.matchAll(/(<!-- docs-test: skip -->[ \t]*\n)?```sh[ \t]*\n([\s\S]*?)```/g)) {
    if (m[1]?.trim() === SKIP) {
      skipped += 1;
      continue;
    }
    block += 1;
    let pending = '';
    for (const line of (m[2] ?? '').split('\n')) {
      const expected = /^# → (.*)$/.exec(line);
      if (expected) {
        const last = commands.at(-1);
        if (last) last.expect = expected[1];
        continue;
      }
      if (!pending && (line.trim() === '' || line.startsWith('#'))) continue;
      if (line.endsWith('\\')) {
        pending += `${line}\n`;
        continue;
      }
      commands.push({ source, text: `${pending}${line}`.trim(), block });
      pending = '';
    }
  }
  return { commands, skipped };
}

/** The page without its fenced code blocks (a `#` or a `[x](y)` inside one is code, not Markdown). */
export function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/**
 * A heading's anchor as GitHub makes it: the rendered text (links reduced to their text, code and
 * emphasis marks dropped), lower-cased, every character that is not a letter, a digit, a space, a
 * hyphen or an underscore removed, spaces turned into hyphens.
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Every anchor a page offers: its headings' slugs (a repeated one gets `-1`, `-2`, as GitHub
 * numbers them) and any `id="…"` or `name="…"` written in HTML.
 */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = slug(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<[a-z]+[^>]*\s(?:id|name)="([^"]+)"/g)) found.add(m[1] ?? '');
  return found;
}

/**
 * The page's links that stay in the repository: inline `[text](target)` and `![alt](target)`,
 * reference definitions `[name]: target`, and HTML `href`/`src`, outside code blocks and code
 * spans. Links with a scheme (`https:`, `mailto:`) or starting with `//` are not ours to check.
 */
export function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '');
  const targets: string[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] ?? '');
  for (const m of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/gm)) targets.push(m[1] ?? '');
  for (const m of text.matchAll(/\s(?:href|src)="([^"]+)"/g)) targets.push(m[1] ?? '');
  return targets.filter((t) => t !== '' && !/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(t));
}
