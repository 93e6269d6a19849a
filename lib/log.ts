/**
 * Structured logging with secret redaction.
 *
 * Every line is one JSON object (CloudWatch-friendly) unless `format: 'pretty'` is chosen for a
 * terminal. Secrets registered with {@link Redactor.add} are replaced by `[redacted]` in the
 * final line, whatever field they hide in and in every form a line could carry them (trimmed,
 * without a trailing `/`, as a URL parser writes them, JSON-escaped), so a token that slips into
 * an error message still never reaches the log.
 *
 * @example
 * const log = createLogger({ level: 'info', name: 'poll' });
 * log.info('page fetched', { stream: 'tenant', items: 10 });
 */
import { ConfigError } from './errors.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  readonly level: LogLevel;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && value in ORDER;
}

/**
 * Every form of a secret a log line may carry: as given, trimmed of spaces, without its trailing
 * slashes (a URL is used as a base: `<url>/start`, and a non-URL shows in the error that says so),
 * as the URL parser writes it, and each of those JSON-escaped (the line is JSON, or logfmt quoted
 * as JSON).
 */
function formsOf(value: string): string[] {
  const forms = new Set<string>();
  for (const v of [value, value.trim()]) {
    forms.add(v);
    forms.add(v.replace(/\/+$/, ''));
    if (URL.canParse(v)) {
      const href = new URL(v).href;
      forms.add(href);
      forms.add(href.replace(/\/+$/, ''));
    }
  }
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms];
}

/** Secret values that must never appear in output. Shorter than 4 characters is ignored: too many false hits. */
export class Redactor {
  private readonly secrets = new Set<string>();
  /** Longest first, so a secret is never half-hidden by a shorter one inside it. */
  private ordered: string[] = [];
  add(value: string | undefined | null): void {
    if (typeof value !== 'string') return;
    const before = this.secrets.size;
    for (const form of formsOf(value)) if (form.length >= 4) this.secrets.add(form);
    if (this.secrets.size !== before) this.ordered = [...this.secrets].sort((a, b) => b.length - a.length);
  }
  redact(text: string): string {
    let out = text;
    for (const secret of this.ordered) {
      if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}

/** The process-wide redactor: secrets loaded from the secret object are registered here. */
export const redactor = new Redactor();

export interface LoggerOptions {
  level?: LogLevel;
  name?: string;
  format?: 'json' | 'pretty';
  /** Where lines go; stderr by default so stdout stays free for command output. */
  write?: (line: string) => void;
  redactor?: Redactor;
  fields?: LogFields;
  now?: () => Date;
}

/**
 * Fields every line carries while they are set, whichever logger writes it, children made long
 * before included: the Lambda invocation's (lib/invocation.ts). Lambda runs one invocation at a
 * time in a process, so they are the process's; nothing else sets them.
 */
let contextFields: LogFields = {};

/** Sets (or, with none, clears) the fields every line carries from now on. */
export function setLogContext(fields: LogFields = {}): void {
  contextFields = fields;
}

function errorFields(value: unknown): unknown {
  if (value instanceof Error) {
    const out: LogFields = { name: value.name, message: value.message };
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) out.code = code;
    return out;
  }
  return value;
}

/**
 * Fields as a person scans them on a terminal: `status=200 path=/health`; a value with a space,
 * a quote or an `=` is JSON-quoted, an object or array is JSON.
 */
function logfmt(fields: LogFields): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      if (typeof v === 'string') return `${k}=${/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`;
      return `${k}=${typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : JSON.stringify(v)}`;
    })
    .join(' ');
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const format = options.format ?? 'json';
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const red = options.redactor ?? redactor;
  const now = options.now ?? (() => new Date());
  const base: LogFields = { ...(options.name ? { logger: options.name } : {}), ...options.fields };

  const emit = (lvl: LogLevel, message: string, fields?: LogFields) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const merged: LogFields = { ...contextFields, ...base, ...fields };
    for (const [k, v] of Object.entries(merged)) merged[k] = errorFields(v);
    let line: string;
    if (format === 'pretty') {
      const extra = Object.keys(merged).length ? ` ${logfmt(merged)}` : '';
      line = `${now().toISOString().slice(11, 19)} ${lvl.toUpperCase().padEnd(5)} ${message}${extra}`;
    } else {
      line = JSON.stringify({ time: now().toISOString(), level: lvl, message, ...merged });
    }
    write(red.redact(line));
  };

  return {
    level,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) =>
      createLogger({ ...options, level, format, write, redactor: red, fields: { ...base, ...fields } }),
  };
}

/**
 * Logs why a function cannot start and returns the error to throw, its message naming every
 * problem with its path (as `config validate` prints them): the log line and the Lambda's own
 * init error both say what to fix, however many problems there are.
 */
export function startFailure(logger: Logger, name: string, error: unknown): Error {
  if (!(error instanceof ConfigError)) {
    logger.error(`${name} cannot start`, { error });
    return error instanceof Error ? error : new Error(String(error));
  }
  logger.error(`${name} cannot start: fix its configuration: ${error.detail}`, {
    problems: error.problems,
  });
  return new ConfigError(`${name} cannot start: ${error.detail}`, error.problems);
}

/** A logger that keeps its lines in memory, for tests that assert on what was (or was not) logged. */
export function memoryLogger(level: LogLevel = 'debug'): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ level, write: (line) => lines.push(line) });
  return Object.assign(logger, { lines });
}

export const silentLogger: Logger = createLogger({ level: 'error', write: () => {} });
