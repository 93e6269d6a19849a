/**
 * `silences add|list|expire` (docs/runbook.md): run-time silences from a terminal, through
 * the very functions the HTTP routes call (api/silences.ts), with the same checks and audit trail;
 * the client recorded is `cli:<os user>`, or `cli:<NAME>` with `--by NAME`. They need the table
 * only: no config, no secret, no upstream credentials, so they work in the middle of an incident
 * from any machine that reaches the table.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../api/errors.ts';
import type { SilenceDeps } from '../../api/silences.ts';
import { systemClock } from '../../clock.ts';
import { readEnvironment } from '../../env.ts';
import { NotFoundError, UsageError } from '../../errors.ts';
import { parseJson } from '../../rules/json.ts';
import { covers, describeMatch, parseMatchers } from '../../rules/matchers.ts';
import type { Silence } from '../../rules/silences.ts';
import { syncedClock } from '../../state/clock-sync.ts';
import type { TableIo } from '../../state/io.ts';
import { issuesToText } from '../../upstream/validate.ts';
import { type Command, type CommandContext, cliClientName } from '../command.ts';
import { formatTable, fromNow, tableWidth, terminalSafe } from '../terminal.ts';

/**
 * The table of TABLE_NAME (created first when DYNAMODB_ENDPOINT points at a local DynamoDB). A dry
 * run's table (beside `start --dry-run`) reads through to the real run's, as the dry run does
 * (state/read-through.ts): its silences are the real run's and its own.
 */
export async function openTable(ctx: CommandContext): Promise<{ io: TableIo; close: () => void }> {
  // The SDK and the table's code, loaded by the commands that use the table, not by every one.
  const [{ GetItemCommand }, { createDynamoClient, ensureTable }, { readThrough }] = await Promise.all([
    import('../../state/sdk.ts'),
    import('../../state/table.ts'),
    import('../../state/read-through.ts'),
  ]);
  const env = readEnvironment(ctx.io.env);
  const client = createDynamoClient({ endpoint: env.dynamodbEndpoint });
  // A silence's times are read by every run: set this host's clock by the table's first.
  const clock = syncedClock(systemClock, client);
  try {
    if (env.dynamodbEndpoint) await ensureTable(client, env.tableName);
    await clock.settle(() =>
      client.send(
        new GetItemCommand({ TableName: env.tableName, Key: { pk: { S: 'silence' }, sk: { S: 'clock' } } }),
      ),
    );
  } catch (error) {
    client.destroy();
    throw error;
  }
  return {
    io: { client: readThrough(client, env.tableName), tableName: env.tableName, clock },
    close: () => client.destroy(),
  };
}

/** `cli:<NAME>` from `--by`, else `cli:<os user>` (`cli` where the user cannot be read). */
export async function cliActor(by: unknown): Promise<string> {
  if (by !== undefined) {
    const { MAX_BY_CHARS } = await import('../../rules/silences.ts');
    const name = String(by).trim();
    if (!name || name.length > MAX_BY_CHARS || /[\u0000-\u001f\u007f]/.test(name))
      throw new UsageError(`--by must be a name of 1 to ${MAX_BY_CHARS} printable characters`);
    return `cli:${name}`;
  }
  return cliClientName();
}

async function withSilences<T>(ctx: CommandContext, work: (deps: SilenceDeps) => Promise<T>): Promise<T> {
  const [table, { SilenceStore }, { DynamoSilenceAudit }] = await Promise.all([
    openTable(ctx),
    import('../../state/silences.ts'),
    import('../../state/audit.ts'),
  ]);
  try {
    return await work({
      silences: new SilenceStore(table.io),
      silenceAudit: new DynamoSilenceAudit(table.io.client, table.io.tableName),
      logger: ctx.logger,
      now: () => table.io.clock.now(),
    });
  } catch (error) {
    // What the API answers 400 is a usage error here (exit 2), 404 a thing not found (exit 1).
    if (error instanceof ApiError && error.code === 'invalid_request') throw new UsageError(error.message);
    if (error instanceof ApiError && error.code === 'not_found') throw new NotFoundError(error.message);
    throw error;
  } finally {
    table.close();
  }
}

/** One silence on one line, for the outcome of `expire`: user text made safe for the terminal. */
export function describeSilence(s: Silence, now: number): string {
  const state = s.expiredAt
    ? `expired by ${s.expiredBy ?? '?'} at ${s.expiredAt}`
    : Date.parse(s.until) <= now
      ? `ended at ${s.until}`
      : `until ${s.until}`;
  return terminalSafe(`${s.id}  ${state}  ${describeMatch(s.match)}  by ${s.createdBy}  reason: ${s.reason}`);
}

/** Silences as a table `width` wide: the match in matcher words, the id whole, long cells cut. */
export function silencesTable(items: readonly Silence[], now: number, width = 80): string[] {
  return formatTable(
    [
      ['ID', 'ENDS', 'BY', 'MATCH', 'REASON'],
      ...items.map((s) => [
        s.id,
        s.expiredAt ? 'expired' : fromNow(s.until, now),
        s.createdBy,
        describeMatch(s.match),
        s.reason,
      ]),
    ],
    { width, keep: [0] },
  );
}

/** The first of several options given (`--reason` or amtool's `--comment`), or undefined. */
function option(ctx: CommandContext, ...names: string[]): string | undefined {
  const given = names.filter((n) => ctx.values[n] !== undefined);
  if (given.length > 1) throw new UsageError(`--${given[0]} and --${given[1]} say the same: give one`);
  const value = given[0] === undefined ? undefined : ctx.values[given[0]];
  return typeof value === 'string' ? value : undefined;
}

const ADD_USAGE =
  "silences add --match '<json>' | <key=value>... --until <time|duration> --reason <text> [--by NAME] [--json]";

export const silencesAddCommand: Command = {
  path: ['silences', 'add'],
  aliases: [['silence', 'add']],
  example: `exposure-alerts silences add types=paste 'severity>=high' --duration 4h --comment "paste noise during the migration"`,
  optionHelp: {
    match:
      "which alerts, as a route match in JSON; or give key=value matchers instead (types=paste 'severity>=high' tags=vip toplevel=true; quote a >= for the shell)",
    until: 'when it ends: a timestamp (2026-12-31T00:00:00Z) or a duration from now (4h, 30m, 1d, PT4H)',
    duration: 'the same as --until, as amtool users type it',
    reason: 'why, for the record (1 to 500 characters)',
    comment: 'the same as --reason',
    by: 'who made it (default: your user name)',
    author: 'the same as --by',
    json: 'print the silence as JSON',
  },
  uses: { table: true },
  usage: ADD_USAGE,
  summary:
    'silence matching alerts from the next poll cycle on, until a time or for a duration; prints its id',
  options: {
    match: { type: 'string' },
    until: { type: 'string' },
    duration: { type: 'string' },
    reason: { type: 'string' },
    comment: { type: 'string' },
    by: { type: 'string' },
    author: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: [0, 100],
  async run(ctx) {
    const text = option(ctx, 'match');
    const until = option(ctx, 'until', 'duration');
    const reason = option(ctx, 'reason', 'comment');
    const missing = [!until && '--until (or --duration)', !reason && '--reason (or --comment)'].filter(
      Boolean,
    );
    if (missing.length)
      throw new UsageError(`${missing.join(' and ')} required (usage: exposure-alerts ${ADD_USAGE})`);
    if (text !== undefined && ctx.positionals.length)
      throw new UsageError('give --match or key=value matchers, not both');
    if (text === undefined && !ctx.positionals.length)
      throw new UsageError(
        `say what to silence: key=value matchers (types=paste 'severity>=high') or --match '<json>' (usage: exposure-alerts ${ADD_USAGE})`,
      );
    const [{ addSilence }, { checkSilenceRequest }] = await Promise.all([
      import('../../api/silences.ts'),
      import('../../rules/silences.ts'),
    ]);
    const client = await cliActor(option(ctx, 'by', 'author'));
    let match: unknown;
    try {
      match = text === undefined ? parseMatchers(ctx.positionals) : parseJson(text);
    } catch (error) {
      throw new UsageError(
        text === undefined
          ? (error as Error).message
          : `--match is not valid JSON (${(error as Error).message}); give the route match shape, e.g. '{"types": ["paste"]}'`,
      );
    }
    const body = { match, until, reason };
    // Checked before the table is opened: a bad request touches nothing.
    const checked = checkSilenceRequest(body, Date.now());
    if (!checked.ok) throw new UsageError(`the silence is invalid: ${issuesToText(checked.issues)}`);
    const { silence, warnings } = await withSilences(ctx, (deps) =>
      addSilence(deps, { client, requestId: randomUUID(), body }),
    );
    for (const warning of warnings) ctx.io.stderr(`warning: ${warning}\n`);
    ctx.io.stdout(
      ctx.values.json
        ? `${terminalSafe(JSON.stringify(silence, null, 2), { multiline: true })}\n`
        : `${silence.id}\n`,
    );
    return 0;
  },
};

export const silencesListCommand: Command = {
  path: ['silences', 'list'],
  aliases: [
    ['silences', 'query'],
    ['silence', 'list'],
    ['silence', 'query'],
  ],
  example: 'exposure-alerts silences list types=paste --all',
  optionHelp: {
    all: 'the ended silences too',
    quiet: 'ids only, one a line (for silences expire $(silences query -q ...))',
    json: 'print the silences as JSON',
  },
  uses: { table: true },
  usage: 'silences list|query [key=value...] [--all] [-q] [--json]',
  summary:
    'the active silences (with --all, the ended ones too): id, when it ends, by whom, match, reason; key=value matchers keep those whose match holds them',
  options: { all: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' }, json: { type: 'boolean' } },
  positionals: [0, 100],
  async run(ctx) {
    const all = Boolean(ctx.values.all);
    let query: Record<string, unknown>;
    try {
      query = parseMatchers(ctx.positionals);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const found = await withSilences(ctx, (deps) => (all ? deps.silences.all() : deps.silences.active()));
    const items = found.filter((s) => covers(s.match as Record<string, unknown>, query));
    if (ctx.values.quiet) {
      ctx.io.stdout(items.map((s) => `${s.id}\n`).join(''));
      return 0;
    }
    if (ctx.values.json) {
      ctx.io.stdout(`${terminalSafe(JSON.stringify(items, null, 2), { multiline: true })}\n`);
      return 0;
    }
    if (items.length === 0) {
      ctx.io.stdout(all ? 'no silences\n' : 'no active silences\n');
      return 0;
    }
    ctx.io.stdout(`${silencesTable(items, Date.now(), tableWidth(ctx.io)).join('\n')}\n`);
    return 0;
  },
};

export const silencesExpireCommand: Command = {
  path: ['silences', 'expire'],
  aliases: [['silence', 'expire']],
  example: 'exposure-alerts silences expire $(exposure-alerts silences query -q types=paste)',
  optionHelp: {
    by: 'who ended it (default: your user name)',
    author: 'the same as --by',
  },
  uses: { table: true },
  usage: 'silences expire <id>... [--by NAME]',
  summary: 'end silences now; each is kept, marked expired, for the record',
  options: { by: { type: 'string' }, author: { type: 'string' } },
  positionals: [1, 1000],
  async run(ctx) {
    const { expireSilence, parseSilenceId } = await import('../../api/silences.ts');
    const client = await cliActor(option(ctx, 'by', 'author'));
    const ids = ctx.positionals.map((raw) => {
      try {
        return parseSilenceId(raw);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
    });
    let missing = 0;
    for (const id of ids) {
      try {
        const { silence, already } = await withSilences(ctx, (deps) =>
          expireSilence(deps, { client, requestId: randomUUID(), id }),
        );
        ctx.io.stdout(
          `${already ? `${silence.id} had ended already; nothing changed` : `${silence.id} expired`}\n`,
        );
      } catch (error) {
        // One unknown id ends none of the others: each is said, and the exit code is 1.
        if (!(error instanceof NotFoundError)) throw error;
        missing += 1;
        ctx.io.stderr(`exposure-alerts: ${terminalSafe(error.message)}\n`);
      }
    }
    return missing ? 1 : 0;
  },
};
