/**
 * The real CLI in a process of its own (`dist/exposure-alerts.mjs`, the installed command, which
 * the tests' global setup builds from the sources as they are), for tests of what only a process
 * shows: exit codes, stderr, a working directory, a moved clock.
 *
 * Each run sees only what its test gives it: an empty folder of its own (unless `cwd` names one),
 * so no `alerts.config.json` or `.data/` of the checkout is found, and an environment of the
 * test's variables plus the few a process needs to run at all (PATH, HOME, the temp folder, the
 * locale, Node's CA file), never the caller's ALERTS_CONFIG, TABLE_NAME, EXPOSURE_*, PORT, LOG_LEVEL.
 * A run is awaited to its end (`runCliProcess`), started as a service that prints its URL
 * (`startCliService`), or left running for the test to watch and signal (`spawnCliProcess`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
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
  // Set by vitest.config.ts: the AWS SDK's notice about its Node.js 22 releases stays out of tests.
  'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
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

/** The CLI as a process a test watches and signals: what it has printed so far, and its exit. */
export interface CliProcess {
  child: ChildProcess;
  out(): string;
  err(): string;
  /** The exit code, once the process has closed (and its own folder, if it had one, is gone). */
  exited: Promise<number | null>;
  /**
   * Resolves once `check` holds (looked at every 20 ms); after `ms` it throws with the process's
   * stderr. It does not stop the process: the test does.
   */
  waitFor(check: () => boolean, ms: number): Promise<void>;
}

/**
 * Starts the CLI with `argv` and returns at once. `detached` gives it a process group of its own,
 * as a terminal does, so that `process.kill(-pid)` signals it as Ctrl-C would.
 *
 * @example
 * const run = spawnCliProcess(['poll', 'events', '--once'], { cwd: dir, env });
 * await run.waitFor(() => run.out().includes('poll events:'), 15_000);
 * run.child.kill('SIGINT');
 * expect(await run.exited).toBe(130);
 */
export function spawnCliProcess(
  argv: string[],
  options: CliOptions & { detached?: boolean } = {},
): CliProcess {
  const own = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'ea-cli-')) : undefined;
  const child = spawn(process.execPath, [...(options.node ?? []), BIN, ...argv], {
    env: cleanEnv(options.env),
    cwd: options.cwd ?? own,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((done) =>
    child.on('close', (code) => {
      if (own) rmSync(own, { recursive: true, force: true });
      done(code);
    }),
  );
  return {
    child,
    out: () => out,
    err: () => err,
    exited,
    async waitFor(check, ms) {
      const end = Date.now() + ms;
      while (!check()) {
        if (Date.now() > end) throw new Error(`not seen within ${ms} ms\nstderr: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Runs the CLI to its end: its exit code and all it printed. */
export async function runCliProcess(argv: string[], options: CliOptions = {}): Promise<CliRun> {
  const run = spawnCliProcess(argv, options);
  const code = await run.exited;
  return { code, out: run.out(), err: run.err() };
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
  const run = spawnCliProcess(argv, options);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`no "listening on" within 20 s\nstdout: ${run.out()}\nstderr: ${run.err()}`));
    }, 20_000);
    // After spawnCliProcess's own listener: out() holds this chunk too.
    run.child.stdout?.on('data', () => {
      const url = /listening on (\S+)/.exec(run.out())?.[1];
      if (!url) return;
      clearTimeout(timer);
      resolve({
        url,
        pid: run.child.pid as number,
        out: run.out,
        err: run.err,
        stop: () => {
          run.child.kill('SIGTERM');
          return run.exited;
        },
      });
    });
    void run.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening\nstdout: ${run.out()}\nstderr: ${run.err()}`));
    });
  });
}
