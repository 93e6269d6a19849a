/**
 * The real CLI in a process of its own (`dist/exposure-alerts.mjs`, the installed command, which
 * the tests' global setup builds from the sources as they are), for tests of what only a process
 * shows: exit codes, stderr, a working directory, a moved clock.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const BIN = resolve(import.meta.dirname, '../../dist/exposure-alerts.mjs');

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

export interface CliOptions {
  /** Added to this process's environment (a value of undefined removes the variable). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Node flags before the script, e.g. `['--import', preload]`. */
  node?: string[];
}

export function runCliProcess(argv: string[], options: CliOptions = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: '', ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return new Promise((done) => {
    const child = spawn(process.execPath, [...(options.node ?? []), BIN, ...argv], {
      env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => done({ code, out, err }));
  });
}
