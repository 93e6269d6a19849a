/**
 * `status [--json]` (docs/cli.md): streams, destinations, silences and quota at a
 * glance, and each identity provider of the config (its last lookup, whether it refuses our
 * credentials), read from the table alone (state/status.ts: a few requests, no Scan), so it answers
 * even where the config or the upstream is the problem.
 */
import { systemClock } from '../../clock.ts';
import { PROVIDER_LABELS, type ProviderType } from '../../identity/words.ts';
import type { Status } from '../../state/status.ts';
import type { Command } from '../command.ts';
import { formatTable, tableWidth, terminalSafe } from '../terminal.ts';
import { openTable } from './silences.ts';

/** A number of seconds as a reader takes it in: `42 s`, `12 min`, `45 h`. */
function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s < 120 ? `${s} s` : s < 7_200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3_600)} h`;
}

function ago(iso: string | null, now: number): string {
  return iso ? `${span((now - Date.parse(iso)) / 1000)} ago` : 'never';
}

/**
 * The status as an operator reads it, its tables `width` wide. Names come from the config: made
 * safe for the terminal.
 */
export function describeStatus(status: Status, now: number, width = 80): string[] {
  const lines: string[] = [];
  if (status.streams.length === 0 && status.destinations.length === 0) {
    lines.push('no poller has run against this table yet: no streams or destinations are known');
  }
  // Grouped by tenant (docs/configuration.md): the top-level sources first, then each tenant's.
  const groups = new Map<number | undefined, Status['streams']>();
  for (const s of status.streams) {
    const list = groups.get(s.tenant?.id);
    if (list) list.push(s);
    else groups.set(s.tenant?.id, [s]);
  }
  for (const [id, streams] of [...groups].sort(([a], [b]) => (a ?? -1) - (b ?? -1))) {
    const tenant = streams[0]?.tenant;
    lines.push(
      id === undefined ? 'streams:' : `streams of tenant ${terminalSafe(tenant?.name ?? '')} (${id}):`,
    );
    lines.push(
      ...formatTable(
        [
          ['STREAM', 'LAST POLLED', 'LAG', 'LAST RESULT'],
          ...streams.map((s) => [
            s.stream,
            ago(s.lastPolledAt, now),
            s.lagSeconds === null ? '-' : span(s.lagSeconds),
            s.lastResult ?? '-',
          ]),
        ],
        { width },
      ),
    );
  }
  if (status.destinations.length) {
    lines.push('destinations:');
    lines.push(
      ...formatTable(
        [
          ['DESTINATION', 'PENDING', 'DEAD', 'REFUSING'],
          ...status.destinations.map((d) => [
            d.destination,
            `${d.pending}${d.pendingMore ? '+' : ''}`,
            `${d.dead}${d.deadMore ? '+' : ''}`,
            d.refusing ? 'yes' : 'no',
          ]),
        ],
        { width },
      ),
    );
  }
  if (status.identityProviders?.length) {
    lines.push('identity providers:');
    const providers = status.identityProviders;
    lines.push(
      ...formatTable(
        [
          ['SCOPE', 'PROVIDER', 'TYPE', 'LAST LOOKUP', 'REFUSING'],
          ...providers.map((p) => [
            p.tenant ? `${p.tenant.name} (${p.tenant.id})` : 'top level',
            p.provider,
            PROVIDER_LABELS[p.type as ProviderType] ?? p.type,
            ago(p.lastLookupAt, now),
            p.refusing ? `yes, since ${p.refusedAt ? ago(p.refusedAt, now) : 'unknown'}` : 'no',
          ]),
        ],
        { width },
      ),
    );
    // Whole, under the table: what the provider answered is what to fix.
    for (const p of providers.filter((p) => p.refusing))
      lines.push(
        terminalSafe(
          `  ${p.provider}${p.tenant ? ` (tenant ${p.tenant.id})` : ''} refuses our credentials: ${p.refusedMessage ?? 'no answer recorded'}; check them with exposure-alerts identity test ${p.provider}${p.tenant ? ` --tenant ${p.tenant.id}` : ''}`,
        ),
      );
  }
  lines.push(`silences: ${status.silences} active`);
  lines.push(
    status.quota
      ? `quota: ${status.quota.remaining} global searches left (read at ${status.quota.at})`
      : 'quota: no reading yet',
  );
  return lines;
}

export const statusCommand: Command = {
  path: ['status'],
  example: 'exposure-alerts status',
  optionHelp: { json: 'print the status as JSON' },
  uses: { table: true },
  usage: 'status [--json]',
  summary: 'streams, destinations, identity providers, silences and quota at a glance',
  options: { json: { type: 'boolean' } },
  async run(ctx) {
    const [{ SilenceStore }, { StatusReader }] = await Promise.all([
      import('../../state/silences.ts'),
      import('../../state/status.ts'),
    ]);
    const { io, close } = await openTable(ctx);
    try {
      const status = await new StatusReader(io, new SilenceStore(io)).read();
      ctx.io.stdout(
        ctx.values.json
          ? `${terminalSafe(JSON.stringify(status, null, 2), { multiline: true })}\n`
          : `${describeStatus(status, systemClock.now(), tableWidth(ctx.io)).join('\n')}\n`,
      );
      return 0;
    } finally {
      close();
    }
  },
};
