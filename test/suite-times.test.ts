/**
 * docs/development.md's list of the slowest test files is written by `npm run test:times`
 * (test/bench/suite-times.ts) between its markers: the page keeps them, and the block written for
 * a run names its ten slowest files, slowest first.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slowestBlock, withBlock } from './bench/suite-times.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');

const file = (name: string, seconds: number) => ({
  name: join(PROJECT_ROOT, 'test', name),
  startTime: 1_000,
  endTime: 1_000 + seconds * 1000,
  assertionResults: [{}, {}],
});

describe('the slowest test files in docs/development.md', () => {
  const report = {
    success: true,
    numTotalTests: 24,
    numFailedTests: 0,
    testResults: Array.from({ length: 12 }, (_, i) => file(`f${i}.test.ts`, i + 0.25)),
  };

  it('lists the ten slowest, slowest first, with the run it came from', () => {
    const block = slowestBlock(report, 142.4, 2, 1.5, '2026-12-07');
    const rows = block.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(10);
    expect(rows[0]).toBe('| `test/f11.test.ts` | 2 | 11.3 |');
    expect(rows[9]).toBe('| `test/f2.test.ts` | 2 | 2.3 |');
    expect(block).toContain('took 142 s for 24 tests in 12 files, on 2 cores');
  });

  it('goes between the markers the page keeps, and nowhere else', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs', 'development.md'), 'utf8');
    const block = slowestBlock(report, 100, 2, 1, '2026-12-07');
    const written = withBlock(page, block);
    expect(written).toContain(block);
    expect(withBlock(written, block)).toBe(written);
    expect(() => withBlock('# no markers', block)).toThrow(/markers/);
  });
});
