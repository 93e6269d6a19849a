/**
 * The `exposure-alerts` command line: finds the command, parses its options, runs it, and turns
 * failures into exit codes (interface.md): 0 success, 2 usage or configuration error, 3 upstream
 * rejected the credentials, 1 anything else. A failure prints one line to stderr; the stack only
 * with LOG_LEVEL=debug.
 */
import { parseArgs } from 'node:util';
import { awsSetupProblem, ConfigError, describeError, NotFoundError, UsageError } from '../errors.ts';
import { createLogger, isLogLevel } from '../log.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { type Command, credentialsRejected, type Io } from './command.ts';
import { commands } from './commands/index.ts';
import { useLocalDeployment } from './local.ts';
import { terminalSafe } from './terminal.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2, unauthorized: 3 } as const;

function helpText(): string {
  return [
    'usage: exposure-alerts <command> [options]',
    '',
    ...commands.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '',
    'Exit codes: 0 ok, 1 failure, 2 usage or configuration error, 3 upstream rejected the credentials.',
    '',
  ].join('\n');
}

function findCommand(args: string[]): { command: Command; rest: string[] } | undefined {
  let best: Command | undefined;
  for (const command of commands) {
    const matches = command.path.every((word, i) => args[i] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best ? { command: best, rest: args.slice(best.path.length) } : undefined;
}

export function describeFailure(error: unknown): { code: number; line: string } {
  if (error instanceof ConfigError) return { code: EXIT.usage, line: error.detail };
  if (error instanceof UsageError) return { code: EXIT.usage, line: error.message };
  if (error instanceof NotFoundError) return { code: EXIT.failure, line: error.message };
  const setup = awsSetupProblem(error);
  if (setup) return { code: EXIT.usage, line: setup };
  if (error instanceof UpstreamError) {
    if (error.code === 'unauthorized') {
      return { code: EXIT.unauthorized, line: credentialsRejected(error.message) };
    }
    return { code: EXIT.failure, line: `upstream ${error.code}: ${error.message}` };
  }
  return { code: EXIT.failure, line: describeError(error) };
}

export async function runCli(
  argv: string[],
  io: Io,
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  const level = io.env.LOG_LEVEL?.toLowerCase();
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    (argv.length === 0 ? io.stderr : io.stdout)(helpText());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  try {
    const found = findCommand(argv);
    if (!found) throw new UsageError(`unknown command "${argv.join(' ')}"; run exposure-alerts help`);
    const { command, rest } = found;
    const logger = createLogger({
      level: isLogLevel(level) ? level : 'info',
      format: io.isTTY ? 'pretty' : 'json',
      // Log lines can carry upstream text (error messages, fields); one line each, escapes shown.
      write: command.service
        ? (line) => io.stdout(`${terminalSafe(line)}\n`)
        : isLogLevel(level)
          ? (line) => io.stderr(`${terminalSafe(line)}\n`)
          : () => {},
    });
    const warn = command.service
      ? (text: string) => logger.warn(text)
      : (text: string) => io.stderr(`warning: ${terminalSafe(text)}\n`);
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: rest,
        options: command.options ?? {},
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new UsageError(
        `${(error as Error).message.split('\n')[0]} (usage: exposure-alerts ${command.usage})`,
      );
    }
    const [min, max] = command.positionals ?? [0, 0];
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw new UsageError(`usage: exposure-alerts ${command.usage}`);
    }
    const local = await useLocalDeployment(io.env, command.uses ?? {}, io.stderr);
    try {
      const code = await command.run({
        values: parsed.values as Record<string, string | boolean | undefined>,
        positionals: parsed.positionals,
        io: local ? { ...io, env: local.env } : io,
        logger,
        warn,
        signal,
      });
      return code ?? EXIT.ok;
    } finally {
      await local?.close();
    }
  } catch (error) {
    const { code, line } = describeFailure(error);
    // The line can quote the upstream or a file; `multiline` keeps a config error's list of problems.
    io.stderr(`exposure-alerts: ${terminalSafe(line, { multiline: true })}\n`);
    if (level === 'debug' && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return code;
  }
}
