/**
 * The `exposure-alerts` command line: finds the command, parses its options, runs it, and turns
 * failures into exit codes (docs/cli.md): 0 success, 2 usage or configuration error, 3 upstream
 * rejected the credentials, 1 anything else. A failure prints one line to stderr; the stack only
 * with LOG_LEVEL=debug. A run stopped by SIGINT or SIGTERM exits 130 or 143 (main.ts wires them):
 * a command with safe points stops at the next one and says so, any other is dropped at once. One
 * whose next safe point has not come STOP_GRACE_MS after the stop is dropped then, and names what
 * it was waiting for (waits.ts): a hung dependency never holds a stop longer.
 */
import { parseArgs } from 'node:util';
import { awsSetupProblem, ConfigError, describeError, NotFoundError, UsageError } from '../errors.ts';
import { createLogger, isLogLevel } from '../log.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { waitsNow } from '../waits.ts';
import { type Command, credentialsRejected, type Io, untilAborted } from './command.ts';
import { commands } from './commands/index.ts';
import { commandHelp, groupHelp, groupMembers, helpText, version } from './help.ts';
import { besideDryRun, localHint, useLocalDeployment } from './local.ts';
import { terminalSafe } from './terminal.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2, unauthorized: 3 } as const;

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

export function describeFailure(error: unknown, local?: string): { code: number; line: string } {
  if (error instanceof ConfigError) return { code: EXIT.usage, line: error.detail };
  if (error instanceof UsageError) return { code: EXIT.usage, line: error.message };
  if (error instanceof NotFoundError) return { code: EXIT.failure, line: error.message };
  const setup = awsSetupProblem(error, local);
  if (setup) return { code: EXIT.usage, line: setup };
  if (error instanceof UpstreamError) {
    if (error.code === 'unauthorized') {
      return { code: EXIT.unauthorized, line: credentialsRejected(error.message) };
    }
    return { code: EXIT.failure, line: `upstream ${error.code}: ${error.message}` };
  }
  return { code: EXIT.failure, line: describeError(error) };
}

/**
 * How a run asked to stop ends (the signal's abort reason, main.ts): SIGINT 130 and SIGTERM 143, as
 * shells report a process a signal ended; a stdout nobody reads any more (EPIPE) quietly, 0.
 */
export function interruption(signal: AbortSignal): { code: number; name?: string } {
  if (signal.reason === 'EPIPE') return { code: EXIT.ok };
  return signal.reason === 'SIGTERM' ? { code: 143, name: 'SIGTERM' } : { code: 130, name: 'SIGINT' };
}

/**
 * How long a command with safe points has after a stop to reach its next one. A healthy request
 * answers well within it; past it, the command is waiting for something that may never answer.
 */
export const STOP_GRACE_MS = 3_000;

interface Abandoned {
  /** What the process was waiting for when it was abandoned (waits.ts). */
  waits: string[];
}

/** Resolves `ms` after the signal aborts, with what the process waits for then. */
function abandonAfter(signal: AbortSignal, ms: number): { at: Promise<Abandoned>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let cancelled = false;
  const at = untilAborted(signal).then(
    () =>
      new Promise<Abandoned>((resolve) => {
        if (cancelled) return;
        timer = setTimeout(() => resolve({ waits: waitsNow() }), ms);
      }),
  );
  return {
    at,
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}

/**
 * What a stopped command says after `exposure-alerts: `: at its safe point, what that leaves;
 * abandoned, what it was waiting for (a command with safe points also that it is a crash's stop).
 */
function stopLine(name: string, command: Command, ended: number | undefined | Abandoned): string {
  const safe = command.stopsSafely;
  if (typeof ended !== 'object') return `stopped by ${name}${safe ? `: ${safe}` : ''}`;
  const waiting = ended.waits.join(' and ');
  if (!safe) return `stopped by ${name}${waiting ? ` while waiting for ${waiting}` : ''}`;
  const late = `${STOP_GRACE_MS / 1000} s after the stop`;
  return `${waiting ? `stopped by ${name} while waiting for ${waiting}, still waiting ${late}` : `stopped by ${name}: no safe point came ${late}`}; what it recorded stands, and a lease it held is free again within a minute`;
}

const HELP = ['--help', '-h'];

/** Help and version, answered before any command runs; undefined when argv asks for neither. */
function answerHelp(argv: string[], io: Io): number | undefined {
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === '-v' || argv[0] === 'version') {
    io.stdout(`exposure-alerts ${version()}\n`);
    return EXIT.ok;
  }
  const topic = argv[0] === 'help' ? argv.slice(1) : undefined;
  const asked = topic && findCommand(topic);
  if (asked) {
    io.stdout(commandHelp(asked.command));
    return EXIT.ok;
  }
  // A group's help: `events --help`, `help events`; a group alone is a usage error that shows it.
  const word = topic ? topic[0] : argv[0];
  const members = groupMembers(word);
  if (word && members.length && !findCommand(topic ?? argv)) {
    const rest = topic ? topic.slice(1) : argv.slice(1);
    if (rest.length === 0 && !topic) {
      io.stderr(groupHelp(word, members));
      return EXIT.usage;
    }
    if (topic || rest.every((a) => HELP.includes(a))) {
      io.stdout(groupHelp(word, members));
      return EXIT.ok;
    }
  }
  if (argv.length === 0 || argv[0] === 'help' || HELP.includes(argv[0] as string)) {
    (argv.length === 0 ? io.stderr : io.stdout)(helpText());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  return undefined;
}

function unknownCommand(argv: string[]): UsageError {
  const word = argv[0] as string;
  const members = groupMembers(word);
  return new UsageError(
    members.length
      ? `unknown command "${argv.join(' ')}": ${word} takes ${members.map((c) => c.path.slice(1).join(' ')).join(', ')} (run exposure-alerts ${word} --help)`
      : `unknown command "${argv.join(' ')}"; run exposure-alerts help`,
  );
}

export async function runCli(
  argv: string[],
  io: Io,
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  const level = io.env.LOG_LEVEL?.toLowerCase();
  const answered = answerHelp(argv, io);
  if (answered !== undefined) return answered;
  let command: Command | undefined;
  try {
    const found = findCommand(argv);
    if (!found) throw unknownCommand(argv);
    command = found.command;
    const { rest } = found;
    if (rest.some((a) => HELP.includes(a))) {
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
    // Before the folder's deployment is opened: a command refused beside a dry run opens nothing.
    const dry = besideDryRun(command, io.env, io.stderr);
    const local = await useLocalDeployment(io.env, command.uses ?? {}, io.stderr);
    // The local deployment gave this command its upstream: the folder's emulator.
    const emulator = local?.env.EXPOSURE_API_URL;
    try {
      const running = command.run({
        values: parsed.values as Record<string, string | boolean | undefined>,
        positionals: parsed.positionals,
        io: local ? { ...io, env: local.env } : io,
        logger,
        warn,
        signal,
        ...(emulator && emulator !== io.env.EXPOSURE_API_URL ? { localEmulatorUrl: emulator } : {}),
        ...dry,
      });
      // A command without safe points of its own is stopped where it stands, one with them when
      // its next one has not come STOP_GRACE_MS after the stop (a dependency that never answers):
      // what it left undone is what a crash would leave, which every action and record is built
      // to survive. A send or a page in flight usually ends well within the grace.
      const stopped = command.service
        ? undefined
        : abandonAfter(signal, command.stopsSafely === undefined ? 0 : STOP_GRACE_MS);
      running.catch(() => {}); // abandoned when stopped; its failure is no longer anyone's news
      const code = await (stopped ? Promise.race([running, stopped.at]) : running).finally(() =>
        stopped?.cancel(),
      );
      if (signal.aborted && !command.service) {
        const { code: stopCode, name } = interruption(signal);
        if (name) io.stderr(`exposure-alerts: ${terminalSafe(stopLine(name, command, code))}\n`);
        return stopCode;
      }
      return (typeof code === 'object' ? undefined : code) ?? EXIT.ok;
    } finally {
      await local?.close();
    }
  } catch (error) {
    const { code, line } = describeFailure(error, command && localHint(io.env, command.uses ?? {}));
    // The line can quote the upstream or a file; `multiline` keeps a config error's list of problems.
    io.stderr(`exposure-alerts: ${terminalSafe(line, { multiline: true })}\n`);
    if (level === 'debug' && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return code;
  }
}
