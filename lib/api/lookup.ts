/**
 * `GET /lookup?account=a&account=b | ?domain=... | ?keyword=...` (docs/actions.md, scope
 * `lookup`): the query, checked (exactly one kind; names what is wrong), for actions/lookup.ts.
 */
import * as z from 'zod/mini';
import { LOOKUP_MAX_ACCOUNTS, type LookupQuery, lookupProblem } from '../actions/lookup.ts';
import { ApiError } from './errors.ts';

const USAGE =
  'use ?account=<name> (repeatable), ?domain=<domain> or ?keyword=<pattern>, and ?tenant=<id or name> with tenants';

export function parseLookupQuery(all: Record<string, string[]>): LookupQuery {
  const { tenant: tenants, ...queries } = all;
  if (tenants && tenants.length !== 1)
    throw new ApiError('invalid_request', `give one tenant (got ${tenants.length}); ${USAGE}`);
  const tenant = tenants?.[0];
  const kinds = Object.keys(queries);
  const unknown = kinds.find((k) => k !== 'account' && k !== 'domain' && k !== 'keyword');
  if (unknown !== undefined)
    throw new ApiError(
      'invalid_request',
      `unknown parameter ${JSON.stringify(unknown.slice(0, 40))}; ${USAGE}`,
    );
  if (kinds.length !== 1) throw new ApiError('invalid_request', `give exactly one kind of lookup; ${USAGE}`);
  const kind = kinds[0] as 'account' | 'domain' | 'keyword';
  const values = queries[kind] ?? [];
  if (kind !== 'account' && values.length !== 1)
    throw new ApiError('invalid_request', `give one ${kind} (got ${values.length}); ${USAGE}`);
  if (kind === 'account' && values.length > LOOKUP_MAX_ACCOUNTS)
    throw new ApiError(
      'invalid_request',
      `at most ${LOOKUP_MAX_ACCOUNTS} accounts a lookup (got ${values.length})`,
    );
  const what: LookupQuery =
    kind === 'account'
      ? { account: values }
      : kind === 'domain'
        ? { domain: values[0] ?? '' }
        : { keyword: values[0] ?? '' };
  const query: LookupQuery = tenant === undefined ? what : { ...what, tenant };
  const problem = lookupProblem(query);
  if (problem) throw new ApiError('invalid_request', problem);
  return query;
}

export const lookupAnswerSchema = z.object({
  identities: z.array(
    z.object({
      name: z.string(),
      leaks: z.array(
        z.object({ source: z.string(), leakedAt: z.nullable(z.string()), password: z.optional(z.string()) }),
      ),
    }),
  ),
  more: z.number(),
});
