/**
 * `GET /alerts` and `GET /audit` for a client bound to tenants (docs/api.md), loaded with its first
 * such request. Which list a page comes from:
 * - one tenant (bound to one, or `?tenant=` naming one of its own): that tenant's own copy of the
 *   list (records/alert-index.ts `tenantEntryPk`), full pages at the one list's bounded reads;
 * - several tenants: each one's copy read as one page, merged newest first, at most 50 taken; the
 *   cursor keeps where each copy stopped. Reads grow with the client's tenants, never with the
 *   others' volume. A copy that stopped at its bounds before a full page holds back the others'
 *   items older than where it stopped, so the merge never lists past what it has not read;
 * - bound to the top level too: the one list, filtered to its tenants and the top level (the top
 *   level's packs have no copy of their own), so a page may hold fewer than 50 and still a cursor.
 * Another tenant named, by id or name, is a 404 that names none of the config's other tenants.
 */
import {
  type AlertFilters,
  type AlertReader,
  type ListedAlert,
  type ListPosition,
  PAGE_ITEMS,
} from '../state/alert-list.ts';
import { entrySk } from '../state/records/alert-index.ts';
import {
  ALERT_PARAMS,
  BAD_CURSOR,
  decode,
  encode,
  listCursor,
  parseAlertQuery,
  parseListCursor,
  single,
  type TenantName,
} from './alert-query.ts';
import type { Binding } from './auth.ts';
import { ApiError } from './errors.ts';
import { findTenant, notFound, silenceWithin } from './tenancy.ts';

/** Where each tenant's copy goes on from; `null`: read to its end. */
type MergedPosition = Record<string, ListPosition | null>;

function mergedCursor(position: MergedPosition): string {
  return encode({ v: 2, p: position });
}

function parseMergedCursor(cursor: string, partitions: readonly number[]): MergedPosition {
  const value = decode(cursor) as { v?: unknown; p?: unknown } | null;
  if (value?.v !== 2 || !value.p || typeof value.p !== 'object')
    throw new ApiError('invalid_request', BAD_CURSOR);
  const out: MergedPosition = {};
  for (const [tenant, at] of Object.entries(value.p as Record<string, unknown>)) {
    if (!partitions.includes(Number(tenant))) throw new ApiError('invalid_request', BAD_CURSOR);
    out[tenant] = at === null ? null : parseListCursor(listCursor((at ?? {}) as ListPosition));
  }
  return out;
}

/** A page of a bound client's alerts, and the cursor of the next. */
export async function boundPage(
  reader: AlertReader,
  query: Record<string, string[]>,
  tenants: readonly TenantName[],
  binding: Binding,
): Promise<{ items: ListedAlert[]; cursor?: string }> {
  const { tenant, cursor } = single(query, ALERT_PARAMS);
  if (tenant !== undefined) {
    const found = findTenant(tenants, tenant);
    if (!found || !binding.tenants.has(found.id))
      throw notFound(`tenant ${JSON.stringify(tenant.slice(0, 40))}`);
  }
  const mine = tenants.filter((t) => binding.tenants.has(t.id));
  const partitions =
    tenant !== undefined || binding.topLevel ? [] : [...binding.tenants].sort((a, b) => a - b);
  if (partitions.length > 1) {
    const { cursor: _, ...rest } = query;
    const { filters } = parseAlertQuery(rest, mine);
    const from = cursor === undefined ? {} : parseMergedCursor(cursor, partitions);
    return mergedPage(reader, { ...filters, within: binding }, partitions, from);
  }
  const { filters, from } = parseAlertQuery(query, mine);
  const partition = filters.tenant ?? partitions[0];
  const page = await reader.page(
    { ...filters, within: binding, ...(partition === undefined ? {} : { partition }) },
    from,
  );
  return { items: page.items, ...(page.next ? { cursor: listCursor(page.next) } : {}) };
}

/** The sort key no unread item of a list stopped at `next` can be above. */
function frontierOf(next: ListPosition): string {
  if (next.below === undefined) return `${next.month}~`;
  const cut = next.below.indexOf('\u0000');
  return cut < 0 ? next.below : next.below.slice(0, cut);
}

async function mergedPage(
  reader: AlertReader,
  filters: AlertFilters,
  partitions: readonly number[],
  from: MergedPosition,
): Promise<{ items: ListedAlert[]; cursor?: string }> {
  const pages = await Promise.all(
    partitions.map(async (p) => {
      const at = from[String(p)];
      if (at === null) return { p, items: [] as ListedAlert[], next: undefined, done: true };
      const page = await reader.page({ ...filters, partition: p }, at);
      return { p, ...page, done: false };
    }),
  );
  let frontier = '';
  for (const page of pages)
    if (page.next && page.items.length < PAGE_ITEMS) {
      const edge = frontierOf(page.next);
      if (edge > frontier) frontier = edge;
    }
  const merged = pages
    .flatMap((page) => page.items.map((item) => ({ p: page.p, item, sk: entrySk(item.entry) })))
    .filter(({ sk }) => sk > frontier)
    .sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0))
    .slice(0, PAGE_ITEMS);
  const next: MergedPosition = {};
  let open = false;
  for (const page of pages) {
    const key = String(page.p);
    const taken = merged.filter((m) => m.p === page.p).length;
    if (page.done || (taken === page.items.length && !page.next)) {
      next[key] = null;
      continue;
    }
    open = true;
    // All it read was taken: on from where it stopped; some: from after the last taken; none:
    // where it was (no position: from its top).
    const position =
      taken === page.items.length ? page.next : taken > 0 ? page.items[taken - 1]?.after : from[key];
    if (position) next[key] = position;
  }
  return { items: merged.map((m) => m.item), ...(open ? { cursor: mergedCursor(next) } : {}) };
}

/**
 * `GET /audit`'s rule for a bound client: its own doings, and entries about its tenants: a
 * toggle's `tenant` and an account action's `scope` (an id, or `top` for the top level), a silence
 * made with a match within them. An entry that keeps no tenant (written before they were kept, an
 * event action, a silence ended, a refusal of another client) is for unbound clients only.
 */
export function auditSeenBy(name: string, binding: Binding, known: readonly TenantName[]) {
  return (row: Record<string, unknown>): boolean => {
    if (row.client === name || row.by === name) return true;
    const match = (row.silence as { match?: unknown } | undefined)?.match;
    if (match && typeof match === 'object')
      return silenceWithin(binding, known, match as Record<string, unknown>);
    const tenant = row.tenant ?? row.scope;
    if (tenant === 'top') return binding.topLevel;
    return typeof tenant === 'number' && binding.tenants.has(tenant);
  };
}
