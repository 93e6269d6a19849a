/**
 * The identity stand-in's knobs over HTTP, for a running emulator (`/_emulator/identity/…`): the
 * state, settings (latency, Entra roles, P2, token lifetime, Okta user risk and rate), accounts
 * added, changed and removed, faults and throttling, and the request and action logs.
 */
import { Hono } from 'hono';
import type { IdentityFault, IdentityProvider } from './control.ts';
import type { EntraUserInput } from './entra.ts';
import type { IdentityStandIn } from './index.ts';
import type { OktaUserInput } from './okta.ts';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const bad = (message: string) => ({ error: { code: 'BAD_REQUEST', message } });

/** `PUT /settings` takes any of these; a bad one refuses the request before anything changes. */
interface Settings {
  latencyMs?: number;
  revokeTokens?: boolean;
  entra?: { roles?: string[]; identityProtection?: boolean; tokenTtlSeconds?: number; clientSecret?: string };
  okta?: { userRisk?: boolean; rateLimit?: { limit?: number; windowSeconds?: number; remaining?: number } };
}

function checkSettings(body: Settings): void {
  const whole = (name: string, value: unknown, min: number) => {
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < min))
      throw new RangeError(`${name} must be a whole number of at least ${min}`);
  };
  const flag = (name: string, value: unknown) => {
    if (value !== undefined && typeof value !== 'boolean')
      throw new RangeError(`${name} must be true or false`);
  };
  whole('latencyMs', body.latencyMs, 0);
  flag('revokeTokens', body.revokeTokens);
  const { entra, okta } = body;
  if (entra !== undefined && !isObject(entra)) throw new RangeError('entra must be an object');
  if (
    entra?.roles !== undefined &&
    (!Array.isArray(entra.roles) || entra.roles.some((r) => typeof r !== 'string'))
  )
    throw new RangeError('entra.roles must be an array of permission names');
  flag('entra.identityProtection', entra?.identityProtection);
  whole('entra.tokenTtlSeconds', entra?.tokenTtlSeconds, 1);
  if (entra?.clientSecret !== undefined && typeof entra.clientSecret !== 'string')
    throw new RangeError('entra.clientSecret must be a string');
  if (okta !== undefined && !isObject(okta)) throw new RangeError('okta must be an object');
  flag('okta.userRisk', okta?.userRisk);
  if (okta?.rateLimit !== undefined && !isObject(okta.rateLimit))
    throw new RangeError('okta.rateLimit must be an object');
  whole('okta.rateLimit.limit', okta?.rateLimit?.limit, 1);
  whole('okta.rateLimit.windowSeconds', okta?.rateLimit?.windowSeconds, 1);
  whole('okta.rateLimit.remaining', okta?.rateLimit?.remaining, 0);
}

export function identityAdminRoutes(idp: IdentityStandIn): Hono {
  const admin = new Hono();
  const json = async (c: { req: { json(): Promise<unknown> } }) =>
    (await c.req.json().catch(() => undefined)) as unknown;

  admin.get('/', (c) => c.json(idp.state()));

  admin.put('/settings', async (c) => {
    const body = await json(c);
    if (!isObject(body)) return c.json(bad('settings are a JSON object'), 400);
    const settings = body as Settings;
    try {
      checkSettings(settings);
      if (settings.okta?.rateLimit) idp.okta.setRateLimit(settings.okta.rateLimit);
    } catch (error) {
      return c.json(bad((error as Error).message), 400);
    }
    if (settings.latencyMs !== undefined) idp.control.latencyMs = settings.latencyMs;
    if (settings.revokeTokens) idp.entra.revokeTokens();
    const { entra, okta } = settings;
    if (entra?.roles) idp.entra.roles = [...entra.roles];
    if (entra?.identityProtection !== undefined) idp.entra.identityProtection = entra.identityProtection;
    if (entra?.tokenTtlSeconds !== undefined) idp.entra.tokenTtlSeconds = entra.tokenTtlSeconds;
    if (entra?.clientSecret !== undefined) idp.entra.clientSecret = entra.clientSecret;
    if (okta?.userRisk !== undefined) idp.okta.userRisk = okta.userRisk;
    return c.json(idp.state());
  });

  for (const provider of ['entra', 'okta'] as const) {
    const key = provider === 'entra' ? 'userPrincipalName' : 'login';
    admin.post(`/${provider}/users`, async (c) => {
      const body = await json(c);
      if (!isObject(body) || typeof body[key] !== 'string' || body[key] === '')
        return c.json(bad(`an account is a JSON object with ${key}`), 400);
      const user =
        provider === 'entra'
          ? idp.entra.addUser(body as unknown as EntraUserInput)
          : idp.okta.addUser(body as unknown as OktaUserInput);
      return c.json(user, 201);
    });
    admin.patch(`/${provider}/users/:key`, async (c) => {
      const body = await json(c);
      if (!isObject(body)) return c.json(bad('a change is a JSON object'), 400);
      try {
        const id = c.req.param('key');
        return c.json(provider === 'entra' ? idp.entra.updateUser(id, body) : idp.okta.updateUser(id, body));
      } catch (error) {
        return c.json({ error: { code: 'NOT_FOUND', message: (error as Error).message } }, 404);
      }
    });
    admin.delete(`/${provider}/users/:key`, (c) => {
      const removed = (provider === 'entra' ? idp.entra : idp.okta).removeUser(c.req.param('key'));
      return removed
        ? c.body(null, 204)
        : c.json({ error: { code: 'NOT_FOUND', message: 'no such account' } }, 404);
    });
  }

  admin.post('/faults', async (c) => {
    const body = await json(c);
    if (!isObject(body)) return c.json(bad('a fault is a JSON object'), 400);
    try {
      idp.control.addFault(body as IdentityFault);
    } catch (error) {
      return c.json(bad((error as Error).message), 400);
    }
    return c.body(null, 204);
  });
  admin.delete('/faults', (c) => {
    idp.control.clearFaults();
    return c.body(null, 204);
  });
  // {provider, times?, retryAfter?}: the next requests to it are 429s.
  admin.post('/throttle', async (c) => {
    const body = await json(c);
    const provider = isObject(body) ? body.provider : undefined;
    if (provider !== 'entra' && provider !== 'okta')
      return c.json(bad('provider must be entra or okta'), 400);
    const { times, retryAfter } = body as { times?: number; retryAfter?: number };
    idp.throttle(provider as IdentityProvider, times ?? 1, retryAfter);
    return c.body(null, 204);
  });

  admin.get('/requests', (c) => c.json({ requests: idp.control.requests }));
  admin.get('/actions', (c) => c.json({ actions: idp.control.actions }));
  admin.delete('/requests', (c) => {
    idp.control.clearLog();
    return c.body(null, 204);
  });
  return admin;
}
