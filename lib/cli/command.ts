/**
 * The shape of a CLI command, and what it is handed: its parsed arguments and its world (output
 * streams, environment, a logger, and a signal that fires on Ctrl-C).
 */
import { userInfo } from 'node:os';
import type { ParseArgsConfig } from 'node:util';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  isTTY: boolean;
  /** The terminal's width when stdout is one (tables fit it; terminal.ts tableWidth). */
  columns?: number;
  /**
   * The clock a command's runtime paces, waits and dates by (`runtimeFor`); the system's unless
   * given: a test running a command in its own process passes one that skips the waits.
   */
  clock?: Clock;
}

export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  io: Io;
  /**
   * The log. A service (`start`, `serve`, `emulator`) writes it to stdout; a one-shot command only
   * when LOG_LEVEL is set (on stderr), so its failure stays the one line on stderr.
   */
  logger: Logger;
  /** A warning the operator must see whatever LOG_LEVEL says (`warning: ...` on stderr, or the log). */
  warn: (text: string) => void;
  /**
   * Aborts on SIGINT or SIGTERM (the reason is the signal's name), or when stdout is closed
   * (`EPIPE`). A service or a command with `stopsSafely` stops cleanly when it does; any other
   * command is stopped where it stands.
   */
  signal: AbortSignal;
  /**
   * The emulator of the `npm start` folder, when this command talks to it as its upstream
   * (cli/local.ts): it also stands in for the demo config's identity providers.
   */
  localEmulatorUrl?: string;
  /**
   * Run as a dry run: `start --dry-run` holds the folder (cli/local.ts besideDryRun). Its runtime
   * sends nothing and acts on nothing outside (`runtimeFor`).
   */
  dryRun?: boolean;
}

export interface Command {
  /** Words that select it, e.g. `['token', 'test']`. */
  path: string[];
  /** Other words that select it, as people type them from habit (`silence query`). */
  aliases?: string[][];
  usage: string;
  summary: string;
  /** More than the summary, for `<command> --help` only: lines printed as they are. */
  details?: string[];
  /** One example, as a user types it (`<command> --help` prints it). */
  example: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  /** What each option does, for `<command> --help`: one entry per option (a test checks). */
  optionHelp?: Record<string, string>;
  /** Runs until stopped, writing its log to stdout (docs/cli.md: one line on stderr is for failures). */
  service?: boolean;
  /**
   * The command watches `signal` and stops at its next safe point (a page or a send recorded),
   * exiting 130 (SIGINT) or 143 (SIGTERM); this is what it says then, after `stopped by SIGINT: `.
   * A safe point that has not come a few seconds after the stop is not waited for (run.ts).
   */
  stopsSafely?: string;
  /**
   * What it uses of a deployment. Run in the folder of `npm start` with nothing set to say
   * otherwise, it uses that local deployment (cli/local.ts).
   */
  uses?: { table?: boolean; upstream?: boolean };
  /**
   * Beside a running `start --dry-run` in the folder (cli/local.ts besideDryRun): `refuse`, it
   * would act outside (exit 2, nothing done); `dry`, it runs as a dry run on the dry run's table.
   */
  beside?: 'refuse' | 'dry';
  /** Positional arguments after the command words: [min, max]. */
  positionals?: [number, number];
  /** Returns the exit code (0 when omitted). */
  run(ctx: CommandContext): Promise<number | undefined>;
}

/** Resolves when the signal aborts. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** The failure line of a command whose upstream credentials were refused (exit code 3). */
export function credentialsRejected(detail: string): string {
  return `the upstream rejected the credentials: check EXPOSURE_API_TOKEN / EXPOSURE_API_KEY (${detail})`;
}

/** `cli:<os user>`, or `cli` where the user cannot be read (some containers have none). */
export function cliClientName(): string {
  try {
    const name = userInfo().username;
    return name ? `cli:${name}` : 'cli';
  } catch {
    return 'cli';
  }
}
