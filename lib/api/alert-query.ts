/**
 * `GET /alerts`' query and cursors (docs/console.md): its filters checked (a 400 naming what is
 * wrong), a tenant by id or name, and the opaque cursor of a position in the list. Shared by the
 * unbound listing (alerts.ts) and a bound client's (alerts-bound.ts).
 */
import { type AlertFilters, DELIVERY_STATES, type ListPosition } from '../state/alert-list.ts';
import type { TableIo } from '../state/io.ts';
import { SORT_KEY_BYTES, utf8Bytes } from '../state/limits.ts';
import { SEVERITIES } from '../upstream/event-types.ts';
import { ApiError } from './errors.ts';

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

export function bad(message: string): never {
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
