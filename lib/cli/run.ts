/**
 * The `exposure-alerts` command line: finds the command, parses its options, runs it, and turns
 * failures into exit codes (interface.md): 0 success, 2 usage or configuration error, 3 upstream
 * rejected the credentials, 1 anything else. A failure prints one line to stderr; the stack only
 * with LOG_LEVEL=debug.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { awsSetupProblem, ConfigError, describeError, NotFoundError, UsageError } from '../errors.ts';
import { createLogger, isLogLevel } from '../log.ts';
import { projectFile } from '../root.ts';
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
    '`exposure-alerts <command> --help` says more of one command; --version prints the version.',
    'Exit codes: 0 ok, 1 failure, 2 usage or configuration error, 3 upstream rejected the credentials.',
    '',
  ].join('\n');
}

/** `<command> --help`: its usage, what it does, each option, and one example. */
export function commandHelp(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(([name, o]) => {
    const flag = `--${name}${o.type === 'string' ? ' <value>' : ''}`;
    return [flag, command.optionHelp?.[name] ?? ''] as const;
  });
  const width = Math.max(0, ...options.map(([flag]) => flag.length));
  return [
    `usage: exposure-alerts ${command.usage}`,
    '',
    command.summary,
    ...(options.length
      ? ['', 'options:', ...options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`)]
      : []),
    '',
    'example:',
    `  ${command.example}`,
    '',
  ].join('\n');
}

/** The package's version (package.json), for --version. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Options parsed as a user means them: `--limit -3` is the value -3 (for the command to judge),
 * not a missing value; a parse error names the option and the command's usage, in one line.
 */
function parseOptions(command: Command, rest: string[]): ReturnType<typeof parseArgs> {
  const options = command.options ?? {};
  const args = rest.flatMap((arg, i) => {
    const name = /^--([\w-]+)$/.exec(rest[i - 1] ?? '')?.[1];
    if (name && options[name]?.type === 'string' && /^-\d/.test(arg)) return [];
    const next = rest[i + 1];
    const own = /^--([\w-]+)$/.exec(arg)?.[1];
    return own && options[own]?.type === 'string' && next !== undefined && /^-\d/.test(next)
      ? [`${arg}=${next}`]
      : [arg];
  });
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const usage = `usage: exposure-alerts ${command.usage}`;
    const option = /'(-[^' ]+)/.exec((error as Error).message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      throw new UsageError(`unknown option ${option ?? ''} for ${command.path.join(' ')} (${usage})`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      throw new UsageError(
        option && options[option.replace(/^--?/, '')]?.type === 'boolean'
          ? `${option} takes no value (${usage})`
          : `${option ?? 'an option'} needs a value (${usage})`,
      );
    throw new UsageError(`${(error as Error).message.split('\n')[0]} (${usage})`);
  }
}

function findCommand(args: string[]): { command: Command; rest: string[] } | undefined {
  let best: Command | undefined;
  let words = 0;
  for (const command of commands) {
    for (const path of [command.path, ...(command.aliases ?? [])]) {
      const matches = path.every((word, i) => args[i] === word);
      if (matches && path.length > words) {
        best = command;
        words = path.length;
      }
    }
  }
  return best ? { command: best, rest: args.slice(words) } : undefined;
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
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    io.stdout(`exposure-alerts ${version()}\n`);
    return EXIT.ok;
  }
  const asked = argv[0] === 'help' ? findCommand(argv.slice(1)) : undefined;
  if (asked) {
    io.stdout(commandHelp(asked.command));
    return EXIT.ok;
  }
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    (argv.length === 0 ? io.stderr : io.stdout)(helpText());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  try {
    const found = findCommand(argv);
    if (!found) throw new UsageError(`unknown command "${argv.join(' ')}"; run exposure-alerts help`);
    const { command, rest } = found;
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(commandHelp(command));
      return EXIT.ok;
    }
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
    const parsed = parseOptions(command, rest);
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
