/**
 * `GET /lookup?account=a&account=b | ?domain=... | ?keyword=...` (docs/actions.md, scope
 * `lookup`): the query, checked (exactly one kind; names what is wrong), for actions/lookup.ts.
 */
import * as z from 'zod/mini';
import { LOOKUP_MAX_ACCOUNTS, type LookupQuery, lookupProblem } from '../actions/lookup.ts';
import type { Binding } from './auth.ts';
import { ApiError } from './errors.ts';
import { tenantToActAs } from './tenancy.ts';

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
  notFound: z.optional(
    z.array(z.string()).register(z.globalRegistry, {
      description:
        'A client bound to tenants: the accounts of the list outside its tenants’ credential domains, looked up for none.',
    }),
  ),
});

/** A `tenants` entry with its credential domains, as the catalog keeps it. */
export interface TenantDomains {
  id: number;
  name: string;
  domains?: string[];
}

/** `d` is `domain` or a subdomain of it. */
const within = (d: string, domain: string) => d === domain || d.endsWith(`.${domain}`);

/**
 * A bound client's lookup (docs/api.md): it runs as one of its tenants (`?tenant=`, tenancy.ts),
 * and reaches only its tenants' own credential domains, since the leak store is global: an account
 * `x@d` or a domain `d` where `d` is one of those domains or a subdomain of one, a keyword exactly
 * `*@d` or `*.d`. Anything else is `not_found` and reaches no upstream: 404 for a lone one; in a
 * list of accounts, an answer entry of its own (`notFound`), the others looked up.
 */
export function boundLookup(
  binding: Binding,
  tenants: readonly TenantDomains[],
  topDomains: readonly string[],
  query: LookupQuery,
): { query?: LookupQuery; notFound: string[] } {
  const choice = tenantToActAs(binding, tenants, query.tenant);
  const tenant = 'tenant' in choice ? choice.tenant : undefined;
  const domains = [
    ...tenants.filter((t) => binding.tenants.has(t.id)).flatMap((t) => t.domains ?? []),
    ...(binding.topLevel ? topDomains : []),
  ].map((d) => d.toLowerCase());
  const ours = (d: string) => domains.some((domain) => within(d.toLowerCase(), domain));
  const as = tenant === undefined ? {} : { tenant: String(tenant) };
  if ('account' in query) {
    const mine = query.account.filter((a) => a.includes('@') && ours(a.slice(a.lastIndexOf('@') + 1)));
    const notFound = query.account.filter((a) => !mine.includes(a));
    if (mine.length === 0 && query.account.length === 1) throw notFoundOf('account', query.account[0]);
    return { ...(mine.length ? { query: { account: mine, ...as } } : {}), notFound };
  }
  if ('domain' in query) {
    if (!ours(query.domain)) throw notFoundOf('domain', query.domain);
    return { query: { domain: query.domain, ...as }, notFound: [] };
  }
  const pattern = /^\*[@.](.+)$/.exec(query.keyword);
  if (!pattern || !ours(pattern[1] as string)) throw notFoundOf('keyword', query.keyword);
  return { query: { keyword: query.keyword, ...as }, notFound: [] };
}

function notFoundOf(what: string, value: string | undefined): ApiError {
  return new ApiError(
    'not_found',
    `no ${what} ${JSON.stringify(String(value).slice(0, 100))} among this client’s tenants’ credential domains`,
  );
}
