/**
 * What a client bound to tenants may see and name (docs/api.md, "Clients bound to tenants"): one
 * rule, used by every route that reads or acts on tenant data, so no route decides it its own way.
 *
 * An item belongs to the tenant of the stream that recorded it, as its records keep it: a `tenants`
 * entry's id, `undefined` for the top-level sources, or `null` when the record keeps none (written
 * before tenants were kept). A bound client sees its tenants' items, the top level's with
 * `topLevel`, and never a record with no stored tenant; an unbound client sees everything.
 */
import type { Context } from 'hono';
import type { Status } from '../state/status.ts';
import type { Binding, TenantRef } from './auth.ts';
import type { Vars } from './context.ts';
import { ApiError } from './errors.ts';

/** An item's tenant as its records keep it: an id, the top level, or none stored. */
export type StoredTenant = number | undefined | null;

/** Whether a client with this binding may see data of that tenant. */
export function sees(binding: Binding | undefined, tenant: StoredTenant): boolean {
  if (!binding) return true;
  if (tenant === null) return false;
  return tenant === undefined ? binding.topLevel : binding.tenants.has(tenant);
}

export function bindingOf(c: Context<Vars>): Binding | undefined {
  return c.get('binding');
}

/** 404 as for a key that does not exist: another tenant's keys are not confirmed to exist. */
export function notFound(what: string): ApiError {
  return new ApiError('not_found', `no ${what}`);
}

/**
 * For what every tenant shares (a destination's test message, re-queueing dead deliveries): a
 * bound client is refused, 403.
 */
export function unboundOnly(c: Context<Vars>, what: string): void {
  if (bindingOf(c))
    throw new ApiError(
      'forbidden',
      `the client "${c.get('client')}" is bound to tenants; ${what} touches what every tenant shares, so only a client bound to none may`,
    );
}

/** A tenant named by id or name (`?tenant=`), or undefined when the name matches none. */
export function findTenant(known: readonly TenantRef[], wanted: string): TenantRef | undefined {
  const text = wanted.trim();
  return known.find((t) => String(t.id) === text || t.name.toLowerCase() === text.toLowerCase());
}

/**
 * The tenant a bound client's lookup or toggle runs as (`?tenant=`, an id or a name): one of its
 * own (404 outside them, as for one that does not exist). None named: its one choice when it has
 * one (a tenant, or the top level), else 400 asking for one. `undefined` in `tenant` is the top
 * level. An unbound client's choice is left to the route (`unbound: true`).
 */
export function tenantToActAs(
  binding: Binding | undefined,
  known: readonly TenantRef[],
  wanted: string | undefined,
): { unbound: true } | { tenant: number | undefined } {
  if (!binding) return { unbound: true };
  if (wanted !== undefined) {
    const found = findTenant(known, wanted);
    if (!found || !binding.tenants.has(found.id))
      throw notFound(`tenant ${JSON.stringify(wanted.slice(0, 64))}`);
    return { tenant: found.id };
  }
  if (binding.tenants.size === 0) return { tenant: undefined };
  if (binding.tenants.size === 1 && !binding.topLevel) return { tenant: [...binding.tenants][0] };
  const names = known.filter((t) => binding.tenants.has(t.id)).map((t) => t.name);
  throw new ApiError(
    'invalid_request',
    `this client is bound to several tenants: name one with ?tenant= (${names.join(', ')})`,
  );
}

/** A binding as `GET /whoami` and the sign-in answer carry it, beside its scopes. */
export function grantOf(
  scopes: readonly string[],
  binding: Binding | undefined,
): { scopes: string[]; tenants?: number[]; topLevel?: true } {
  return {
    scopes: [...scopes],
    ...(binding ? { tenants: [...binding.tenants].sort((a, b) => a - b) } : {}),
    ...(binding?.topLevel ? { topLevel: true as const } : {}),
  };
}

/**
 * `GET /status` as a bound client sees it: its tenants' streams and identity providers (the top
 * level's with `topLevel`); the counts that mix tenants (destinations' queues, which every tenant
 * shares, the active silences, the deployment's quota) are left out.
 */
export function statusFor(binding: Binding | undefined, status: Status): Partial<Status> {
  if (!binding) return status;
  const mine = (tenant: { id: number } | null) => sees(binding, tenant === null ? undefined : tenant.id);
  return {
    streams: status.streams.filter((s) => mine(s.tenant)),
    ...(status.identityProviders
      ? { identityProviders: status.identityProviders.filter((p) => mine(p.tenant)) }
      : {}),
  };
}

/** The tenant a match's `sources` entry names: `tenant:1001`, `group:1001:12`, `credentials:1001:d`. */
function tenantOfSource(source: string): number | undefined {
  const found = /^(?:tenant:(\d+)$|group:(\d+):\d+$|credentials:(\d+):)/.exec(source);
  const id = found?.[1] ?? found?.[2] ?? found?.[3];
  return id === undefined ? undefined : Number(id);
}

type RawMatch = Record<string, unknown>;

/** The ids a match's `tenants` names (by id or name); undefined where one names no tenant. */
function namedTenants(known: readonly TenantRef[], match: RawMatch): (number | undefined)[] {
  const named = Array.isArray(match.tenants) ? match.tenants : [];
  return named.map((ref) =>
    typeof ref === 'number' || typeof ref === 'string' ? findTenant(known, String(ref))?.id : undefined,
  );
}

/**
 * A bound client's silence request with its match kept within its binding: a match that names a
 * tenant outside it (in `tenants` or `sources`, or the top level it is not bound to) is 404, as
 * for a tenant that does not exist; a match that names none gets the binding's (its tenants, or
 * `topLevel: true`); a client bound to tenants and to the top level must say which (400). What is
 * not a well-formed match is left for the silence's own checks to refuse.
 */
export function bindSilenceRequest(
  binding: Binding | undefined,
  known: readonly TenantRef[],
  body: unknown,
): unknown {
  if (!binding || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  const request = body as { match?: unknown };
  const match = request.match;
  if (!match || typeof match !== 'object' || Array.isArray(match)) return body;
  const m = match as RawMatch;
  const outside = () => notFound('tenant of that name or id among this client’s');
  const ids = namedTenants(known, m);
  if (ids.some((id) => id === undefined || !binding.tenants.has(id))) throw outside();
  const sources = Array.isArray(m.sources) ? m.sources : [];
  for (const source of sources) {
    if (typeof source !== 'string') continue;
    const tenant = tenantOfSource(source);
    if (!sees(binding, tenant)) throw outside();
  }
  if (m.topLevel === true && !binding.topLevel) throw outside();
  if (m.topLevel === false && binding.tenants.size === 0) throw outside();
  if (m.tenants !== undefined || m.topLevel === true) return body;
  if (binding.topLevel && binding.tenants.size > 0)
    throw new ApiError(
      'invalid_request',
      'this client is bound to tenants and to the top level: say which the silence is for, with match.tenants or match.topLevel: true',
    );
  const bound: RawMatch = binding.topLevel
    ? { ...m, topLevel: true }
    : { ...m, tenants: [...binding.tenants].sort((a, b) => a - b) };
  return { ...request, match: bound };
}

/**
 * Whether a silence's match keeps within a binding, so a bound client may list and expire it:
 * it names only the client's tenants, or the top level when the client is bound to it.
 */
export function silenceWithin(
  binding: Binding | undefined,
  known: readonly TenantRef[],
  match: RawMatch,
): boolean {
  if (!binding) return true;
  if (match.tenants !== undefined) {
    const ids = namedTenants(known, match);
    return ids.length > 0 && ids.every((id) => id !== undefined && binding.tenants.has(id));
  }
  return match.topLevel === true && binding.topLevel;
}

/**
 * The silences a bound client lists and ends: those within its tenants, and one it made itself
 * whose match names no tenant at all (`tenants: []`, a subset of its own that holds nothing back;
 * another client's such silence is not its to see: its reason may name anyone).
 */
export function silenceSeenBy(
  name: string,
  binding: Binding,
  known: readonly TenantRef[],
  silence: { match: object; createdBy?: string },
): boolean {
  const match = silence.match as RawMatch;
  if (silenceWithin(binding, known, match)) return true;
  return silence.createdBy === name && Array.isArray(match.tenants) && match.tenants.length === 0;
}
