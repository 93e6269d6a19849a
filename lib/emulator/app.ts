/**
 * The upstream's stand-in: a Hono app serving all eleven endpoints of upstream-api.md and
 * `POST /tokens/generate` over a seeded dataset, scoped per tenant, with the limits, paging and
 * errors of the real service (upstream-facts.md), plus knobs under `/_emulator/` for tests and demos.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { SEVERITIES, typeMatches } from '../upstream/event-types.ts';
import type { EndpointName, Fault } from './control.ts';
import { EmulatorControl } from './control.ts';
import { CursorCodec, fingerprint } from './cursor.ts';
import type { DatasetOptions, EmulatedCredential, EmulatedEvent, Tenant } from './dataset.ts';
import { Dataset } from './dataset.ts';
import { badRequest, EmulatorError, type FeedRequest, pageFeed, startPosition } from './feeds.ts';

export interface EmulatorOptions extends DatasetOptions {
  /** The path segment the spec writes `core`; default `firework`. */
  coreSegment?: string;
  /** Cursor signing instance; random by default, so cursors from an earlier run are refused. */
  instance?: string;
  /** Clock for token expiry and quota; default Date.now. */
  now?: () => number;
}

type Vars = { Variables: { tenant: Tenant } };

interface Answer {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

const MAX_GROUP_PAGE = 100;
const FREE_REPEAT_MS = 10 * 60_000;

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function intParam(value: string | undefined, name: string, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`${name} must be an integer`);
  const n = Number(value);
  if (n < min || n > max) throw badRequest(`${name} must be from ${min} to ${max}`);
  return n;
}

function effectiveSeverity(event: EmulatedEvent): string {
  return event.item.tenant_metadata.severity.override ?? event.item.metadata.severity;
}

/** Whether `name`'s domain part is `domain` or a subdomain of it. */
function emailInDomain(name: string, domain: string): boolean {
  const host = name.slice(name.lastIndexOf('@') + 1).toLowerCase();
  const want = domain.toLowerCase();
  return host === want || host.endsWith(`.${want}`);
}

function keywordMatcher(keyword: string): (name: string) => boolean {
  const lower = keyword.toLowerCase();
  const lead = lower.startsWith('*');
  const trail = lower.endsWith('*') && lower.length > 1;
  const core = lower.slice(lead ? 1 : 0, trail ? -1 : undefined);
  return (name) => {
    const n = name.toLowerCase();
    if (lead && trail) return n.includes(core);
    if (lead) return n.endsWith(core);
    if (trail) return n.startsWith(core);
    return n === core;
  };
}

function checkSearchBody(body: unknown, maxSize: number): asserts body is Record<string, unknown> {
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

export class Emulator {
  readonly dataset: Dataset;
  readonly control = new EmulatorControl();
  readonly app: Hono<Vars>;
  readonly coreSegment: string;
  private readonly cursors: CursorCodec;
  private readonly issued = new Map<string, { tenantId: number; expiresAt: number }>();
  private readonly recentSearches = new Map<string, number>();
  private readonly now: () => number;

  constructor(options: EmulatorOptions = {}) {
    this.dataset = new Dataset(options);
    this.coreSegment = options.coreSegment ?? 'firework';
    this.cursors = new CursorCodec(this.dataset.seed, options.instance);
    this.now = options.now ?? Date.now;
    this.app = this.buildApp();
  }

  /** Invalidate every token issued by `POST /tokens/generate` (the static demo tokens stay valid). */
  revokeIssuedTokens(): void {
    this.issued.clear();
  }

  /** Appends a few events to a tenant every `everyMs`, as a live feed would. Returns a stop function. */
  startLiveEvents(options: { tenant?: number | string; everyMs?: number; min?: number; max?: number } = {}) {
    const tenant = this.dataset.tenant(options.tenant ?? 'acme');
    const min = options.min ?? 1;
    const max = options.max ?? 3;
    const timer = setInterval(() => {
      this.dataset.appendEvents(tenant.id, min + Math.floor(Math.random() * (max - min + 1)));
    }, options.everyMs ?? 20_000);
    timer.unref();
    return () => clearInterval(timer);
  }

  private authenticate(c: Context<Vars>): Tenant {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new EmulatorError(401, 'UNAUTHORIZED', 'missing bearer token');
    const token = match[1] as string;
    const fixed = this.dataset.tenantByToken(token);
    if (fixed) return fixed;
    const issued = this.issued.get(token);
    if (!issued) throw new EmulatorError(401, 'UNAUTHORIZED', 'invalid token');
    if (issued.expiresAt <= this.now()) throw new EmulatorError(401, 'UNAUTHORIZED', 'token expired');
    return this.dataset.tenant(issued.tenantId);
  }

  private async readJson(c: Context<Vars>): Promise<unknown> {
    const text = await c.req.text();
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw badRequest('the body is not valid JSON');
    }
  }

  /** Runs one endpoint: latency, auth, faults, the handler, and the request log. */
  private endpoint(
    name: EndpointName,
    handler: (c: Context<Vars>, tenant: Tenant, input: unknown) => Answer | Promise<Answer>,
    options: { auth?: boolean } = {},
  ) {
    return async (c: Context<Vars>) => {
      let status = 500;
      let tenantId: number | undefined;
      let input: unknown;
      let faultName: string | undefined;
      try {
        if (this.control.latencyMs > 0) await new Promise((r) => setTimeout(r, this.control.latencyMs));
        input = c.req.method === 'GET' ? c.req.queries() : await this.readJson(c);
        const tenant = options.auth === false ? undefined : this.authenticate(c);
        tenantId = tenant?.id;
        const fault = this.control.takeFault(name);
        if (fault) faultName = JSON.stringify(fault);
        if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
        if (fault && 'hang' in fault) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 300_000);
            c.req.raw.signal?.addEventListener('abort', () => {
              clearTimeout(timer);
              resolve();
            });
          });
          status = 504;
          return c.json(errorBody('HUNG', 'the emulator was told not to answer'), 504);
        }
        if (fault && 'status' in fault) {
          status = fault.status;
          const headers: Record<string, string> = {};
          if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
          const body =
            fault.body ??
            (fault.status === 429
              ? { error: { code: 'RATELIMIT_REACHED' } }
              : errorBody('INJECTED', `injected ${fault.status}`));
          return c.json(body as object, fault.status as 400, headers);
        }
        if (fault && 'malformedJson' in fault) {
          status = 200;
          return c.body('{"items": [{"metadata": ', 200, { 'Content-Type': 'application/json' });
        }
        const answer = await handler(c, tenant as Tenant, input);
        status = answer.status ?? 200;
        let body = answer.body;
        if (fault && 'badItem' in fault) body = breakOneItem(body, fault.index ?? 0);
        return c.json(body as object, status as 200, answer.headers);
      } catch (error) {
        if (error instanceof EmulatorError) {
          status = error.status;
          return c.json(errorBody(error.code, error.message), error.status as 400, error.headers);
        }
        status = 500;
        return c.json(errorBody('INTERNAL', (error as Error).message), 500);
      } finally {
        this.control.log({
          at: new Date().toISOString(),
          method: c.req.method,
          path: c.req.path,
          endpoint: name,
          ...(tenantId === undefined ? {} : { tenantId }),
          status,
          input,
          ...(faultName ? { fault: faultName } : {}),
        });
      }
    };
  }

  private buildApp(): Hono<Vars> {
    const app = new Hono<Vars>();
    const core = `/${this.coreSegment}`;

    app.post(
      '/tokens/generate',
      this.endpoint(
        'generateToken',
        (c, _tenant, input) => {
          const key = (c.req.header('authorization') ?? '').trim();
          const tenant = key ? this.dataset.tenantByApiKey(key) : undefined;
          if (!tenant) throw new EmulatorError(401, 'UNAUTHORIZED', 'invalid API key');
          const wanted = isObject(input) ? input.tenant_id : undefined;
          if (wanted !== undefined && wanted !== tenant.id) {
            throw new EmulatorError(403, 'FORBIDDEN', 'this API key has no access to that tenant');
          }
          const token = `emu_${randomBytes(16).toString('hex')}`;
          const expiresAt = this.now() + this.control.tokenTtlMs;
          this.issued.set(token, { tenantId: tenant.id, expiresAt });
          return { body: { token, refresh_token_exp: Math.floor(expiresAt / 1000) } };
        },
        { auth: false },
      ),
    );

    app.get(
      '/tokens/test',
      this.endpoint('tokenTest', (_c, t) => ({
        body: {
          tenant_id: t.id,
          api_key_id: t.apiKeyId,
          organization_id: t.organizationId,
          user_id: t.userId,
          user_email: t.userEmail,
          scopes: [
            'events:read',
            'credentials:read',
            'assets:write',
            ...(t.accountTakeover ? ['astp:read'] : []),
          ],
        },
      })),
    );

    app.post(
      '/astp/identities/by_accounts',
      this.endpoint('identitiesByAccounts', (_c, _t, input) => {
        if (
          !isObject(input) ||
          !Array.isArray(input.accounts) ||
          input.accounts.some((a) => typeof a !== 'string')
        ) {
          throw badRequest('body must be {accounts: array of string}');
        }
        if (input.accounts.length > 100) throw badRequest('at most 100 accounts per request');
        const out: Record<string, unknown> = {};
        for (const account of input.accounts as string[]) {
          const records = this.dataset.credentials.filter(
            (cr) => cr.identity_name.toLowerCase() === account.toLowerCase(),
          );
          out[account] = {
            name: account,
            links: { self: `/astp/identities/by_accounts#${account}` },
            passwords: records.map((r) => this.legacyRecord(r)),
          };
        }
        return { body: out };
      }),
    );

    app.post(
      `${core}/v4/events/identifier_groups/:groupId/_search`,
      this.endpoint('identifierGroupEvents', (c, tenant, input) => {
        const body = input ?? {};
        checkSearchBody(body, MAX_GROUP_PAGE);
        const groupId = intParam(c.req.param('groupId'), 'identifier_group_id', { min: 1 });
        const group = tenant.groups.find((g) => g.id === groupId);
        if (!group)
          throw new EmulatorError(404, 'NOT_FOUND', `identifier group ${c.req.param('groupId')} not found`);
        const ids = new Set(group.identifierIds);
        return this.eventSearch(
          'identifierGroupEvents',
          tenant,
          body,
          (e) => e.item.identifiers.some((i) => ids.has(i.id)),
          group.id,
        );
      }),
    );

    app.post(
      `${core}/v4/events/tenant/_search`,
      this.endpoint('tenantEvents', (_c, tenant, input) => {
        const body = input ?? {};
        checkSearchBody(body, 10);
        return this.eventSearch('tenantEvents', tenant, body, () => true);
      }),
    );

    for (const prefix of ['/leaksdb', '/astp']) {
      app.get(
        `${prefix}/identities/by_password/:password`,
        this.endpoint('identitiesByPassword', (c, tenant) => {
          if (!tenant.accountTakeover) {
            throw new EmulatorError(
              403,
              'FORBIDDEN',
              'this tenant has no access to the account takeover prevention module',
            );
          }
          const size = intParam(c.req.query('size'), 'size', { min: 1, max: 10_000 }) ?? 100;
          const from = intParam(c.req.query('from'), 'from');
          const password = c.req.param('password') ?? '';
          return { body: this.identityPage((cr) => cr.password === password, from, size) };
        }),
      );
      app.get(
        `${prefix}/v2/credentials`,
        this.endpoint('credentialsV2', (c) => {
          const size = intParam(c.req.query('size'), 'size', { min: 1, max: 5_000 }) ?? 100;
          const from = intParam(c.req.query('from'), 'from');
          const order = c.req.query('order') ?? 'asc';
          if (order !== 'asc' && order !== 'desc') throw badRequest('order must be asc or desc');
          const sourceId = c.req.query('source_id');
          let list = this.dataset.credentials.filter(
            (cr) => sourceId === undefined || cr.source_id === sourceId,
          );
          if (order === 'desc') list = [...list].reverse();
          if (from !== undefined) list = list.filter((cr) => (order === 'asc' ? cr.id > from : cr.id < from));
          const page = list.slice(0, size);
          const more = list.length > size;
          return {
            body: {
              items: page.map((cr) => ({
                ...this.legacyRecord(cr),
                identity_name: cr.identity_name,
                source: null,
              })),
              next: more && page.length ? String(page.at(-1)?.id) : null,
            },
          };
        }),
      );
      app.get(
        `${prefix}/identities/by_keyword/:keyword`,
        this.endpoint('identitiesByKeyword', (c) => {
          const size = intParam(c.req.query('size'), 'size', { min: 1, max: 10_000 }) ?? 100;
          const from = intParam(c.req.query('from'), 'from');
          const matches = keywordMatcher(c.req.param('keyword') ?? '');
          return { body: this.identityPage((cr) => matches(cr.identity_name), from, size) };
        }),
      );
      app.get(
        `${prefix}/identities/by_domain/:domain`,
        this.endpoint('identitiesByDomain', (c) => {
          const size = intParam(c.req.query('size'), 'size', { min: 1, max: 10_000 }) ?? 100;
          const from = intParam(c.req.query('from'), 'from');
          const domain = c.req.param('domain') ?? '';
          return { body: this.identityPage((cr) => emailInDomain(cr.identity_name, domain), from, size) };
        }),
      );
    }

    app.post(
      `${core}/v4/credentials/global/_search`,
      this.endpoint('globalCredentials', (_c, tenant, input) => this.credentialSearch(tenant, input)),
    );

    app.post(
      `${core}/v2/assets/:assetId/toggle`,
      this.endpoint('assetToggle', (c, tenant, input) => {
        const raw = c.req.param('assetId') ?? '';
        const id = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
        const asset = tenant.assets.get(id);
        if (!asset) throw new EmulatorError(404, 'NOT_FOUND', `asset ${raw} not found`);
        if (!isObject(input) || typeof input.is_disabled !== 'boolean' || Object.keys(input).length !== 1) {
          throw badRequest('body must be exactly {is_disabled: boolean}');
        }
        asset.is_disabled = input.is_disabled;
        asset.data_updated_at = new Date(this.now()).toISOString();
        return { body: { asset: structuredClone(asset) } };
      }),
    );

    app.post(
      `${core}/v2/search/`,
      this.endpoint('legacySearch', (c, tenant) => this.legacySearch(c, tenant)),
    );

    this.adminRoutes(app);

    app.notFound((c) => c.json(errorBody('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`), 404));
    app.onError((error, c) => c.json(errorBody('INTERNAL', error.message), 500));
    return app;
  }

  private eventSearch(
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
      endOfFeed: this.control.endOfFeed,
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
      this.cursors,
      request,
      tenant.events,
      (e) => e.seq,
      accept,
      (e) => structuredClone(e.item),
      post,
    );
    return { body: { items: page.items, next: page.next } };
  }

  private credentialSearch(tenant: Tenant, input: unknown): Answer {
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
      endOfFeed: this.control.endOfFeed,
    };
    startPosition(this.cursors, request); // refuse a bad cursor before charging the quota
    const now = this.now();
    const searchKey = `${tenant.id}:${request.fingerprint}:${request.from ?? ''}:${size}`;
    const cost = Math.max(1, Math.ceil((size as number) / 100));
    const free = (this.recentSearches.get(searchKey) ?? Number.NEGATIVE_INFINITY) > now - FREE_REPEAT_MS;
    if (!free) {
      if (tenant.quotaRemaining < cost) {
        throw new EmulatorError(403, 'QUOTA_EXCEEDED', 'the monthly global search quota is used up', {
          'X-Flare-Global-Searches-Remaining': '0',
          'X-Flare-Global-Searches-Batch-Reached': 'true',
        });
      }
      tenant.quotaRemaining -= cost;
      this.recentSearches.set(searchKey, now);
    }
    const fqdn = query.fqdn;
    const page = pageFeed(
      this.cursors,
      request,
      this.dataset.credentials,
      (cr) => cr.id,
      (cr) => {
        if (!emailInDomain(cr.identity_name, fqdn)) return false;
        const t = Date.parse(cr.imported_at);
        return (gte === undefined || t >= gte) && (lte === undefined || t <= lte);
      },
      (cr) => this.globalCredential(cr),
    );
    return {
      body: { items: page.items, next: page.next },
      headers: {
        'X-Flare-Global-Searches-Remaining': String(tenant.quotaRemaining),
        'X-Flare-Global-Searches-Batch-Reached': String(cost > 1),
      },
    };
  }

  private legacySearch(c: Context<Vars>, tenant: Tenant): Answer {
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
    const accept = (e: EmulatedEvent) => {
      if (types && !types.some((t) => typeMatches(t, e.item.metadata.type))) return false;
      if (tags && !tags.some((t) => e.item.tenant_metadata.tags.includes(t))) return false;
      const created = Date.parse(e.item.metadata.estimated_created_at);
      return (from === undefined || created >= from) && (to === undefined || created <= to);
    };
    const page = pageFeed(
      this.cursors,
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
      headers: {
        'X-Flare-Global-Searches-Remaining': String(tenant.quotaRemaining),
        'X-Flare-Global-Searches-Batch-Reached': 'false',
      },
    };
  }

  private legacyRecord(cr: EmulatedCredential) {
    const source = this.dataset.source(cr.source_id);
    return {
      id: cr.id,
      credential_hash: cr.credential_hash,
      domain: cr.domain,
      hash: cr.hash,
      hash_type: cr.hash_type ?? 'unknown',
      extra: {},
      imported_at: cr.imported_at,
      source: source && {
        id: source.id,
        name: source.name,
        description: source.description_en,
        description_fr: source.description_fr,
        hash_description: cr.hash_type ?? 'unknown',
        hash_type: cr.hash_type ?? 'unknown',
        ...(source.breached_at ? { breached_at: source.breached_at } : {}),
        ...(source.leaked_at ? { leaked_at: source.leaked_at } : {}),
        is_alerts_enabled: source.is_alert_enabled,
        related_urls: [],
        url: null,
      },
      source_id: cr.source_id,
      source_params: null,
    };
  }

  private globalCredential(cr: EmulatedCredential) {
    const { password: _password, ...served } = cr;
    const source = this.dataset.source(cr.source_id);
    return { ...served, ...(source ? { source: { ...source } } : {}) };
  }

  /** Legacy identity paging: records by ascending id after `from`, `size` of them, grouped by account. */
  private identityPage(match: (cr: EmulatedCredential) => boolean, from: number | undefined, size: number) {
    const identities = new Map<
      string,
      { name: string; links: Record<string, string>; passwords: unknown[] }
    >();
    let taken = 0;
    for (const cr of this.dataset.credentials) {
      if (taken >= size) break;
      if (from !== undefined && cr.id <= from) continue;
      if (!match(cr)) continue;
      taken += 1;
      let identity = identities.get(cr.identity_name);
      if (!identity) {
        identity = {
          name: cr.identity_name,
          links: { self: `/identities/${encodeURIComponent(cr.identity_name)}` },
          passwords: [],
        };
        identities.set(cr.identity_name, identity);
      }
      identity.passwords.push(this.legacyRecord(cr));
    }
    return [...identities.values()];
  }

  private adminRoutes(app: Hono<Vars>): void {
    const admin = new Hono();
    admin.get('/info', (c) =>
      c.json({
        seed: this.dataset.seed,
        coreSegment: this.coreSegment,
        tenants: this.dataset.tenants.map((t) => ({
          id: t.id,
          slug: t.slug,
          name: t.name,
          token: t.token,
          apiKey: t.apiKey,
          accountTakeover: t.accountTakeover,
          groups: t.groups,
          assets: [...t.assets.keys()],
          events: t.events.length,
          quotaRemaining: t.quotaRemaining,
        })),
        credentials: this.dataset.credentials.length,
      }),
    );
    admin.get('/requests', (c) => c.json({ requests: this.control.requests }));
    admin.delete('/requests', (c) => {
      this.control.clearLog();
      return c.body(null, 204);
    });
    admin.post('/faults', async (c) => {
      const fault = (await c.req.json().catch(() => undefined)) as Fault | undefined;
      if (!isObject(fault)) return c.json(errorBody('BAD_REQUEST', 'a fault is a JSON object'), 400);
      this.control.addFault(fault);
      return c.body(null, 204);
    });
    admin.delete('/faults', (c) => {
      this.control.clearFaults();
      return c.body(null, 204);
    });
    admin.post('/events', async (c) => {
      const body = ((await c.req.json().catch(() => ({}))) ?? {}) as {
        tenant?: number | string;
        count?: number;
      };
      const tenant = this.dataset.tenant(body.tenant ?? 'acme');
      const added = this.dataset.appendEvents(tenant.id, body.count ?? 1);
      return c.json({ added: added.map((e) => e.item.metadata.uid) });
    });
    admin.post('/credentials', async (c) => {
      const body = ((await c.req.json().catch(() => ({}))) ?? {}) as { count?: number; domain?: string };
      const added = this.dataset.appendCredentials(body.count ?? 1, { domain: body.domain });
      return c.json({ added: added.map((cr) => cr.id) });
    });
    admin.put('/settings', async (c) => {
      const body = ((await c.req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
      if (typeof body.latencyMs === 'number') this.control.latencyMs = body.latencyMs;
      if (typeof body.tokenTtlMs === 'number') this.control.tokenTtlMs = body.tokenTtlMs;
      if (body.endOfFeed === 'cursor' || body.endOfFeed === 'null') this.control.endOfFeed = body.endOfFeed;
      if (body.revokeTokens === true) this.revokeIssuedTokens();
      return c.json({
        latencyMs: this.control.latencyMs,
        tokenTtlMs: this.control.tokenTtlMs,
        endOfFeed: this.control.endOfFeed,
      });
    });
    app.route('/_emulator', admin);
  }
}

/** Returns a copy of `body` with one item broken so it no longer fits its schema. */
function breakOneItem(body: unknown, index: number): unknown {
  const copy = structuredClone(body) as Record<string, unknown> | unknown[];
  const list = Array.isArray(copy)
    ? copy
    : Array.isArray(copy?.items)
      ? (copy.items as unknown[])
      : undefined;
  const target = list?.[index] as Record<string, unknown> | undefined;
  if (!target) return copy;
  if (isObject(target.metadata)) target.metadata.severity = 'catastrophic';
  else if ('identity_name' in target) target.imported_at = 'not a timestamp';
  else if ('passwords' in target) target.passwords = 'not a list';
  else target.id = { broken: true };
  return copy;
}
