/**
 * `silences add|list|expire` (interface.md section 6): run-time silences from a terminal, through
 * the very functions the HTTP routes call (api/silences.ts), with the same checks and audit trail;
 * the client recorded is `cli:<os user>`, or `cli:<NAME>` with `--by NAME`. They need the table
 * only: no config, no secret, no upstream credentials, so they work in the middle of an incident
 * from any machine that reaches the table.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../api/errors.ts';
import { addSilence, expireSilence, parseSilenceId, type SilenceDeps } from '../../api/silences.ts';
import { systemClock } from '../../clock.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import { checkSilenceRequest, MAX_BY_CHARS, type Silence } from '../../rules/silences.ts';
import { DynamoSilenceAudit } from '../../state/audit.ts';
import { syncedClock } from '../../state/clock-sync.ts';
import type { TableIo } from '../../state/io.ts';
import { GetItemCommand } from '../../state/sdk.ts';
import { SilenceStore } from '../../state/silences.ts';
import { createDynamoClient, ensureTable } from '../../state/table.ts';
import { issuesToText } from '../../upstream/validate.ts';
import type { Command, CommandContext } from '../command.ts';
import { terminalSafe } from '../terminal.ts';
import { cliClientName } from './api.ts';

/** The table of TABLE_NAME (created first when DYNAMODB_ENDPOINT points at a local DynamoDB). */
export async function openTable(ctx: CommandContext): Promise<{ io: TableIo; close: () => void }> {
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
    io: { client, tableName: env.tableName, clock },
    close: () => client.destroy(),
  };
}

/** `cli:<NAME>` from `--by`, else `cli:<os user>` (`cli` where the user cannot be read). */
export function cliActor(by: unknown): string {
  if (by !== undefined) {
    const name = String(by).trim();
    if (!name || name.length > MAX_BY_CHARS || /[\u0000-\u001f\u007f]/.test(name))
      throw new UsageError(`--by must be a name of 1 to ${MAX_BY_CHARS} printable characters`);
    return `cli:${name}`;
  }
  return cliClientName();
}

async function withSilences<T>(ctx: CommandContext, work: (deps: SilenceDeps) => Promise<T>): Promise<T> {
  const table = await openTable(ctx);
  try {
    return await work({
      silences: new SilenceStore(table.io),
      silenceAudit: new DynamoSilenceAudit(table.io.client, table.io.tableName),
      logger: ctx.logger,
      now: () => Date.now(),
    });
  } catch (error) {
    // What the API answers 400 or 404 is a usage error here (exit 2), with the same message.
    if (error instanceof ApiError && (error.code === 'invalid_request' || error.code === 'not_found'))
      throw new UsageError(error.message);
    throw error;
  } finally {
    table.close();
  }
}

/** One silence on one line: user text (reason, names) made safe for the terminal. */
export function describeSilence(s: Silence, now: number): string {
  const state = s.expiredAt
    ? `expired by ${s.expiredBy ?? '?'} at ${s.expiredAt}`
    : Date.parse(s.until) <= now
      ? `ended at ${s.until}`
      : `until ${s.until}`;
  return terminalSafe(
    `${s.id}  ${state}  match ${JSON.stringify(s.match)}  by ${s.createdBy} at ${s.createdAt}  reason: ${s.reason}`,
  );
}

function required(ctx: CommandContext, name: string): string {
  const value = ctx.values[name];
  if (typeof value !== 'string' || value === '')
    throw new UsageError(
      `--${name} is required (usage: exposure-alerts silences add --match '<json>' --until <timestamp or duration> --reason <text>)`,
    );
  return value;
}

export const silencesAddCommand: Command = {
  path: ['silences', 'add'],
  example: `exposure-alerts silences add --match '{"types":["paste"]}' --until 4h --reason "paste noise during the migration"`,
  optionHelp: {
    match:
      'which alerts, as a route match in JSON (kind, sources, severity, types, tags, identifiers, domains)',
    until: 'when it ends: a timestamp (2026-12-31T00:00:00Z) or a duration from now (PT4H, 4h, 30m, 1d)',
    reason: 'why, for the record (1 to 500 characters)',
    by: 'who made it (default: your user name)',
    json: 'print the silence as JSON',
  },
  uses: { table: true },
  usage: "silences add --match '<json>' --until <timestamp|duration> --reason <text> [--by NAME] [--json]",
  summary: 'silence matching alerts now, until a time or for a duration (PT4H); prints its id',
  options: {
    match: { type: 'string' },
    until: { type: 'string' },
    reason: { type: 'string' },
    by: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(ctx) {
    const text = required(ctx, 'match');
    const until = required(ctx, 'until');
    const reason = required(ctx, 'reason');
    const client = cliActor(ctx.values.by);
    let match: unknown;
    try {
      match = JSON.parse(text);
    } catch (error) {
      throw new UsageError(
        `--match is not valid JSON (${(error as Error).message}); give the route match shape, e.g. '{"types": ["paste"]}'`,
      );
    }
    const body = { match, until, reason };
    // Checked before the table is opened: a bad request touches nothing.
    const checked = checkSilenceRequest(body, Date.now());
    if (!checked.ok) throw new UsageError(`the silence is invalid: ${issuesToText(checked.issues)}`);
    for (const warning of checked.warnings) ctx.io.stderr(`warning: ${warning}\n`);
    const silence = await withSilences(ctx, (deps) =>
      addSilence(deps, { client, requestId: randomUUID(), body }),
    );
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
  example: 'exposure-alerts silences list --all',
  optionHelp: { all: 'the ended silences too', json: 'print the silences as JSON' },
  uses: { table: true },
  usage: 'silences list [--all] [--json]',
  summary: 'the active silences (with --all, the ended ones too): id, match, until, reason, by whom, when',
  options: { all: { type: 'boolean' }, json: { type: 'boolean' } },
  async run(ctx) {
    const all = Boolean(ctx.values.all);
    const items = await withSilences(ctx, (deps) => (all ? deps.silences.all() : deps.silences.active()));
    if (ctx.values.json) {
      ctx.io.stdout(`${terminalSafe(JSON.stringify(items, null, 2), { multiline: true })}\n`);
      return 0;
    }
    if (items.length === 0) {
      ctx.io.stdout(all ? 'no silences\n' : 'no active silences\n');
      return 0;
    }
    const now = Date.now();
    for (const s of items) ctx.io.stdout(`${describeSilence(s, now)}\n`);
    return 0;
  },
};

export const silencesExpireCommand: Command = {
  path: ['silences', 'expire'],
  example: 'exposure-alerts silences expire s-20261124-ab12cd',
  optionHelp: { by: 'who ended it (default: your user name)' },
  uses: { table: true },
  usage: 'silences expire <id> [--by NAME]',
  summary: 'end a silence now; it is kept, marked expired, for the record',
  options: { by: { type: 'string' } },
  positionals: [1, 1],
  async run(ctx) {
    const client = cliActor(ctx.values.by);
    let id: string;
    try {
      id = parseSilenceId(ctx.positionals[0]);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const { silence, already } = await withSilences(ctx, (deps) =>
      expireSilence(deps, { client, requestId: randomUUID(), id }),
    );
    ctx.io.stdout(
      `${already ? `${silence.id} had ended already; nothing changed` : `${silence.id} expired`}\n${describeSilence(silence, Date.now())}\n`,
    );
    return 0;
  },
};
