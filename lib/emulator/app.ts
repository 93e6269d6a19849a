/**
 * The upstream's stand-in: a Hono app serving all eleven endpoints of the upstream spec and
 * `POST /tokens/generate` over a seeded dataset, scoped per tenant, with the limits, paging and
 * errors of the real service (docs/architecture.md), plus knobs under `/_emulator/` for tests and demos.
 * At the same origin it stands in for the demo's identity providers (identity/: Entra ID under
 * `/entra`, Okta under `/okta`).
 * The rate limits (limits.ts) are off unless asked for (`rateLimits: 'real'`), so a test or a demo
 * never meets a 429 it did not ask for; the global-search quota (quota.ts) is always charged.
 *
 * Longer than 300 lines on purpose: every endpoint's route is written inline on the app, as Hono
 * has it, so the service reads in one place; searches, identities, feeds and the knobs are
 * already modules of their own.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { adminRoutes } from './admin.ts';
import type { EndpointName } from './control.ts';
import { EmulatorControl } from './control.ts';
import { CursorCodec } from './cursor.ts';
import { Dataset } from './dataset.ts';
import type { DatasetGrowth, DatasetOptions, Tenant } from './dataset-types.ts';
import { type Answer, badRequest, EmulatorError, errorBody, intParam, isObject } from './feeds.ts';
import { emailInDomain, identityPage, keywordMatcher, legacyRecord } from './identities.ts';
import { demoIdentityOptions } from './identity/demo-directory.ts';
import { IdentityStandIn } from './identity/index.ts';
import type { RateLimitOption, Tier } from './limits.ts';
import {
  checkSearchBody,
  credentialSearch,
  eventSearch,
  legacySearch,
  MAX_GROUP_PAGE,
  type SearchWorld,
} from './searches.ts';

export interface EmulatorOptions extends DatasetOptions {
  /** The path segment the spec writes `core`; default `firework`. */
  coreSegment?: string;
  /** Cursor signing instance; random by default, so cursors from an earlier run are refused. */
  instance?: string;
  /**
   * A file that carries the emulator over a restart (`npm start` keeps it under `.data/`): the
   * cursor key, the anchor and the events appended since, so saved cursors stay valid and live
   * events are not replayed under new ids.
   */
  stateFile?: string;
  /** Clock for token expiry, quota and rate windows; default Date.now. */
  now?: () => number;
  /**
   * Per-organization rate limits (limits.ts): `'real'` is the real service's 4 requests/s Basic
   * and 1 request/s Search; default `'off'` (unlimited), so tests and `npm start` are not refused
   * unless they ask; or the knobs one by one (`{ basicPerSecond: 4, retryAfterSeconds: 10 }`).
   */
  rateLimits?: RateLimitOption;
}

/** The real service's 429 body (its docs show the message too). */
const RATE_LIMITED_BODY = { error: { code: 'RATELIMIT_REACHED', message: 'ratelimit reached' } };

type Vars = { Variables: { tenant: Tenant } };

interface SavedState {
  seed: string | number;
  instance: string;
  anchor: string;
  growth: DatasetGrowth;
}

/** The saved state, when the file holds one for this seed; otherwise the emulator starts afresh. */
function readState(file: string, seed: string | number): SavedState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as SavedState;
    const valid =
      state.seed === seed && typeof state.instance === 'string' && !Number.isNaN(Date.parse(state.anchor));
    return valid ? state : undefined;
  } catch {
    return undefined;
  }
}

export class Emulator {
  readonly dataset: Dataset;
  readonly control: EmulatorControl;
  readonly app: Hono<Vars>;
  readonly coreSegment: string;
  /**
   * The identity providers' stand-in (identity/index.ts) at this emulator's origin, its directory
   * made from the dataset's leaked logins (identity/demo-directory.ts): `npm start`'s demo config
   * names it.
   */
  readonly identity: IdentityStandIn;
  private readonly issued = new Map<string, { tenantId: number; expiresAt: number }>();
  private readonly now: () => number;
  private readonly world: SearchWorld;

  private readonly stateFile?: string;
  private instance: string;

  constructor(options: EmulatorOptions = {}) {
    const saved = options.stateFile ? readState(options.stateFile, options.seed ?? 42) : undefined;
    this.dataset = new Dataset({ ...options, ...(saved ? { anchor: new Date(saved.anchor) } : {}) });
    if (saved) this.dataset.restore(saved.growth);
    this.stateFile = options.stateFile;
    this.instance = saved?.instance ?? options.instance ?? randomBytes(8).toString('hex');
    this.coreSegment = options.coreSegment ?? 'firework';
    this.now = options.now ?? Date.now;
    this.control = new EmulatorControl({ rateLimits: options.rateLimits, now: this.now });
    this.identity = new IdentityStandIn({ now: this.now, ...demoIdentityOptions(this.dataset) });
    this.world = {
      dataset: this.dataset,
      cursors: new CursorCodec(this.dataset.seed, this.instance),
      control: this.control,
      now: this.now,
      recentSearches: new Map(),
    };
    this.app = this.buildApp();
    this.persist();
  }

  /** Refuses every cursor issued so far (they "expire"); a test of what a refused cursor costs. */
  expireCursors(): void {
    this.instance = this.world.cursors.expire();
    this.persist();
  }

  /** Appends events as the live feed does, and keeps them across a restart when there is a state file. */
  appendEvents(...args: Parameters<Dataset['appendEvents']>) {
    const added = this.dataset.appendEvents(...args);
    this.persist();
    return added;
  }

  /** The same new events (one uid) for several tenants; kept across a restart like any appended. */
  appendSharedEvents(...args: Parameters<Dataset['appendSharedEvents']>) {
    const added = this.dataset.appendSharedEvents(...args);
    this.persist();
    return added;
  }

  /** Writes the state file, when there is one (small: the key, the anchor, what was appended). */
  persist(): void {
    if (!this.stateFile) return;
    const state: SavedState = {
      seed: this.dataset.seed,
      instance: this.instance,
      anchor: new Date(this.dataset.anchor).toISOString(),
      growth: this.dataset.growth(),
    };
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(state));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }

  /**
   * Sets the global searches left this month: of one organization (by id, or a tenant's id or
   * slug, meaning its organization), or of every organization when none is named.
   */
  setQuotaRemaining(remaining: number, of?: { organizationId?: number; tenant?: number | string }): void {
    if (!Number.isInteger(remaining) || remaining < 0) {
      throw new RangeError('the quota remaining must be a whole number, 0 or more');
    }
    const id =
      of?.organizationId ??
      (of?.tenant === undefined ? undefined : this.dataset.tenant(of.tenant).organizationId);
    const organizations = id === undefined ? this.dataset.organizations : [this.dataset.organization(id)];
    for (const organization of organizations) organization.quotaRemaining = remaining;
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
      this.appendEvents(tenant.id, min + Math.floor(Math.random() * (max - min + 1)));
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

  /**
   * Counts the request against its organization's rate (limits.ts); returns the tiers that refuse
   * it, or undefined when admitted. A request no organization can be told for (a bad token or
   * key) is not counted: the real service cannot know whose it is either. The token exchange
   * counts as the key's organization.
   */
  private admit(name: EndpointName, c: Context<Vars>, tenant: Tenant | undefined): Tier[] | undefined {
    const organizationId =
      tenant?.organizationId ??
      (name === 'generateToken'
        ? this.dataset.tenantsOfApiKey((c.req.header('authorization') ?? '').trim())[0]?.organizationId
        : undefined);
    if (organizationId === undefined) return undefined;
    const admission = this.control.rate.admit(organizationId, name);
    return admission.admitted ? undefined : admission.refusedBy;
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
      let rateLimited: Tier[] | undefined;
      try {
        if (this.control.latencyMs > 0) await new Promise((r) => setTimeout(r, this.control.latencyMs));
        // Counted as it arrives, before anything awaits its body: the rate is measured on arrival
        // times, and a busy event loop would otherwise count a request late, crowding it into the
        // next second with those sent after it. An unreadable body is answered after the check:
        // it still reached the service.
        const tenant = options.auth === false ? undefined : this.authenticate(c);
        tenantId = tenant?.id;
        rateLimited = this.admit(name, c, tenant);
        if (rateLimited) {
          status = 429;
          const wait = this.control.rate.limits.retryAfterSeconds;
          return c.json(RATE_LIMITED_BODY, 429, wait === undefined ? {} : { 'Retry-After': String(wait) });
        }
        input = c.req.method === 'GET' ? c.req.queries() : await this.readJson(c);
        const fault = this.control.takeFault(name, c.req.path);
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
          ...(rateLimited ? { rateLimited } : {}),
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
          const allowed = key ? this.dataset.tenantsOfApiKey(key) : [];
          if (!allowed.length) throw new EmulatorError(401, 'UNAUTHORIZED', 'invalid API key');
          const wanted = isObject(input) ? input.tenant_id : undefined;
          const tenant = wanted === undefined ? allowed[0] : allowed.find((t) => t.id === wanted);
          if (!tenant) {
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
            passwords: records.map((r) => legacyRecord(this.dataset, r)),
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
        return eventSearch(
          this.world,
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
        return eventSearch(this.world, 'tenantEvents', tenant, body, () => true);
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
          return { body: identityPage(this.dataset, (cr) => cr.password === password, from, size) };
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
                ...legacyRecord(this.dataset, cr),
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
          return { body: identityPage(this.dataset, (cr) => matches(cr.identity_name), from, size) };
        }),
      );
      app.get(
        `${prefix}/identities/by_domain/:domain`,
        this.endpoint('identitiesByDomain', (c) => {
          const size = intParam(c.req.query('size'), 'size', { min: 1, max: 10_000 }) ?? 100;
          const from = intParam(c.req.query('from'), 'from');
          const domain = c.req.param('domain') ?? '';
          return {
            body: identityPage(this.dataset, (cr) => emailInDomain(cr.identity_name, domain), from, size),
          };
        }),
      );
    }

    app.post(
      `${core}/v4/credentials/global/_search`,
      this.endpoint('globalCredentials', (_c, tenant, input) => credentialSearch(this.world, tenant, input)),
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
      `${core}/v4/events/actions`,
      this.endpoint('eventActions', (_c, tenant, input) => {
        eventAction(tenant, input);
        return { body: {} };
      }),
    );

    app.post(
      `${core}/v2/search/`,
      this.endpoint('legacySearch', (c, tenant) => legacySearch(this.world, c, tenant)),
    );

    app.route('/', this.identity.app);
    app.route('/_emulator', adminRoutes(this));

    app.notFound((c) => c.json(errorBody('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`), 404));
    app.onError((error, c) => c.json(errorBody('INTERNAL', error.message), 500));
    return app;
  }
}

/**
 * Endpoint 12: `{action: {type}, targets: [{uid}]}` (1 to 10 targets) sets or clears the flags of
 * the tenant's events, which the event searches filter on. A uid the tenant has no event for
 * refuses the whole request (404), and nothing changes.
 */
function eventAction(tenant: Tenant, input: unknown): void {
  const flags: Record<string, ['isIgnored' | 'isRemediated', boolean]> = {
    ignore: ['isIgnored', true],
    unignore: ['isIgnored', false],
    remediate: ['isRemediated', true],
    unremediate: ['isRemediated', false],
  };
  const action = isObject(input) && isObject(input.action) ? input.action : undefined;
  const flag = typeof action?.type === 'string' ? flags[action.type] : undefined;
  if (!flag) throw badRequest('action.type must be one of ignore, remediate, unignore, unremediate');
  const targets = isObject(input) ? input.targets : undefined;
  if (!Array.isArray(targets) || targets.length === 0 || targets.length > 10)
    throw badRequest('targets must be an array of 1 to 10 {uid}');
  const uids = targets.map((t) => (isObject(t) && typeof t.uid === 'string' ? t.uid : undefined));
  if (uids.some((u) => u === undefined)) throw badRequest('every target must be {uid: string}');
  const events = uids.map((uid) => tenant.events.find((e) => e.item.metadata.uid === uid));
  const missing = uids.find((_, i) => !events[i]);
  if (missing !== undefined) throw new EmulatorError(404, 'NOT_FOUND', `event ${missing} not found`);
  const [field, value] = flag;
  for (const event of events) if (event) event[field] = value;
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
