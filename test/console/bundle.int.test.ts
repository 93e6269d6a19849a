/**
 * The console in the API's Lambda bundle, built as the stack builds it (infra/lambda-bundle.mjs:
 * code splitting): the page's bytes and the code that serves them sit in a chunk of their own,
 * loaded with the first request for the page, so the API's start carries only the routes' few
 * lines. The start figure here is the one test/infra/synth.test.ts budgets (the options are
 * infra/lambda-bundle.mjs's, through the bench's bundle.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, expect, it } from 'vitest';
import { lambdaOptions } from '../bench/bundle.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const out = mkdtempSync(join(tmpdir(), 'ea-console-bundle-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** `index.mjs` and the chunks it imports statically: what a cold start loads. */
function loadedAtStart(dir: string): string[] {
  const files = ['index.mjs'];
  for (let i = 0; i < files.length; i++) {
    const code = readFileSync(join(dir, files[i] as string), 'utf8');
    for (const m of code.matchAll(/import(?:\{[^}]*\}from|\*as \w+from)?"\.\/(chunk-[\w-]+\.mjs)"/g))
      if (!files.includes(m[1] as string)) files.push(m[1] as string);
  }
  return files;
}

const sourcesOf = (file: string): string[] =>
  (JSON.parse(readFileSync(join(out, `${file}.map`), 'utf8')) as { sources: string[] }).sources;

it('the page and its server load only with the first request for the page, never at the API’s start', async () => {
  await build(lambdaOptions(join(ROOT, 'functions', 'api.ts'), out));
  const start = loadedAtStart(out);
  const atStart = start.flatMap(sourcesOf);
  const lazy = readdirSync(out)
    .filter((f) => f.endsWith('.mjs') && !start.includes(f))
    .flatMap(sourcesOf);
  for (const file of ['lib/console/page-packed.ts', 'lib/console/page.ts']) {
    expect(
      atStart.some((s) => s.endsWith(file)),
      `${file} not at start`,
    ).toBe(false);
    expect(
      lazy.some((s) => s.endsWith(file)),
      `${file} in a lazy chunk`,
    ).toBe(true);
  }
  // The routes themselves are at start (they are registered there), and are small.
  expect(atStart.some((s) => s.endsWith('lib/console/routes.ts'))).toBe(true);
  const bytes = start.reduce((n, f) => n + statSync(join(out, f)).size, 0);
  console.info(`api bundle: ${bytes} bytes at start; the console page's chunk loads on first use`);
}, 30_000);
