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
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: '', ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, [...(options.node ?? []), BIN, ...argv], {
    env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
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
