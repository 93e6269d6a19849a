/**
 * What the console reads (docs/console.md): `GET /alerts` (filters, an opaque cursor),
 * `GET /alerts/{key}` (the item, its deliveries, actions and audit trail) and `GET /audit` (the
 * trails merged). The reading itself is state/alert-list.ts and state/audit-trail.ts; this module
 * checks the query, and shapes the answers exactly as section 13 says. Loaded with the first such
 * request (console-routes.ts): the API's start does not carry it.
 */

import { actedOn } from '../state/acted.ts';
import {
  type AlertFilters,
  AlertReader,
  DELIVERY_STATES,
  type ListedAlert,
  type ListPosition,
} from '../state/alert-list.ts';
import { readTrail, TRAILS, type TrailEntry, type TrailPosition } from '../state/audit-trail.ts';
import type { TableIo } from '../state/io.ts';
import { SORT_KEY_BYTES, utf8Bytes } from '../state/limits.ts';
import type { IndexEntry } from '../state/records/alert-index.ts';
import { SEVERITIES } from '../upstream/event-types.ts';
import type { Binding } from './auth.ts';
import { ApiError } from './errors.ts';
import { sees } from './tenancy.ts';

export interface TenantName {
  id: number;
  name: string;
}

/** What these reads need: the table, and the config's tenants (names for ids). */
export interface ConsoleReadDeps {
  io: TableIo;
  tenants(): Promise<readonly TenantName[]>;
}

export const ALERT_PARAMS = ['kind', 'severity', 'tenant', 'destination', 'state', 'q', 'cursor'] as const;
const MAX_CURSOR = 4_096;
export const BAD_CURSOR = 'cursor is not one this API gave: pass back the cursor of the last page as it was';
const MAX_TEXT = 200;

function bad(message: string): never {
  throw new ApiError('invalid_request', message);
}

/** The one value of each parameter; an unknown or repeated one is a 400 naming it. */
export function single(all: Record<string, string[]>, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(all)) {
    if (!allowed.includes(name))
      bad(`unknown parameter ${JSON.stringify(name.slice(0, 40))}; use ${allowed.join(', ')}`);
    if (values.length !== 1) bad(`give ${name} once (got ${values.length})`);
    const value = values[0] as string;
    if (value.length > (name === 'cursor' ? MAX_CURSOR : MAX_TEXT))
      bad(`${name} is longer than ${name === 'cursor' ? MAX_CURSOR : MAX_TEXT} characters`);
    out[name] = value;
  }
  return out;
}

export function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

export function decode(cursor: string): unknown {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) bad(BAD_CURSOR);
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return bad(BAD_CURSOR);
  }
}

/**
 * The sort key a position's Query is bounded by (state/alert-list.ts: inside a pack, the part
 * before its count of entries): DynamoDB refuses a key over 1,024 bytes, which only a made-up
 * cursor holds, with an error that would be a 500.
 */
function sortKeyOf(below: string): string {
  const inPack = /^(.*)\u0000(\d{1,6})$/s.exec(below);
  return inPack && Number(inPack[2]) > 0 ? (inPack[1] as string) : below;
}

export function listCursor(position: ListPosition): string {
  return encode({ v: 1, m: position.month, ...(position.below ? { b: position.below } : {}) });
}

export function parseListCursor(cursor: string): ListPosition {
  const value = decode(cursor) as { v?: unknown; m?: unknown; b?: unknown } | null;
  const month = value?.m;
  const below = value?.b;
  if (
    value?.v !== 1 ||
    typeof month !== 'string' ||
    !/^\d{4}-(0[1-9]|1[0-2])$/.test(month) ||
    (below !== undefined &&
      (typeof below !== 'string' || !below.startsWith(month) || utf8Bytes(sortKeyOf(below)) > SORT_KEY_BYTES))
  )
    bad(BAD_CURSOR);
  return { month, ...(below === undefined ? {} : { below: below as string }) };
}

/** `GET /alerts`'s query: filters (a tenant by id or name) and where to start. */
export function parseAlertQuery(
  all: Record<string, string[]>,
  tenants: readonly TenantName[],
): { filters: AlertFilters; from?: ListPosition } {
  const q = single(all, ALERT_PARAMS);
  const filters: AlertFilters = {};
  if (q.kind !== undefined) {
    if (q.kind !== 'event' && q.kind !== 'credential') bad('kind must be event or credential');
    filters.kind = q.kind;
  }
  if (q.severity !== undefined) {
    if (!(SEVERITIES as readonly string[]).includes(q.severity))
      bad(`severity must be one of ${SEVERITIES.join(', ')}`);
    filters.severity = q.severity;
  }
  if (q.state !== undefined) {
    if (!(DELIVERY_STATES as readonly string[]).includes(q.state))
      bad(`state must be one of ${DELIVERY_STATES.join(', ')}`);
    filters.state = q.state as AlertFilters['state'];
  }
  if (q.tenant !== undefined) {
    const wanted = q.tenant.trim();
    const found = /^\d{1,15}$/.test(wanted)
      ? { id: Number(wanted) }
      : tenants.find((t) => t.name.toLowerCase() === wanted.toLowerCase());
    if (!found)
      bad(
        `tenant: no tenant named ${JSON.stringify(wanted.slice(0, 40))}${tenants.length ? ` (the config has ${tenants.map((t) => t.name).join(', ')})` : ' (the config names no tenants)'}; give its id or name`,
      );
    filters.tenant = found.id;
    // One tenant's alerts: from its own copy of the list (full pages whatever the others' volume).
    filters.partition = found.id;
  }
  if (q.destination !== undefined) filters.destination = q.destination;
  if (q.q !== undefined && q.q.trim() !== '') filters.q = q.q.trim().toLowerCase();
  return { filters, ...(q.cursor !== undefined ? { from: parseListCursor(q.cursor) } : {}) };
}

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
  const acted =
    entry.kind === 'event'
      ? await actedOn(deps.io, 'action', uidOf(entry))
      : typeof login === 'string'
        ? (await actedOn(deps.io, 'idaction', login)).filter(
            (a) => a.scope === undefined || a.scope === (entry.tenant ?? 'top'),
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
