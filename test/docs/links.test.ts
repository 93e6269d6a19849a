/**
 * Every relative link of README.md and docs/**\/*.md leads somewhere: to a file or folder of this
 * repository (never outside it, as a link to the contract beside the checkout would), and, where it
 * names a heading (`page.md#anchor`, `#anchor`), to a heading of that page as GitHub anchors it.
 * The pages are read as they are when the test runs: a page added later is checked without a change.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { anchors, relativeLinks, slug } from './markdown.ts';

/** README.md and every Markdown file under docs/, as paths from the repository's root. */
function pages(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(PROJECT_ROOT, 'docs'))) walk('docs');
  return found.sort();
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let set = anchorCache.get(file);
  if (!set) {
    set = anchors(readFileSync(file, 'utf8'));
    anchorCache.set(file, set);
  }
  return set;
}

/** What is wrong with one link of `page`, or undefined when it leads where it says. */
function problem(page: string, link: string): string | undefined {
  const hash = link.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? link : link.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(link.slice(hash + 1));
  const from = join(PROJECT_ROOT, page);
  // GitHub reads a leading `/` from the repository's root; anything else from the page's folder.
  const target =
    path === '' ? from : path.startsWith('/') ? join(PROJECT_ROOT, path) : resolve(dirname(from), path);
  const inside = relative(PROJECT_ROOT, target);
  if (inside.startsWith(`..${sep}`) || inside === '..') return `${link}: outside the repository`;
  if (!existsSync(target)) return `${link}: no such file`;
  if (anchor === undefined || anchor === '' || !target.endsWith('.md')) return undefined;
  if (!anchorsOf(target).has(anchor.toLowerCase())) return `${link}: ${inside} has no heading #${anchor}`;
  return undefined;
}

describe('GitHub anchors', () => {
  it('are made from headings as GitHub makes them', () => {
    expect(slug('`destinations`: type `slack`')).toBe('destinations-type-slack');
    expect(slug('`tenants[].identity.providers`: type `entra`')).toBe('tenantsidentityproviders-type-entra');
    expect(slug('1. The alert config')).toBe('1-the-alert-config');
    expect(slug("The API's auth")).toBe('the-apis-auth');
    expect(slug('Roll back, pause, tear down')).toBe('roll-back-pause-tear-down');
    expect(slug('[Adding](x.md) a destination')).toBe('adding-a-destination');
    expect(slug('first_run and `Retry-After`')).toBe('first_run-and-retry-after');
    const page =
      '# A\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n\n### Notes <a id="kept"></a>\n';
    expect([...anchors(page)].sort()).toEqual(['a', 'kept', 'notes', 'notes-1', 'notes-2']);
  });

  it('and links are found outside code only, our own only', () => {
    const page = [
      'See [a](docs/a.md#x), ![b](img/b.png "title") and [c](https://example.com).',
      '`[not](a-link.md)`',
      '```md',
      '[in a block](nope.md)',
      '```',
      '[ref]: ./d.md',
      '<img src="e.png"> [mail](mailto:x@example.com) [same](#top)',
    ].join('\n');
    expect(relativeLinks(page)).toEqual(['docs/a.md#x', 'img/b.png', '#top', './d.md', 'e.png']);
  });
});

describe('every relative link of the docs', () => {
  const all = pages();

  it('covers the README and the docs/ pages there are', () => {
    expect(all).toContain('README.md');
    expect(all.filter((p) => p.startsWith('docs/')).length).toBeGreaterThan(0);
  });

  it.each(all)('%s: every relative link resolves', (page) => {
    const markdown = readFileSync(join(PROJECT_ROOT, page), 'utf8');
    const broken = relativeLinks(markdown)
      .map((link) => problem(page, link))
      .filter((p) => p !== undefined);
    expect(broken).toEqual([]);
  });
});
