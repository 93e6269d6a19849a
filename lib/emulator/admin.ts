/**
 * The emulator's knobs over HTTP, under `/_emulator/`: info, the request log, faults, appended
 * events and credentials, and settings (latency, token lifetime, end-of-feed behaviour).
 */
import { Hono } from 'hono';
import type { EmulatorControl, Fault } from './control.ts';
import type { Dataset } from './dataset.ts';
import { errorBody, isObject } from './feeds.ts';

/** What the knobs reach of the emulator (app.ts), named here so the two modules import one way. */
export interface EmulatorKnobs {
  readonly dataset: Dataset;
  readonly control: EmulatorControl;
  readonly coreSegment: string;
  appendEvents(...args: Parameters<Dataset['appendEvents']>): ReturnType<Dataset['appendEvents']>;
  expireCursors(): void;
  revokeIssuedTokens(): void;
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
        token: t.token,
        apiKey: t.apiKey,
        accountTakeover: t.accountTakeover,
        groups: t.groups,
        assets: [...t.assets.keys()],
        events: t.events.length,
        quotaRemaining: t.quotaRemaining,
      })),
      credentials: emulator.dataset.credentials.length,
    }),
  );
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
      count?: number;
    };
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
    if (typeof body.latencyMs === 'number') emulator.control.latencyMs = body.latencyMs;
    if (typeof body.tokenTtlMs === 'number') emulator.control.tokenTtlMs = body.tokenTtlMs;
    if (body.endOfFeed === 'cursor' || body.endOfFeed === 'null') emulator.control.endOfFeed = body.endOfFeed;
    if (body.revokeTokens === true) emulator.revokeIssuedTokens();
    return c.json({
      latencyMs: emulator.control.latencyMs,
      tokenTtlMs: emulator.control.tokenTtlMs,
      endOfFeed: emulator.control.endOfFeed,
    });
  });
  return admin;
}
