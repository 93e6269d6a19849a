/**
 * The shape of a CLI command, and what it is handed: its parsed arguments and its world (output
 * streams, environment, a logger, and a signal that fires on Ctrl-C).
 */
import type { ParseArgsConfig } from 'node:util';
import type { Logger } from '../log.ts';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  isTTY: boolean;
}

export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  io: Io;
  logger: Logger;
  /** Aborts on SIGINT or SIGTERM; long-running commands stop cleanly when it does. */
  signal: AbortSignal;
}

export interface Command {
  /** Words that select it, e.g. `['token', 'test']`. */
  path: string[];
  usage: string;
  summary: string;
  options?: NonNullable<ParseArgsConfig['options']>;
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
