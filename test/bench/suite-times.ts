/**
 * Times `npm test` and writes its ten slowest files into docs/development.md, between the markers
 * below, so the list is what a run measured, never a hand edit: `npm run test:times` runs the
 * whole suite once (vitest's own reporter on the terminal, its JSON report to a temporary file),
 * then rewrites the block with the run's wall time, the machine's cores and load, and each file's
 * time (from its first test's start to its last test's end, as vitest reports it; a file's
 * imports and set-up before its first test are not in it). A run with a failed test writes
 * nothing, and says so: a list from a broken run would mislead.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..');

const DOCS_PATH = join(PROJECT_ROOT, 'docs', 'development.md');
const BEGIN =
  '<!-- The slowest test files: written by `npm run test:times` (test/bench/suite-times.ts); not by hand. -->';
const END = '<!-- End of the slowest test files. -->';
const SHOWN = 10;

interface JsonReport {
  success: boolean;
  numTotalTests: number;
  numFailedTests: number;
  testResults: { name: string; startTime: number; endTime: number; assertionResults: unknown[] }[];
}

/** The block for a run: its figures, then the slowest files, slowest first. */
export function slowestBlock(
  report: JsonReport,
  wallS: number,
  cores: number,
  load: number,
  date: string,
): string {
  const files = report.testResults
    .map((r) => ({
      file: relative(PROJECT_ROOT, r.name),
      seconds: (r.endTime - r.startTime) / 1000,
      tests: r.assertionResults.length,
    }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, SHOWN);
  return [
    BEGIN,
    `Measured on ${date}: \`npm test\` took ${wallS.toFixed(0)} s for ${report.numTotalTests} tests in ${report.testResults.length} files, on ${cores} cores, the load ${load.toFixed(1)} when it ended.`,
    '',
    '| file | tests | seconds |',
    '|---|---|---|',
    ...files.map((f) => `| \`${f.file}\` | ${f.tests} | ${f.seconds.toFixed(1)} |`),
    END,
  ].join('\n');
}

/** `page` with `block` in place of what lies between the markers. */
export function withBlock(page: string, block: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOCS_PATH} lacks the slowest files' markers`);
  return `${page.slice(0, start)}${block}${page.slice(end + END.length)}`;
}

function main(): number {
  const dir = mkdtempSync(join(tmpdir(), 'suite-times-'));
  const out = join(dir, 'report.json');
  try {
    const started = Date.now();
    const run = spawnSync(
      process.execPath,
      [
        join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${out}`,
      ],
      { cwd: PROJECT_ROOT, stdio: 'inherit' },
    );
    const wallS = (Date.now() - started) / 1000;
    const report = JSON.parse(readFileSync(out, 'utf8')) as JsonReport;
    if (run.status !== 0 || report.numFailedTests > 0) {
      console.error(`npm test failed (${report.numFailedTests} tests): ${DOCS_PATH} left as it was`);
      return 1;
    }
    const block = slowestBlock(
      report,
      wallS,
      availableParallelism(),
      loadavg()[0] ?? 0,
      new Date().toISOString().slice(0, 10),
    );
    writeFileSync(DOCS_PATH, withBlock(readFileSync(DOCS_PATH, 'utf8'), block));
    console.info(
      `${relative(PROJECT_ROOT, DOCS_PATH)}: the ten slowest files of a ${wallS.toFixed(0)} s run written`,
    );
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main();
