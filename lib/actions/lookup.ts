/**
 * Lookups (docs/actions.md): what the leak store knows of an account, a domain or a name
 * pattern, for the analyst's next question after an alert. One door-independent function: the
 * CLI (`lookup ...`) and the API (`GET /lookup`) print or serve what it returns.
 *
 * - Accounts: endpoint 2 (up to 100 names, one request). A domain: endpoint 8. A keyword (a `*`
 *   may lead or trail): endpoint 7. One page each, and every request takes its turn from the
 *   shared governor like any other (the upstream client does).
 * - The answer: the identities found, each with its leaks (source name, when leaked, and the
 *   password per the password policy: masked by default, left out when `hidden`, shown only when
 *   `clear`), leaks newest first, identities by their newest leak; at most 20 identities, `more`
 *   counting the rest of the page.
 */

import type { PasswordPolicy } from '../rules/config.ts';
import { domainName } from '../rules/match-schema.ts';
import { applyPasswordPolicy } from '../rules/passwords.ts';
import type { Identity, LegacyPasswordRecord } from '../upstream/schemas.ts';

/** Identities an answer lists; `more` counts the rest. */
export const LOOKUP_MAX_IDENTITIES = 20;
/** Accounts one lookup may name: one request of endpoint 2. */
export const LOOKUP_MAX_ACCOUNTS = 100;
/** Records asked of endpoints 7 and 8: one page. */
export const LOOKUP_PAGE_SIZE = 1_000;

/**
 * What to look up, and (with `tenants`) as which tenant: an id or a name of a `tenants` entry
 * (docs/actions.md). The door resolves it to that tenant's client.
 */
export type LookupQuery = ({ account: string[] } | { domain: string } | { keyword: string }) & {
  tenant?: string;
};

/** The `tenants` entry a lookup names (by id or name, case-insensitive), or undefined for none. */
export function lookupTenant<T extends { id: number; name: string }>(
  tenants: readonly T[],
  wanted: string | undefined,
): T | undefined {
  if (wanted === undefined) return undefined;
  const w = wanted.trim().toLowerCase();
  const found = tenants.find((t) => String(t.id) === w || t.name.toLowerCase() === w);
  if (!found)
    throw new RangeError(
      tenants.length
        ? `no tenant ${JSON.stringify(wanted.slice(0, 60))}: the tenants are ${tenants.map((t) => `${t.id} (${t.name})`).join(', ')}`
        : `no tenant ${JSON.stringify(wanted.slice(0, 60))}: the config has no tenants`,
    );
  return found;
}

export interface Leak {
  source: string;
  /** When the source leaked (else breached, else when the store got the record); null if none parses. */
  leakedAt: string | null;
  /** Per the password policy; absent when it is `hidden` or the record holds none. */
  password?: string;
}

export interface LookupAnswer {
  identities: { name: string; leaks: Leak[] }[];
  more: number;
}

export interface LookupDeps {
  upstream: {
    identitiesByAccounts(accounts: readonly string[]): Promise<{ identities: Record<string, Identity> }>;
    identitiesByDomain(domain: string, params: { size?: number }): Promise<{ items: Identity[] }>;
    identitiesByKeyword(keyword: string, params: { size?: number }): Promise<{ items: Identity[] }>;
  };
  passwords: PasswordPolicy;
}

/**
 * What is wrong with a query, in words for its door; undefined when it may go. A domain or a
 * keyword becomes one segment of the upstream's path, so a domain must be a domain name (the
 * config's rule for `credentials.domains`) and a keyword may not be a dot segment or hold a slash.
 */
export function lookupProblem(query: LookupQuery): string | undefined {
  if ('account' in query) {
    if (query.account.length < 1 || query.account.length > LOOKUP_MAX_ACCOUNTS)
      return `give 1 to ${LOOKUP_MAX_ACCOUNTS} account names (got ${query.account.length})`;
    if (query.account.some((a) => a.trim() === '')) return 'an account name is empty';
    return undefined;
  }
  const value = 'domain' in query ? query.domain : query.keyword;
  if (value.trim() === '') return `the ${'domain' in query ? 'domain' : 'keyword'} is empty`;
  const quoted = JSON.stringify(value.slice(0, 80));
  if ('domain' in query)
    return domainName.safeParse(value).success
      ? undefined
      : `${quoted} is not a domain name (such as example.com)`;
  if (value.replace(/^\*|\*$/g, '') === '') return 'the keyword is only wildcards';
  // The keyword is one segment of the upstream's path: a slash or a dot segment would leave it.
  if (value === '.' || value === '..' || /[/\\]/.test(value))
    return `${quoted} cannot be a keyword: it may not be . or .. nor hold a slash or a backslash`;
  return undefined;
}

export async function lookup(deps: LookupDeps, query: LookupQuery): Promise<LookupAnswer> {
  const problem = lookupProblem(query);
  if (problem) throw new RangeError(problem);
  const found: Identity[] =
    'account' in query
      ? Object.values((await deps.upstream.identitiesByAccounts(query.account)).identities)
      : 'domain' in query
        ? (await deps.upstream.identitiesByDomain(query.domain, { size: LOOKUP_PAGE_SIZE })).items
        : (await deps.upstream.identitiesByKeyword(query.keyword, { size: LOOKUP_PAGE_SIZE })).items;
  // A page may hold one account's records in several identities: one entry per name.
  const byName = new Map<string, Leak[]>();
  for (const identity of found) {
    const leaks = byName.get(identity.name) ?? [];
    for (const record of identity.passwords) leaks.push(leakOf(record, deps.passwords));
    byName.set(identity.name, leaks);
  }
  // An account with no record (endpoint 2 may still name it) was not found.
  const identities = [...byName.entries()]
    .filter(([, leaks]) => leaks.length > 0)
    .map(([name, leaks]) => ({
      name,
      leaks: leaks.sort((a, b) => newestFirst(a.leakedAt, b.leakedAt)),
    }));
  identities.sort((a, b) => newestFirst(a.leaks[0]?.leakedAt ?? null, b.leaks[0]?.leakedAt ?? null));
  return {
    identities: identities.slice(0, LOOKUP_MAX_IDENTITIES),
    more: Math.max(0, identities.length - LOOKUP_MAX_IDENTITIES),
  };
}

function leakOf(record: LegacyPasswordRecord, policy: PasswordPolicy): Leak {
  const source = record.source;
  const when = [source?.leaked_at, source?.breached_at, record.imported_at].find(
    (t) => t && !Number.isNaN(Date.parse(t)),
  );
  const { hash } = applyPasswordPolicy({ hash: record.hash }, policy);
  return {
    source: source?.name ?? record.source_id ?? 'unknown',
    leakedAt: when ? new Date(Date.parse(when)).toISOString() : null,
    ...(typeof hash === 'string' && hash !== '' ? { password: hash } : {}),
  };
}

/** Later first; an unknown time last. */
function newestFirst(a: string | null, b: string | null): number {
  const x = a ? Date.parse(a) : Number.NEGATIVE_INFINITY;
  const y = b ? Date.parse(b) : Number.NEGATIVE_INFINITY;
  return x === y ? 0 : x > y ? -1 : 1;
}
