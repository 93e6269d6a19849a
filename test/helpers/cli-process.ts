/**
 * The real CLI in a process of its own (`dist/exposure-alerts.mjs`, the installed command, which
 * the tests' global setup builds from the sources as they are), for tests of what only a process
 * shows: exit codes, stderr, a working directory, a moved clock.
 *
 * Each run sees only what its test gives it: an empty folder of its own (unless `cwd` names one),
 * so no `alerts.config.json` or `.data/` of the checkout is found, and an environment of the
 * test's variables plus the few a process needs to run at all (PATH, HOME, the temp folder, the
 * locale, Node's CA file), never the caller's ALERTS_CONFIG, TABLE_NAME, EXPOSURE_*, PORT, LOG_LEVEL.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const BIN = resolve(import.meta.dirname, '../../dist/exposure-alerts.mjs');

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** What a process inherits from the caller: enough to run, nothing that steers the product. */
const BASICS = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LC_ALL',
  'NODE_EXTRA_CA_CERTS',
  'SYSTEMROOT',
];

/** The environment of a process a test starts: the basics, then the test's own variables. */
export function cleanEnv(own: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASICS) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(own)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface CliOptions {
  /** The process's own variables, beside the basics (`cleanEnv`); undefined leaves one out. */
  env?: Record<string, string | undefined>;
  /** Where it runs; by default an empty folder made for this run and removed after it. */
  cwd?: string;
  /** Node flags before the script, e.g. `['--import', preload]`. */
  node?: string[];
}

export function runCliProcess(argv: string[], options: CliOptions = {}): Promise<CliRun> {
  const own = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'ea-cli-')) : undefined;
  return new Promise<CliRun>((done) => {
    const child = spawn(process.execPath, [...(options.node ?? []), BIN, ...argv], {
      env: cleanEnv(options.env),
      cwd: options.cwd ?? own,
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
  }).finally(() => {
    if (own) rmSync(own, { recursive: true, force: true });
  });
}

export interface CliService {
  /** The URL the service printed (`listening on <url>`). */
  url: string;
  pid: number;
  out(): string;
  err(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts a long-running command (`serve`) and resolves once it prints the URL it listens on. */
export function startCliService(argv: string[], options: CliOptions = {}): Promise<CliService> {
  const own = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'ea-cli-')) : undefined;
  const child = spawn(process.execPath, [...(options.node ?? []), BIN, ...argv], {
    env: cleanEnv(options.env),
    cwd: options.cwd ?? own,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((done) =>
    child.on('close', (code) => {
      if (own) rmSync(own, { recursive: true, force: true });
      done(code);
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no "listening on" within 20 s\nstdout: ${out}\nstderr: ${err}`));
    }, 20_000);
    child.stdout.on('data', (d) => {
      out += d;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (!url) return;
      clearTimeout(timer);
      resolve({
        url,
        pid: child.pid as number,
        out: () => out,
        err: () => err,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}
