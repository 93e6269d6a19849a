/**
 * The `identity` config's checks beyond its schema (docs/identity.md): its errors run with the
 * config's whole check (config.ts), which a worker loads only for a config with `identity`; its
 * warnings where a person reads them, `config validate` and synth (the workers leave them out).
 *
 * A scope is the top level or one `tenants` entry, and nothing crosses between scopes: a tenant
 * without its own `identity` has no provider, whatever the top level has. So every check here goes
 * scope by scope:
 * - an error: `auto.atRisk` may list only the two actions safe to take unasked;
 * - warnings: two providers of a scope whose domains overlap (the first in config order gets the
 *   logins), `confirmCompromised` listed where an Okta provider cannot take it, and a route or
 *   silence matching `identity` that no provider can reach (it then matches nothing: a credential
 *   without a verdict matches no `identity` list).
 * A route can reach a provider when some scope it can match polls a credential domain that the
 * route's `sources` and `domains` let through and that a provider of that scope covers; domains
 * overlap when one is the other or lies under it.
 */
import { type ConfigCheck, checkWith } from './config-parse.ts';
import { domainWithin } from './match.ts';
import { type AlertsConfig, configSchema, type Match } from './schema.ts';

type Json = Record<string, unknown>;
const objectAt = (value: unknown): Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const listAt = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** What `identity.auto.atRisk` may list: revoking sessions and raising the risk lock nobody out. */
export const AUTO_ACTIONS = ['revokeSessions', 'confirmCompromised'] as const;

/**
 * The whole check of a config (config.ts's checkConfig): its shape with the identity schema, and
 * the identity keys' errors. Here, so that a worker loads it (source.ts) with the identity schema
 * only for a config that has `identity`.
 */
export function checkWithIdentity(input: unknown, now: Date): ConfigCheck {
  return checkWith(input, now, configSchema, checkIdentityReferences);
}

/** Errors the raw input shows: each `auto.atRisk` entry that is not an automatic action. */
export function checkIdentityReferences(root: Json, errors: string[]): void {
  const scopes: [string, unknown][] = [
    ['identity', root.identity],
    ...listAt(root.tenants).map((t, i): [string, unknown] => [
      `tenants[${i}].identity`,
      objectAt(t).identity,
    ]),
  ];
  for (const [path, identity] of scopes) {
    listAt(objectAt(objectAt(identity).auto).atRisk).forEach((action, j) => {
      if (typeof action === 'string' && !(AUTO_ACTIONS as readonly string[]).includes(action))
        errors.push(
          `${path}.auto.atRisk[${j}]: ${JSON.stringify(action)} cannot be automatic: identity.auto.atRisk takes only ${AUTO_ACTIONS.join(' and ')} (the other actions are for a person to take)`,
        );
    });
  }
}

/** One scope of the config: where its identity is, what it polls, its providers in config order. */
interface Scope {
  path: string;
  tenant?: { id: number; name: string };
  /** Credential domains it polls. */
  polled: string[];
  providers: { name: string; type: string; domains: string[]; userRisk?: boolean }[];
  identity: AlertsConfig['identity'];
}

function scopesOf(config: AlertsConfig): Scope[] {
  const scope = (
    path: string,
    sources: AlertsConfig['sources'],
    identity: AlertsConfig['identity'],
    tenant?: { id: number; name: string },
  ): Scope => ({
    path,
    ...(tenant ? { tenant } : {}),
    polled: sources.credentials?.domains ?? [],
    providers: Object.entries(identity?.providers ?? {}).map(([name, p]) => ({
      name,
      type: p.type,
      domains: p.domains,
      ...(p.type === 'okta' ? { userRisk: p.userRisk } : {}),
    })),
    identity,
  });
  return [
    scope('identity', config.sources, config.identity),
    ...(config.tenants ?? []).map((t, i) =>
      scope(`tenants[${i}].identity`, t.sources, t.identity, { id: t.id, name: t.name }),
    ),
  ];
}

const overlap = (a: string, b: string) => domainWithin(a, b) || domainWithin(b, a);

/** A `tenants` selector of a match (an id, or a name, or an id written as a string) naming `t`. */
function namesTenant(selector: number | string, t: { id: number; name: string }): boolean {
  if (typeof selector === 'number') return selector === t.id;
  const s = selector.trim();
  return (/^\d+$/.test(s) && Number(s) === t.id) || s.toLowerCase() === t.name.toLowerCase();
}

/** The scopes a match can take items from, by `topLevel` and `tenants`. */
function scopesMatched(match: Match, scopes: Scope[]): Scope[] {
  return scopes.filter((s) => {
    if (match.topLevel !== undefined && match.topLevel !== (s.tenant === undefined)) return false;
    if (match.tenants === undefined) return true;
    const t = s.tenant;
    return t !== undefined && match.tenants.some((sel) => namesTenant(sel, t));
  });
}

/** The credential domains of `scope` that `match` lets through by its `sources`. */
function domainsPassing(match: Match, scope: Scope): string[] {
  if (match.sources === undefined) return scope.polled;
  const prefix = scope.tenant ? `credentials:${scope.tenant.id}:` : 'credentials:';
  const named = match.sources
    .filter((s) => s.startsWith(prefix) && !(scope.tenant === undefined && /^credentials:\d+:/.test(s)))
    .map((s) => s.slice(prefix.length).trim().toLowerCase());
  return scope.polled.filter((d) => named.includes(d.trim().toLowerCase()));
}

const EVENT_ONLY = ['severity', 'types', 'tags', 'identifiers'] as const;

/** Why a match on `identity` can never hold; undefined when some provider can give it a verdict. */
function unreachable(match: Match, scopes: Scope[]): string | undefined {
  if (match.kind === 'event' || EVENT_ONLY.some((k) => match[k] !== undefined))
    return 'only credentials have a verdict and this match takes events only';
  const matched = scopesMatched(match, scopes);
  const reaches = (scope: Scope) =>
    domainsPassing(match, scope).some((polled) =>
      scope.providers.some((p) =>
        p.domains.some(
          (covered) =>
            overlap(polled, covered) &&
            (match.domains === undefined ||
              match.domains.some((d) => overlap(d, polled) && overlap(d, covered))),
        ),
      ),
    );
  if (matched.some(reaches)) return undefined;
  if (!matched.some((s) => s.providers.length)) {
    const inherits = matched.some((s) => s.tenant && !s.identity) && scopes[0]?.identity !== undefined;
    return `no identity provider is configured for the items it can match${
      inherits ? " (a tenant's identity is its own: the top level's is not inherited)" : ''
    }`;
  }
  return "no identity provider's domains cover a credential domain it can match (its sources and domains, against each scope's credentials.domains)";
}

/** Warnings: overlapping providers, `confirmCompromised` an Okta provider skips, routes and silences on `identity` that nothing reaches. */
export function checkIdentityWarnings(config: AlertsConfig, warnings: string[]): void {
  const scopes = scopesOf(config);
  for (const scope of scopes) {
    scope.providers.forEach((later, i) => {
      later.domains.forEach((domain, j) => {
        for (const first of scope.providers.slice(0, i)) {
          const other = first.domains.find((d) => overlap(d, domain));
          if (other === undefined) continue;
          warnings.push(
            `${scope.path}.providers.${later.name}.domains[${j}]: ${domain} overlaps ${first.name}'s ${other}: a login under both is looked up in ${first.name} only (the first in config order)`,
          );
          break;
        }
      });
    });
    const atRisk = scope.identity?.auto?.atRisk ?? [];
    const j = atRisk.indexOf('confirmCompromised');
    const skipping = scope.providers.filter((p) => p.type === 'okta' && !p.userRisk).map((p) => p.name);
    if (j >= 0 && skipping.length)
      warnings.push(
        `${scope.path}.auto.atRisk[${j}]: confirmCompromised is skipped for ${skipping.join(', ')}: an Okta provider takes it only with "userRisk": true`,
      );
  }
  const check = (path: string, match: Match) => {
    if (match.identity === undefined) return;
    if (match.identity.length === 0) {
      warnings.push(`${path}.match.identity: an empty list matches nothing`);
      return;
    }
    const why = unreachable(match, scopes);
    if (why)
      warnings.push(
        `${path}.match.identity: ${why}; a credential without a verdict matches no identity list, so this matches nothing`,
      );
  };
  for (const [i, route] of config.routes.entries()) check(`routes[${i}]`, route.match);
  for (const [i, silence] of config.silences.entries()) check(`silences[${i}]`, silence.match);
}
