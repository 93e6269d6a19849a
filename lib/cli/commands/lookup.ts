/**
 * `lookup account <name>...`, `lookup domain <domain>`, `lookup keyword <pattern>`: what the leak
 * store knows (actions/lookup.ts), as a table, or JSON with `--json`: each identity's leaks,
 * newest first, the password per the config's policy. The upstream's text is shown escaped.
 */
import type { LookupAnswer, LookupQuery } from '../../actions/lookup.ts';
import { UsageError } from '../../errors.ts';
import type { TenantRef } from '../../model.ts';
import type { Command, CommandContext } from '../command.ts';
import { formatTable, tableWidth, terminalSafe } from '../terminal.ts';
import { runtimeFor } from './poll.ts';

type Kind = 'account' | 'domain' | 'keyword';

const ARG: Record<Kind, string> = { account: '<name>...', domain: '<domain>', keyword: '<pattern>' };
const EXAMPLE: Record<Kind, string> = {
  account: 'kim.lee@other.org',
  domain: 'acme.test',
  keyword: "'kim.*'",
};
const SUMMARY: Record<Kind, string> = {
  account: 'what the leak store knows of these accounts: their leaks, newest first',
  domain: 'the identities of a domain in the leak store, with their leaks',
  keyword: 'the identities whose name matches a pattern (a * may lead or trail), with their leaks',
};

/** The answer as a table: one row per leak, the name on its identity's first row. */
export function lookupTable(answer: LookupAnswer, width = 80): string[] {
  if (answer.identities.length === 0) return ['nothing found'];
  const rows = [['IDENTITY', 'SOURCE', 'LEAKED', 'PASSWORD']];
  for (const identity of answer.identities)
    for (const [i, leak] of identity.leaks.entries())
      rows.push([
        i === 0 ? identity.name : '',
        leak.source,
        leak.leakedAt?.slice(0, 10) ?? 'unknown',
        leak.password ?? '-',
      ]);
  // The login stays whole: it is what the identity commands take.
  const lines = formatTable(rows, { width, keep: [0] });
  if (answer.more)
    lines.push(`  … and ${answer.more} more identit${answer.more === 1 ? 'y' : 'ies'} not shown`);
  return lines;
}

function lookupCommand(kind: Kind): Command {
  return {
    path: ['lookup', kind],
    example: `exposure-alerts lookup ${kind} ${EXAMPLE[kind]}`,
    optionHelp: {
      json: 'print the answer as JSON: {"identities": [{"name", "leaks"}], "more"}',
      tenant: 'with tenants: look up as this tenant (its id or name), with its own token',
    },
    uses: { table: true, upstream: true },
    usage: `lookup ${kind} ${ARG[kind]} [--tenant ID|NAME] [--json]`,
    summary: SUMMARY[kind],
    options: { json: { type: 'boolean' }, tenant: { type: 'string' } },
    positionals: kind === 'account' ? [1, 100] : [1, 1],
    async run(ctx: CommandContext) {
      const { lookup, lookupProblem, lookupTenant } = await import('../../actions/lookup.ts');
      const [first = ''] = ctx.positionals;
      const query: LookupQuery =
        kind === 'account'
          ? { account: ctx.positionals }
          : kind === 'domain'
            ? { domain: first }
            : { keyword: first };
      const problem = lookupProblem(query);
      if (problem) throw new UsageError(problem);
      const runtime = await runtimeFor(ctx);
      let tenant: TenantRef | undefined;
      try {
        tenant = lookupTenant(runtime.config.tenants ?? [], ctx.values.tenant as string | undefined);
      } catch (error) {
        throw new UsageError(`--tenant: ${(error as Error).message}`);
      }
      const answer = await lookup(
        { upstream: runtime.upstreamFor(tenant), passwords: runtime.config.passwords },
        query,
      );
      if (ctx.values.json)
        ctx.io.stdout(`${terminalSafe(JSON.stringify(answer, null, 2), { multiline: true })}\n`);
      else for (const line of lookupTable(answer, tableWidth(ctx.io))) ctx.io.stdout(`${line}\n`);
      return 0;
    },
  };
}

export const lookupAccountCommand = lookupCommand('account');
export const lookupDomainCommand = lookupCommand('domain');
export const lookupKeywordCommand = lookupCommand('keyword');
