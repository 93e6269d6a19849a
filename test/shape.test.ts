/**
 * The shape of lib/ that keeps it walkable (style.md): no import cycle, type-only and dynamic
 * imports included (what `npx madge@8 --circular --extensions ts lib` checks, without its install:
 * a kind's face that loads its body with `import()` and a body that imports the face's type is a
 * cycle to madge, so it is one here), no file much
 * over 300 lines unless its top says why, and none over 600 lines whatever its top says (infra/'s
 * included): past that, a reason at the top no longer makes a file one that reads whole.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const LIB = resolve(import.meta.dirname, '../lib');
const INFRA = resolve(import.meta.dirname, '../infra');
/** No file is longer than this, whatever its top says. */
const MAX_LINES = 600;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The relative imports of a module's text: static ones (`import type` and re-exports included) and
 * dynamic ones (`import('./body.ts')`), as madge counts them.
 */
function importsIn(text: string): string[] {
  const found = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
  ];
  return found.map((m) => m[1] as string);
}

/** Relative imports of a module, as paths. */
function importsOf(path: string): string[] {
  return importsIn(readFileSync(path, 'utf8')).map((spec) => resolve(dirname(path), spec));
}

/** Every cycle reachable in the import graph, as module paths relative to lib/. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found.map((cycle) => cycle.map((p) => relative(LIB, p)));
}

describe('lib/', () => {
  const all = files(LIB);

  it('has no import cycle, type-only and dynamic imports included', () => {
    const graph = new Map(all.map((path) => [path, importsOf(path)]));
    expect(cycles(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([
      [join(LIB, 'a.ts'), [join(LIB, 'b.ts')]],
      [join(LIB, 'b.ts'), [join(LIB, 'a.ts')]],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'a.ts']]);
  });

  it('counts every kind of import, dynamic ones too (the check itself)', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.ts';",
      "  load: async () => (await import('./body.ts')).body,",
      "const d = await import(\n  './d.ts'\n);",
      "import { z } from 'zod/mini';",
    ].join('\n');
    expect(importsIn(text)).toEqual(['./a.ts', '../b.ts', './c.ts', './body.ts', './d.ts']);
  });

  it('knows no kind of destination where the code is shared: the render options, the follow-up targets', () => {
    // A kind's folder name, and how its code and docs call it (PagerDuty, Google Chat, e-mail).
    const kinds = readdirSync(join(LIB, 'destinations'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    const named = new RegExp(`\\b(${[...kinds, 'google chat', 'e-mail', 'terminal'].join('|')})\\b`, 'i');
    const block = (path: string, start: string) => {
      const text = readFileSync(join(LIB, path), 'utf8');
      const at = text.indexOf(start);
      expect(at, `${start} in ${path}`).toBeGreaterThanOrEqual(0);
      return text.slice(at, text.indexOf('\n}\n', at));
    };
    const shared = {
      RenderOptions: block('render/types.ts', 'export interface RenderOptions'),
      FollowUpTarget: block('deliver/follow-up.ts', 'export interface FollowUpTarget'),
      'follow-up-targets.ts': readFileSync(join(LIB, 'deliver/follow-up-targets.ts'), 'utf8'),
    };
    const naming = Object.entries(shared).flatMap(([what, text]) => {
      const found = named.exec(text);
      return found ? [`${what}: ${found[0]}`] : [];
    });
    expect(naming).toEqual([]);
  });

  it('has no file over about 300 lines that does not say why at its top', () => {
    const long = all.filter((path) => {
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n').length;
      const head = text.slice(0, 2_000);
      return lines > 320 && !/longer than 300 lines/i.test(head);
    });
    expect(long.map((p) => relative(LIB, p))).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines, in lib/ or infra/`, () => {
    const over = [...all, ...files(INFRA)]
      .map((path) => ({
        path: relative(resolve(LIB, '..'), path),
        // As `wc -l` counts them: the newline that ends the last line starts no other.
        lines: readFileSync(path, 'utf8').replace(/\n$/, '').split('\n').length,
      }))
      .filter((f) => f.lines > MAX_LINES);
    expect(over).toEqual([]);
  });

  it('has no test in a shared worker that mocks a module or a global, or starts esbuild (vitest.config.ts: all but the own-process files)', () => {
    const TEST = resolve(import.meta.dirname);
    const ownProcess = /^(infra\/synth\.test\.ts$|functions\/|bench\/)|^console\/.*\.int\.test\.ts$/;
    const unit = files(TEST)
      .map((path) => relative(TEST, path))
      .filter((path) => path.endsWith('.test.ts') && !ownProcess.test(path));
    expect(unit.length).toBeGreaterThan(150);
    const mocking = unit.filter((path) =>
      /\bvi\.(mock|doMock|stubGlobal|unstubAllGlobals)\(/.test(readFileSync(join(TEST, path), 'utf8')),
    );
    expect(mocking).toEqual([]);
    // Nor one that starts esbuild (a process of its own, kept by the worker): in a shared worker
    // its builds failed now and then to resolve files that existed.
    const building = unit.filter((path) =>
      /from '(esbuild|[./]+lib\/console\/pack\.ts|[./]+bench\/bundle\.ts)'/.test(
        readFileSync(join(TEST, path), 'utf8'),
      ),
    );
    expect(building).toEqual([]);
  });
});
