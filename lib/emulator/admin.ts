/**
 * The emulator's knobs over HTTP, under `/_emulator/`: info, the request log, faults, appended
 * events and credentials, settings (latency, token lifetime, end-of-feed behaviour, rate limits),
 * the rate stats (`/rate`), the global-search quota (`/quota`), and the identity providers'
 * stand-in (`/identity`, identity/admin.ts).
 */
import { Hono } from 'hono';
import type { EmulatorControl, Fault } from './control.ts';
import type { Dataset } from './dataset.ts';
import { errorBody, isObject } from './feeds.ts';
import { identityAdminRoutes } from './identity/admin.ts';
import type { IdentityStandIn } from './identity/index.ts';

/** What the knobs reach of the emulator (app.ts), named here so the two modules import one way. */
export interface EmulatorKnobs {
  readonly dataset: Dataset;
  readonly control: EmulatorControl;
  readonly coreSegment: string;
  readonly identity: IdentityStandIn;
  appendEvents(...args: Parameters<Dataset['appendEvents']>): ReturnType<Dataset['appendEvents']>;
  appendSharedEvents(
    ...args: Parameters<Dataset['appendSharedEvents']>
  ): ReturnType<Dataset['appendSharedEvents']>;
  expireCursors(): void;
  revokeIssuedTokens(): void;
  setQuotaRemaining(remaining: number, of?: { organizationId?: number; tenant?: number | string }): void;
}

/** The rate knobs `PUT /_emulator/settings` takes, besides `rateLimits: "real" | "off"`. */
const RATE_KNOBS = [
  'basicPerSecond',
  'searchPerSecond',
  'retryAfterSeconds',
  'countRefused',
  'searchCountsInBasic',
] as const;

function tenantsOf(emulator: EmulatorKnobs, organizationId: number): string[] {
  return emulator.dataset.tenants.filter((t) => t.organizationId === organizationId).map((t) => t.slug);
}

export function adminRoutes(emulator: EmulatorKnobs): Hono {
  const admin = new Hono();
  admin.get('/info', (c) =>
    c.json({
      seed: emulator.dataset.seed,
      coreSegment: emulator.coreSegment,
      tenants: emulator.dataset.tenants.map((t) => ({
        id: t.id,
        slug: t.slug,
        name: t.name,
        organizationId: t.organizationId,
        token: t.token,
        apiKey: t.apiKey,
        accountTakeover: t.accountTakeover,
        groups: t.groups,
        assets: [...t.assets.keys()],
        events: t.events.length,
        quotaRemaining: t.quotaRemaining,
      })),
      credentials: emulator.dataset.credentials.length,
      organizations: emulator.dataset.organizations.map((o) => ({
        id: o.id,
        tenants: tenantsOf(emulator, o.id),
        quotaRemaining: o.quotaRemaining,
      })),
      rateLimits: emulator.control.rateStats().limits,
    }),
  );
  admin.get('/rate', (c) => {
    const stats = emulator.control.rateStats();
    return c.json({
      ...stats,
      organizations: stats.organizations.map((o) => ({
        ...o,
        tenants: tenantsOf(emulator, o.organizationId),
      })),
    });
  });
  admin.delete('/rate', (c) => {
    emulator.control.resetRateStats();
    return c.body(null, 204);
  });
  const quota = () =>
    emulator.dataset.organizations.map((o) => ({
      organizationId: o.id,
      tenants: tenantsOf(emulator, o.id),
      remaining: o.quotaRemaining,
    }));
  admin.get('/quota', (c) => c.json({ organizations: quota() }));
  // {remaining, organizationId?} or {remaining, tenant?: id or slug}; neither sets every organization.
  admin.put('/quota', async (c) => {
    const body = ((await c.req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    const { organizationId, tenant } = body;
    try {
      // A misspelt target must not fall back to "every organization".
      if (organizationId !== undefined && typeof organizationId !== 'number')
        throw new TypeError('organizationId must be a number');
      if (tenant !== undefined && typeof tenant !== 'number' && typeof tenant !== 'string')
        throw new TypeError('tenant must be a tenant id or slug');
      emulator.setQuotaRemaining(body.remaining as number, { organizationId, tenant });
    } catch (error) {
      return c.json(errorBody('BAD_REQUEST', (error as Error).message), 400);
    }
    return c.json({ organizations: quota() });
  });
  admin.get('/requests', (c) => c.json({ requests: emulator.control.requests }));
  admin.delete('/requests', (c) => {
    emulator.control.clearLog();
    return c.body(null, 204);
  });
  admin.post('/faults', async (c) => {
    const fault = (await c.req.json().catch(() => undefined)) as Fault | undefined;
    if (!isObject(fault)) return c.json(errorBody('BAD_REQUEST', 'a fault is a JSON object'), 400);
    emulator.control.addFault(fault);
    return c.body(null, 204);
  });
  admin.delete('/faults', (c) => {
    emulator.control.clearFaults();
    return c.body(null, 204);
  });
  admin.post('/events', async (c) => {
    const body = ((await c.req.json().catch(() => ({}))) ?? {}) as {
      tenant?: number | string;
      /** Several tenants: the same events (one uid) for each. */
      tenants?: (number | string)[];
      count?: number;
    };
    if (Array.isArray(body.tenants)) {
      const ids = body.tenants.map((t) => emulator.dataset.tenant(t).id);
      const shared = emulator.appendSharedEvents(ids, body.count ?? 1);
      return c.json({ added: shared.map((e) => e.item.metadata.uid) });
    }
    const tenant = emulator.dataset.tenant(body.tenant ?? 'acme');
    const added = emulator.appendEvents(tenant.id, body.count ?? 1);
    return c.json({ added: added.map((e) => e.item.metadata.uid) });
  });
  admin.post('/cursors/expire', (c) => {
    emulator.expireCursors();
    return c.body(null, 204);
  });
  admin.post('/credentials', async (c) => {
    const body = ((await c.req.json().catch(() => ({}))) ?? {}) as { count?: number; domain?: string };
    const added = emulator.dataset.appendCredentials(body.count ?? 1, { domain: body.domain });
    return c.json({ added: added.map((cr) => cr.id) });
  });
  admin.put('/settings', async (c) => {
    const body = ((await c.req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    // The rate knobs first: a bad one refuses the whole request, and nothing changes.
    const before = emulator.control.rate.limits;
    try {
      if (body.rateLimits !== undefined) {
        if (body.rateLimits !== 'real' && body.rateLimits !== 'off')
          throw new RangeError('rateLimits must be "real" or "off"');
        emulator.control.rate.configure(body.rateLimits);
      }
      const change = Object.fromEntries(RATE_KNOBS.filter((k) => k in body).map((k) => [k, body[k]]));
      emulator.control.rate.configure(change);
      if (body.quotaRemaining !== undefined) emulator.setQuotaRemaining(body.quotaRemaining as number);
    } catch (error) {
      emulator.control.rate.limits = before;
      return c.json(errorBody('BAD_REQUEST', (error as Error).message), 400);
    }
    if (typeof body.latencyMs === 'number') emulator.control.latencyMs = body.latencyMs;
    if (typeof body.tokenTtlMs === 'number') emulator.control.tokenTtlMs = body.tokenTtlMs;
    if (body.endOfFeed === 'cursor' || body.endOfFeed === 'null') emulator.control.endOfFeed = body.endOfFeed;
    if (body.revokeTokens === true) emulator.revokeIssuedTokens();
    return c.json({
      latencyMs: emulator.control.latencyMs,
      tokenTtlMs: emulator.control.tokenTtlMs,
      endOfFeed: emulator.control.endOfFeed,
      // Unlimited rates read null (JSON has no Infinity).
      ...emulator.control.rateStats().limits,
    });
  });
  admin.route('/identity', identityAdminRoutes(emulator.identity));
  return admin;
}
