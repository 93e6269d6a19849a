/**
 * The emulator's searches: the shared event search body (endpoints 3 and 4), the global credential
 * search (9) and the legacy global search (11), both charged to the quota (quota.ts). Each pages
 * with opaque cursors through feeds.ts and answers what the real service would.
 */
import type { Context } from 'hono';
import { SEVERITIES, typeMatches } from '../upstream/event-types.ts';
import type { EmulatorControl } from './control.ts';
import { type CursorCodec, fingerprint } from './cursor.ts';
import type { Dataset } from './dataset.ts';
import type { EmulatedEvent, Tenant } from './dataset-types.ts';
import {
  type Answer,
  badRequest,
  type FeedRequest,
  intParam,
  isObject,
  pageFeed,
  startPosition,
} from './feeds.ts';
import { emailInDomain, globalCredential } from './identities.ts';
import { chargeSearch, quotaHeaders } from './quota.ts';

/** What the searches read and keep between requests. */
export interface SearchWorld {
  dataset: Dataset;
  cursors: CursorCodec;
  control: EmulatorControl;
  now: () => number;
  /** Global searches charged lately, by organization and request: repeating one within 10 minutes is free. */
  recentSearches: Map<string, number>;
}

export const MAX_GROUP_PAGE = 100;

function effectiveSeverity(event: EmulatedEvent): string {
  return event.item.tenant_metadata.severity.override ?? event.item.metadata.severity;
}

export function checkSearchBody(body: unknown, maxSize: number): asserts body is Record<string, unknown> {
  if (!isObject(body)) throw badRequest('the body must be a JSON object');
  const allowed = new Set(['query', 'size', 'from', 'order', 'filters']);
  for (const key of Object.keys(body)) if (!allowed.has(key)) throw badRequest(`unknown body key ${key}`);
  const { size, order, filters, from } = body;
  if (size !== undefined && (!Number.isInteger(size) || (size as number) < 1 || (size as number) > maxSize)) {
    throw badRequest(`size must be an integer from 1 to ${maxSize}`);
  }
  if (order !== undefined && order !== 'asc' && order !== 'desc')
    throw badRequest('order must be asc or desc');
  if (from !== undefined && from !== null && typeof from !== 'string')
    throw badRequest('from must be a string');
  if (filters !== undefined) {
    if (!isObject(filters)) throw badRequest('filters must be an object');
    const known = new Set([
      'severity',
      'type',
      'estimated_created_at',
      'tags',
      'is_ignored',
      'is_remediated',
    ]);
    for (const key of Object.keys(filters)) if (!known.has(key)) throw badRequest(`unknown filter ${key}`);
    const sev = filters.severity;
    if (
      sev !== undefined &&
      (!Array.isArray(sev) || sev.some((s) => !(SEVERITIES as readonly string[]).includes(s)))
    ) {
      throw badRequest('filters.severity must be an array of info, low, medium, high, critical');
    }
  }
}

export function eventSearch(
  world: SearchWorld,
  endpoint: 'tenantEvents' | 'identifierGroupEvents',
  tenant: Tenant,
  body: Record<string, unknown>,
  inScope: (e: EmulatedEvent) => boolean,
  groupId?: number,
): Answer {
  const filters = (body.filters ?? {}) as Record<string, unknown>;
  const order = (body.order as 'asc' | 'desc' | undefined) ?? 'desc';
  const request: FeedRequest = {
    endpoint,
    tenantId: tenant.id,
    fingerprint: fingerprint({ groupId, query: body.query, filters, order }),
    from: body.from as string | null | undefined,
    size: (body.size as number | undefined) ?? 10,
    order,
    endOfFeed: world.control.endOfFeed,
  };
  const severities = filters.severity as string[] | undefined;
  const types = filters.type as string[] | undefined;
  const tags = filters.tags as string[] | undefined;
  const range = (filters.estimated_created_at ?? {}) as Record<string, string | undefined>;
  const bounds = Object.fromEntries(
    Object.entries(range).map(([k, v]) => {
      const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
      if (Number.isNaN(t)) throw badRequest(`filters.estimated_created_at.${k} must be a timestamp`);
      return [k, t];
    }),
  );
  const query = body.query as Record<string, unknown> | undefined;
  if (query !== undefined && (query.type !== 'domain' || typeof query.fqdn !== 'string')) {
    throw badRequest('query must be {type: "domain", fqdn: string}');
  }
  const fqdn = (query?.fqdn as string | undefined)?.toLowerCase();
  const accept = (e: EmulatedEvent) => {
    if (!inScope(e)) return false;
    if (severities && !severities.includes(effectiveSeverity(e))) return false;
    if (types && !types.some((t) => typeMatches(t, e.item.metadata.type))) return false;
    if (tags && !tags.some((t) => e.item.tenant_metadata.tags.includes(t))) return false;
    const created = Date.parse(e.item.metadata.estimated_created_at);
    if (bounds.gt !== undefined && !(created > bounds.gt)) return false;
    if (bounds.gte !== undefined && !(created >= bounds.gte)) return false;
    if (bounds.lt !== undefined && !(created < bounds.lt)) return false;
    if (bounds.lte !== undefined && !(created <= bounds.lte)) return false;
    if (fqdn && !e.item.identifiers.some((i) => i.name.toLowerCase().includes(fqdn))) return false;
    return true;
  };
  // Flags filter after the window, so a page can be short or empty mid-feed.
  const post = (e: EmulatedEvent) =>
    (filters.is_ignored === undefined || e.isIgnored === filters.is_ignored) &&
    (filters.is_remediated === undefined || e.isRemediated === filters.is_remediated);
  const page = pageFeed(
    world.cursors,
    request,
    tenant.events,
    (e) => e.seq,
    accept,
    (e) => structuredClone(e.item),
    post,
  );
  return { body: { items: page.items, next: page.next } };
}

export function credentialSearch(world: SearchWorld, tenant: Tenant, input: unknown): Answer {
  if (!isObject(input)) throw badRequest('the body must be a JSON object');
  const allowed = new Set(['query', 'filters', 'from', 'size', 'include', 'order']);
  for (const key of Object.keys(input)) if (!allowed.has(key)) throw badRequest(`unknown body key ${key}`);
  const query = input.query as Record<string, unknown> | undefined;
  if (!isObject(query) || query.type !== 'domain' || typeof query.fqdn !== 'string' || query.fqdn === '') {
    throw badRequest('query must be {type: "domain", fqdn: string}');
  }
  const size = input.size ?? 10;
  if (!Number.isInteger(size) || (size as number) < 1 || (size as number) > 10_000) {
    throw badRequest('size must be an integer from 1 to 10000');
  }
  const order = input.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
  const include = input.include ?? [];
  if (!Array.isArray(include) || include.some((i) => i !== 'known_password_id')) {
    throw badRequest('include may only hold known_password_id');
  }
  const filters = (input.filters ?? {}) as Record<string, unknown>;
  if (!isObject(filters)) throw badRequest('filters must be an object');
  const imported = (filters.imported_at ?? {}) as Record<string, unknown>;
  const gte = typeof imported.gte === 'string' ? Date.parse(imported.gte) : undefined;
  const lte = typeof imported.lte === 'string' ? Date.parse(imported.lte) : undefined;
  if (Number.isNaN(gte) || Number.isNaN(lte))
    throw badRequest('filters.imported_at bounds must be timestamps');
  const request: FeedRequest = {
    endpoint: 'globalCredentials',
    tenantId: tenant.id,
    fingerprint: fingerprint({ query, filters, order, include }),
    from: input.from as string | null | undefined,
    size: size as number,
    order,
    endOfFeed: world.control.endOfFeed,
  };
  const quota = chargeQuota(world, tenant, request);
  const fqdn = query.fqdn;
  const page = pageFeed(
    world.cursors,
    request,
    world.dataset.credentials,
    (cr) => cr.id,
    (cr) => {
      if (!emailInDomain(cr.identity_name, fqdn)) return false;
      const t = Date.parse(cr.imported_at);
      return (gte === undefined || t >= gte) && (lte === undefined || t <= lte);
    },
    (cr) => globalCredential(world.dataset, cr),
  );
  return {
    body: { items: page.items, next: page.next },
    headers: quotaHeaders(quota.remaining, page.items.length >= request.size && page.next !== null),
  };
}

/**
 * Charges a global search (quota.ts) once its cursor is known good: a refused cursor costs
 * nothing. The same search is the same endpoint, request fingerprint, `from` and `size`.
 */
function chargeQuota(world: SearchWorld, tenant: Tenant, request: FeedRequest) {
  startPosition(world.cursors, request);
  const key = `${request.endpoint}:${request.fingerprint}:${request.from ?? ''}:${request.size}`;
  const organization = world.dataset.organization(tenant.organizationId);
  return chargeSearch(world.recentSearches, organization, { key, size: request.size }, world.now());
}

export function legacySearch(world: SearchWorld, c: Context, tenant: Tenant): Answer {
  const q = (name: string) => c.req.query(name);
  const size = intParam(q('size'), 'size', { min: 1, max: 10_000 }) ?? 10;
  const order = q('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
  const types = c.req.queries('types');
  let from: number | undefined;
  let to: number | undefined;
  const time = q('time');
  if (time !== undefined) {
    const [a, b, extra] = time.split('@');
    from = a ? Date.parse(a) : undefined;
    to = b ? Date.parse(b) : undefined;
    if (extra !== undefined || Number.isNaN(from) || Number.isNaN(to)) {
      throw badRequest('time must be <from>@<to>, both ISO 8601 timestamps');
    }
  }
  const tags = c.req.queries('tags');
  const cursor = q('from') ?? q('search_after');
  const request: FeedRequest = {
    endpoint: 'legacySearch',
    tenantId: tenant.id,
    fingerprint: fingerprint({ types, time, order, tags }),
    from: cursor,
    size,
    order,
    endOfFeed: 'null',
  };
  const quota = chargeQuota(world, tenant, request);
  const accept = (e: EmulatedEvent) => {
    if (types && !types.some((t) => typeMatches(t, e.item.metadata.type))) return false;
    if (tags && !tags.some((t) => e.item.tenant_metadata.tags.includes(t))) return false;
    const created = Date.parse(e.item.metadata.estimated_created_at);
    return (from === undefined || created >= from) && (to === undefined || created <= to);
  };
  const page = pageFeed(
    world.cursors,
    request,
    tenant.events,
    (e) => e.seq,
    accept,
    (e) => structuredClone(e.item),
  );
  const nbHits = tenant.events.filter(accept).length;
  return {
    body: {
      items: page.items,
      links: page.next ? { next: page.next } : {},
      nb_hits: nbHits,
      ...(page.next ? { search_after: page.next } : {}),
    },
    headers: quotaHeaders(quota.remaining, page.items.length >= size && page.next !== null),
  };
}
