/**
 * The installed command (package.json `bin`) runs without tsx: it is the CLI bundled into plain
 * JavaScript (lib/cli/build.mjs, run by `npm ci` and before `npm start` and `npm run cli`): an entry
 * and the chunks beside it that a command loads as it needs them, which Node runs with no loader. It answers as the sources do, finds the files shipped with the package
 * from wherever it is run, and loads no TypeScript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { BIN, runCliProcess } from '../helpers/cli-process.ts';

describe('the installed command', () => {
  it('is the bundle package.json names, plain JavaScript that imports no tsx and no TypeScript file', () => {
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(join(PROJECT_ROOT, pkg.bin['exposure-alerts'] ?? '')).toBe(BIN);
    expect(pkg.scripts.prepare).toBe('node lib/cli/build.mjs --force');
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    for (const file of readdirSync(dirname(BIN)).filter((f) => f.endsWith('.mjs')))
      expect(readFileSync(join(dirname(BIN), file), 'utf8'), file).not.toMatch(
        /from ["']tsx|import\(["']tsx|["'][^"']+\.ts["']\)/,
      );
  });

  // What every command loads before it runs: the entry and the chunks it imports, not those it
  // imports when a command runs (lib/cli/commands/*: each loads its body in its run). Under budget,
  // and no package: no schema library, no SDK, no server is loaded for `--help`.
  it('loads at start the commands’ faces, under 250 KB, and no package but Node’s own', () => {
    const files = [BIN];
    const packages = new Set<string>();
    let bytes = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      bytes += text.length;
      expect(text, file).not.toMatch(/^\/\/ node_modules\//m);
      for (const m of text.matchAll(/^import\s(?:[^;]*?\sfrom\s*)?"([^"]+)";?$/gm)) {
        const path = m[1] ?? '';
        if (path.startsWith('./')) {
          const chunk = join(dirname(BIN), path);
          if (!files.includes(chunk)) files.push(chunk);
        } else if (!path.startsWith('node:')) packages.add(path);
      }
    }
    expect([...packages]).toEqual([]);
    expect(files.length).toBeGreaterThan(1);
    expect(bytes).toBeLessThan(250_000);
  });

  it('runs with plain node, no loader: --version, and the example config checked from another folder', async () => {
    const version = await runCliProcess(['--version'], { env: { NODE_OPTIONS: undefined } });
    expect(version.code).toBe(0);
    expect(version.out.trim()).toMatch(/^exposure-alerts \d+\.\d+\.\d+$/);
    const elsewhere = await mkdtemp(join(tmpdir(), 'ea-bin-'));
    const check = await runCliProcess(
      ['config', 'validate', join(PROJECT_ROOT, 'infra/alerts.config.example.json')],
      {
        cwd: elsewhere,
        env: { NODE_OPTIONS: undefined },
      },
    );
    expect(check.err).toBe('');
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/^config OK: \d+ routes, \d+ destinations/);
    // `config reference` reads the example shipped with the package, wherever the command runs.
    const reference = await runCliProcess(['config', 'reference'], { cwd: elsewhere });
    expect(reference.code).toBe(0);
    expect(reference.out).toContain('infra/alerts.config.example.json');
  });
});
