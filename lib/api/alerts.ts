/**
 * What the console reads (docs/console.md): `GET /alerts` (filters, an opaque cursor),
 * `GET /alerts/{key}` (the item, its deliveries, actions and audit trail) and `GET /audit` (the
 * trails merged). The reading itself is state/alert-list.ts and state/audit-trail.ts; this module
 * checks the query, and shapes the answers exactly as section 13 says. Loaded with the first such
 * request (console-routes.ts): the API's start does not carry it.
 */

import { actedOn } from '../state/acted.ts';
import { AlertReader, type ListedAlert } from '../state/alert-list.ts';
import { readTrail, TRAILS, type TrailEntry, type TrailPosition } from '../state/audit-trail.ts';
import type { IndexEntry } from '../state/records/alert-index.ts';
import {
  BAD_CURSOR,
  bad,
  type ConsoleReadDeps,
  decode,
  encode,
  listCursor,
  parseAlertQuery,
  single,
  type TenantName,
} from './alert-query.ts';
import type { Binding } from './auth.ts';
import { ApiError } from './errors.ts';

export {
  type ConsoleReadDeps,
  listCursor,
  parseAlertQuery,
  parseListCursor,
  type TenantName,
} from './alert-query.ts';

import { sees } from './tenancy.ts';

function tenantOf(entry: IndexEntry, tenants: readonly TenantName[]) {
  if (entry.tenant === undefined) return {};
  const name = tenants.find((t) => t.id === entry.tenant)?.name ?? String(entry.tenant);
  return { tenant: { id: entry.tenant, name } };
}

/** `GET /alerts`. */
export async function listAlerts(deps: ConsoleReadDeps, query: Record<string, string[]>, binding?: Binding) {
  const tenants = await deps.tenants();
  const reader = new AlertReader(deps.io);
  let page: { items: ListedAlert[]; cursor?: string };
  if (binding) {
    const { boundPage } = await import('./alerts-bound.ts');
    page = await boundPage(reader, query, tenants, binding);
  } else {
    const { filters, from } = parseAlertQuery(query, tenants);
    const read = await reader.page(filters, from);
    page = { items: read.items, ...(read.next ? { cursor: listCursor(read.next) } : {}) };
  }
  return {
    items: page.items.map(({ entry, deliveries }) => ({
      key: entry.key,
      kind: entry.kind,
      ...(entry.severity ? { severity: entry.severity } : {}),
      title: entry.title,
      ...tenantOf(entry, tenants),
      matchedAt: entry.matchedAt,
      ...(entry.identity ? { identity: entry.identity } : {}),
      deliveries,
    })),
    ...(page.cursor ? { cursor: page.cursor } : {}),
  };
}

/** The upstream uid of an item key (`<tenant>:<uid>` for a tenant's item). */
function uidOf(entry: IndexEntry): string {
  const prefix = entry.tenant === undefined ? '' : `${entry.tenant}:`;
  return prefix && entry.key.startsWith(prefix) ? entry.key.slice(prefix.length) : entry.key;
}

/** `GET /alerts/{key}`: 404 for a key the index does not hold. */
export async function alertDetail(deps: ConsoleReadDeps, key: string, binding?: Binding) {
  if (key.length === 0 || key.length > 2_000)
    bad('the key must be 1 to 2000 characters, percent-encoded as one segment');
  const [found, tenants] = await Promise.all([new AlertReader(deps.io).item(key), deps.tenants()]);
  // Another tenant's item is answered as one that does not exist: its key is not confirmed.
  if (!found || !sees(binding, found.entry.tenant))
    throw new ApiError(
      'not_found',
      `no alert with key ${JSON.stringify(key.slice(0, 200))} in the last 90 days (items recorded before the console's index existed are not listed)`,
    );
  const { entry, item, deliveries } = found;
  const login =
    entry.kind === 'credential' ? (item as { identity_name?: unknown } | null)?.identity_name : undefined;
  // An event's actions by its key, as they were taken (a tenant's item by `<tenant>:<uid>`): by the
  // bare uid they would be the top level's item of that uid, another tenant's data. An account
  // action that kept no scope (written before scopes were kept) is for unbound clients only.
  const acted =
    entry.kind === 'event'
      ? await actedOn(deps.io, 'action', entry.key)
      : typeof login === 'string'
        ? (await actedOn(deps.io, 'idaction', login)).filter((a) =>
            a.scope === undefined ? !binding : a.scope === (entry.tenant ?? 'top'),
          )
        : [];
  const recorded: TrailEntry = {
    at: entry.at,
    who: `poll:${entry.source}`,
    what: 'recorded',
    target: Object.keys(entry.deliveries).join(', '),
    result: Object.entries(entry.deliveries)
      .map(([d, b]) => `${d}: ${b.status}${b.status === 'silenced' && b.note ? ` (${b.note})` : ''}`)
      .join('; '),
  };
  const audit: TrailEntry[] = [
    ...acted.map((a) => ({
      at: a.at,
      who: a.by,
      what: a.type,
      target: uidOrLogin(entry, login),
      result: a.result,
    })),
    recorded,
  ].sort((x, y) => (x.at < y.at ? 1 : x.at > y.at ? -1 : 0));
  return {
    item,
    key: entry.key,
    kind: entry.kind,
    ...tenantOf(entry, tenants),
    ...(entry.identity ? { identity: entry.identity } : {}),
    deliveries,
    actions: acted
      .filter((a) => !a.refused)
      .map((a) => ({ id: a.id, type: a.type, by: a.by, at: a.at, result: a.result })),
    audit,
  };
}

function uidOrLogin(entry: IndexEntry, login: unknown): string {
  return entry.kind === 'event' ? uidOf(entry) : String(login ?? entry.title);
}

export function auditCursor(position: TrailPosition): string {
  return encode({ v: 1, ...position });
}

export function parseAuditCursor(cursor: string): TrailPosition {
  const value = decode(cursor) as Record<string, unknown> | null;
  if (value?.v !== 1 || typeof value !== 'object') bad(BAD_CURSOR);
  const position: TrailPosition = {};
  for (const [name, at] of Object.entries(value)) {
    if (name === 'v') continue;
    if (!(name in TRAILS)) bad(BAD_CURSOR);
    if (at !== null && (typeof at !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(at) || at.length > 1_100))
      bad(BAD_CURSOR);
    position[name as keyof TrailPosition] = at as string | null;
  }
  return position;
}

/** Lines of the merged trail a page holds. */
export const AUDIT_PAGE = 50;

/** `GET /audit`. */
export async function auditPage(
  deps: ConsoleReadDeps,
  query: Record<string, string[]>,
  caller?: { name: string; binding?: Binding },
) {
  const q = single(query, ['cursor']);
  const from = q.cursor === undefined ? {} : parseAuditCursor(q.cursor);
  const binding = caller?.binding;
  const known = binding ? await deps.tenants() : [];
  const page = await readTrail(
    deps.io,
    from,
    AUDIT_PAGE,
    binding && caller
      ? (await import('./alerts-bound.ts')).auditSeenBy(caller.name, binding, known)
      : undefined,
  );
  return { items: page.items, ...(page.next ? { cursor: auditCursor(page.next) } : {}) };
}
