/**
 * The installed command (package.json `bin`) runs without tsx: it is the CLI bundled into plain
 * JavaScript (lib/cli/build.mjs, run by `npm ci` and before `npm start` and `npm run cli`), which
 * Node runs with no loader. It answers as the sources do, finds the files shipped with the package
 * from wherever it is run, and loads no TypeScript.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    expect(pkg.scripts.prepare).toBe('node lib/cli/build.mjs');
    const bundle = readFileSync(BIN, 'utf8');
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(bundle).not.toMatch(/from ["']tsx|import\(["']tsx|["'][^"']+\.ts["']\)/);
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
