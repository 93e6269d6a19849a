/**
 * `poll events --once`, `poll credentials --once`, `deliver --once`, `deliveries list`,
 * `deliveries retry`: the poll cycle and the delivery queue from the command line, on the same
 * runtime the Lambda functions use.
 */

import { resolve } from 'node:path';
import type { DeliverySummary } from '../../deliver/types.ts';
import { readEnvironment } from '../../env.ts';
import { NotFoundError, UsageError } from '../../errors.ts';
import type { PollKind } from '../../poll/streams.ts';
import type { StreamResult } from '../../poll/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { DeliveryQueue } from '../../state/records/index.ts';
import type { DeliveryRecord, DeliveryStatus } from '../../state/records/record.ts';
import { type Command, type CommandContext, credentialsRejected } from '../command.ts';
import { DATA_DIR } from '../local.ts';
import { formatTable, fromNow, tableWidth, terminalSafe, useColor } from '../terminal.ts';
import { openTable } from './silences.ts';

export const DEFAULT_MAX_SECONDS = 300;
/** Where, under `.data/`, a dry run leaves each message's items for the `preview` it names. */
export const DRY_RUN_FILES = 'dry-run';

function maxSeconds(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_SECONDS;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1) {
    throw new UsageError('--max-seconds must be a whole number of seconds, at least 1');
  }
  return Number(value);
}

export async function runtimeFor(ctx: CommandContext, polls = true): Promise<Runtime> {
  const { createRuntime } = await import('../../runtime.ts');
  return createRuntime({
    polls,
    env: readEnvironment(ctx.io.env),
    logger: ctx.logger,
    warn: ctx.warn,
    write: (text) => ctx.io.stdout(text.endsWith('\n') ? text : `${text}\n`),
    color: useColor(ctx.io),
    ...(ctx.io.clock ? { clock: ctx.io.clock } : {}),
    // Beside `start --dry-run` (cli/local.ts): sends nothing, acts on nothing, and leaves its
    // messages' items where the dry run does.
    ...(ctx.dryRun ? { dryRun: true, dryRunFiles: resolve(DATA_DIR, DRY_RUN_FILES) } : {}),
  });
}

/**
 * The delivery records and the config's destination names, for commands that only read and
 * re-queue records: no upstream credentials and no destination secrets are needed for that.
 */
async function deliveryQueueFor(
  ctx: CommandContext,
): Promise<{ queue: DeliveryQueue; destinations: string[]; close: () => void }> {
  const [{ loadAlertsConfig }, { DeliveryRecords }] = await Promise.all([
    import('../../rules/source.ts'),
    import('../../state/records/index.ts'),
  ]);
  const env = readEnvironment(ctx.io.env);
  const { config } = await loadAlertsConfig(env, (text) => ctx.warn(`config: ${text}`));
  const { io, close } = await openTable(ctx);
  return {
    queue: new DeliveryRecords(io.client, io.tableName, io.clock).queue,
    destinations: Object.keys(config.destinations),
    close,
  };
}

export function describeStream(s: StreamResult): string {
  const parts = [`${s.pages} page${s.pages === 1 ? '' : 's'}`, `${s.items} items`, `${s.newItems} new`];
  if (s.queued) parts.push(`${s.queued} queued`);
  if (s.silenced) parts.push(`${s.silenced} silenced`);
  if (s.baseline) parts.push(`${s.baseline} baselined`);
  if (s.unrouted) parts.push(`${s.unrouted} matched no route`);
  if (s.quarantined) parts.push(`${s.quarantined} quarantined`);
  // The error message can quote the upstream's own words.
  return terminalSafe(
    `  ${s.stream}: ${s.status}, ${parts.join(', ')}${s.error ? ` (${s.error.message})` : ''}`,
  );
}

/** A pass's line per destination; a dry run's says what it would send, never that it sent. */
export function describeDelivery(d: DeliverySummary, dryRun = false): string[] {
  return d.destinations.map(
    (r) =>
      `  ${r.destination}: ${r.status}${r.pausedUntil ? ` until ${r.pausedUntil}` : ''}, ${dryRun ? `would send ${r.sent}` : `${r.sent} sent`} in ${r.messages} message${r.messages === 1 ? '' : 's'}` +
      `${r.retrying ? `, ${r.retrying} to retry` : ''}${r.dead ? `, ${r.dead} dead` : ''}` +
      `${r.silenced ? `, ${r.silenced} held back by a silence` : ''}` +
      `${r.passes && r.passes > 1 ? ` (${r.passes} passes)` : ''}` +
      `${r.left ? `, ${r.left}${r.leftMore ? ' or more' : ''} left for the next run` : ''}`,
  );
}

function pollCommand(kind: PollKind): Command {
  return {
    path: ['poll', kind],
    example: `exposure-alerts poll ${kind} --once --max-seconds 60`,
    optionHelp: {
      once: 'run one cycle and exit (required: schedules run it, npm start loops for you)',
      'max-seconds': 'the time budget in seconds (default 300): streams left unpolled go first next time',
      json: 'print the summary as JSON',
    },
    uses: { table: true, upstream: true },
    beside: 'dry',
    stopsSafely:
      'the pages read are recorded, and what they queued is left for the next delivery pass; the next run resumes each stream from its cursor',
    usage: `poll ${kind} --once [--max-seconds N] [--json]`,
    summary:
      kind === 'events'
        ? 'one cycle over tenant events and every identifier group, then one delivery pass'
        : 'one cycle over the credential search of every configured domain, then one delivery pass',
    options: { once: { type: 'boolean' }, 'max-seconds': { type: 'string' }, json: { type: 'boolean' } },
    async run(ctx) {
      if (!ctx.values.once)
        throw new UsageError(`poll ${kind} runs one cycle: pass --once (npm start runs them on a schedule)`);
      const seconds = maxSeconds(ctx.values['max-seconds']);
      const { runPollCycle } = await import('../../poll/cycle.ts');
      const runtime = await runtimeFor(ctx);
      const json = ctx.values.json === true;
      // Each stream's line as soon as it is polled: a long cycle shows its progress.
      if (!json) ctx.io.stdout(`poll ${kind}:\n`);
      const summary = await runPollCycle(
        runtime.cycle,
        kind,
        // Ctrl-C ends the budget early: no page or send starts after it (poll/cycle.ts).
        { deadline: Date.now() + seconds * 1000, stop: ctx.signal },
        json ? {} : { onStream: (result) => ctx.io.stdout(`${describeStream(result)}\n`) },
      );
      if (json) ctx.io.stdout(`${terminalSafe(JSON.stringify(summary, null, 2), { multiline: true })}\n`);
      else
        ctx.io.stdout(
          [
            ...(summary.streams.length ? [] : ['  (no streams)']),
            'delivery:',
            ...describeDelivery(summary.delivery, runtime.dryRun),
            '',
          ].join('\n'),
        );
      const failed = summary.streams.find((s) => s.status === 'unauthorized' || s.status === 'failed');
      if (failed?.error) {
        const detail = `${failed.stream}: ${failed.error.message}`;
        const line = failed.status === 'unauthorized' ? credentialsRejected(detail) : detail;
        ctx.io.stderr(`exposure-alerts: ${terminalSafe(line)}\n`);
      }
      return summary.exitCode;
    },
  };
}

export const pollEventsCommand = pollCommand('events');
export const pollCredentialsCommand = pollCommand('credentials');

export const deliverCommand: Command = {
  path: ['deliver'],
  example: 'exposure-alerts deliver --once',
  optionHelp: {
    once: 'run one delivery pass and exit (required)',
    'max-seconds': 'the time budget in seconds (default 300): what is left goes out next time',
  },
  // The upstream only to finish an action a crash interrupted (actions/events.ts finishActions).
  uses: { table: true, upstream: true },
  beside: 'dry',
  stopsSafely: 'every send started was recorded; what is left goes out on the next delivery pass',
  usage: 'deliver --once [--max-seconds N]',
  summary: 'one delivery pass over pending deliveries whose retry time has come',
  options: { once: { type: 'boolean' }, 'max-seconds': { type: 'string' } },
  async run(ctx) {
    if (!ctx.values.once) throw new UsageError('deliver runs one pass: pass --once');
    const seconds = maxSeconds(ctx.values['max-seconds']);
    const { runDeliveryPass } = await import('../../deliver/pass.ts');
    const runtime = await runtimeFor(ctx, false);
    // --max-seconds bounds when sends may start; one in flight then keeps its full timeout.
    const summary = await runDeliveryPass(runtime.deliver, {
      deadline: Date.now() + seconds * 1000,
      stop: ctx.signal,
    });
    const stopped = ctx.signal.aborted ? [] : summary.destinations.filter((d) => d.status === 'budget');
    const left = stopped.reduce((n, d) => n + (d.left ?? 0), 0);
    const more = stopped.some((d) => d.leftMore) ? ' or more' : '';
    ctx.io.stdout(
      [
        'delivery:',
        ...describeDelivery(summary, runtime.dryRun),
        ...(stopped.length
          ? [
              `stopped at --max-seconds ${seconds}: ${left}${more} deliver${left === 1 && !more ? 'y' : 'ies'} left for the next run`,
            ]
          : []),
        '',
      ].join('\n'),
    );
    return summary.destinations.some((d) => d.status === 'failed') ? 1 : 0;
  },
};

/**
 * Delivery records as a table `width` wide, one line each whatever its id (the upstream's uid) or
 * last error (a destination's reply) holds: a newline in either is escaped, so it cannot forge a
 * record's line. The id stays whole: `deliveries retry` takes it.
 */
export function deliveriesTable(records: readonly DeliveryRecord[], now: number, width = 80): string[] {
  const rows = records.map((r) => {
    // Pending: when it is tried next; sent: when it went; else when it became what it is.
    const at = r.status === 'pending' ? r.nextAttemptAt : r.status === 'sent' ? r.sentAt : r.updatedAt;
    const detail = [
      r.followUp ? `follow-up: ${r.followUp.action.type} by ${r.followUp.action.by}` : '',
      r.lastError ? `last error: ${r.lastError}` : '',
      r.note ? `note: ${r.note}` : '',
    ].filter(Boolean);
    return [
      r.id,
      r.status,
      String(r.attempts),
      at ? fromNow(at, now) : '-',
      r.routes.join(',') || '-',
      detail.join('; ') || '-',
    ];
  });
  // DETAIL says why (a note, the last error): ROUTES, then TRIES, give way before it is cut short.
  return formatTable([['ID', 'STATUS', 'TRIES', 'WHEN', 'ROUTES', 'DETAIL'], ...rows], {
    width,
    keep: [0],
    room: { column: 5, least: 40, drop: [4, 2] },
  });
}

const STATUSES: DeliveryStatus[] = ['pending', 'sent', 'dead', 'silenced', 'baseline'];

export const deliveriesListCommand: Command = {
  path: ['deliveries', 'list'],
  example: 'exposure-alerts deliveries list --status dead',
  optionHelp: {
    status: 'only records with this status: pending, sent, dead, silenced or baseline',
    limit: 'at most this many records (default 100)',
    json: 'print the records as JSON',
  },
  uses: { table: true },
  usage: 'deliveries list [--status pending|sent|dead|silenced|baseline] [--limit N] [--json]',
  summary: 'inspect delivery records',
  options: { status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run(ctx) {
    const status = ctx.values.status as DeliveryStatus | undefined;
    if (status !== undefined && !STATUSES.includes(status)) {
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    }
    const limitText = ctx.values.limit;
    if (
      limitText !== undefined &&
      (typeof limitText !== 'string' || !/^\d+$/.test(limitText) || Number(limitText) < 1)
    ) {
      throw new UsageError(`--limit must be a whole number, at least 1 (got ${JSON.stringify(limitText)})`);
    }
    const { queue, destinations, close } = await deliveryQueueFor(ctx);
    const records = await queue
      .list({ status, destinations, limit: limitText ? Number(limitText) : 100 })
      .finally(close);
    if (ctx.values.json) {
      ctx.io.stdout(
        `${terminalSafe(
          JSON.stringify(
            records.map(({ item: _item, ...rest }) => rest),
            null,
            2,
          ),
          { multiline: true },
        )}\n`,
      );
      return 0;
    }
    if (records.length === 0) {
      ctx.io.stdout(`no deliveries${status ? ` with status ${status}` : ''}\n`);
      return 0;
    }
    ctx.io.stdout(`${deliveriesTable(records, Date.now(), tableWidth(ctx.io)).join('\n')}\n`);
    return 0;
  },
};

export const deliveriesRetryCommand: Command = {
  path: ['deliveries', 'retry'],
  example: 'exposure-alerts deliveries retry --all-dead',
  optionHelp: { 'all-dead': 're-queue every dead delivery instead of one id' },
  uses: { table: true },
  beside: 'refuse',
  usage: 'deliveries retry <id> | --all-dead',
  summary: 're-queue a dead delivery (or every dead one) to be sent on the next pass',
  options: { 'all-dead': { type: 'boolean' } },
  positionals: [0, 1],
  async run(ctx) {
    const [id] = ctx.positionals;
    if (Boolean(id) === Boolean(ctx.values['all-dead']))
      throw new UsageError('usage: deliveries retry <id> | --all-dead');
    const { queue, destinations, close } = await deliveryQueueFor(ctx);
    let requeued = 0;
    try {
      const ids = id
        ? [id]
        : (await queue.list({ status: 'dead', destinations, limit: 100_000 })).map((r) => r.id);
      for (const one of ids) {
        if (await queue.requeue(one)) requeued += 1;
        else if (id)
          throw new NotFoundError(
            `no dead or pending delivery with id ${one} (see: deliveries list --status dead)`,
          );
      }
    } finally {
      close();
    }
    ctx.io.stdout(
      `${requeued} deliver${requeued === 1 ? 'y' : 'ies'} re-queued; they go out on the next delivery pass\n`,
    );
    return 0;
  },
};
