/**
 * An Okta org's Management API over one OktaStandIn, answering as docs/identity.md says Okta's
 * does: `GET /api/v1/users/<id, login or short name>` with `Authorization: SSWS <token>`, the
 * lifecycle actions, sessions and risk; Okta's error objects (`E0000011`, `E0000007`, …);
 * `X-Rate-Limit-Limit`, `-Remaining` and `-Reset` (epoch seconds) on every answer, and 429
 * `E0000047` with no `Retry-After` once the window's requests are spent. Mounted at `/okta`: a
 * config's `orgUrl` is `<origin>/okta`.
 *
 * Lifecycle moves follow Okta's rules: only an ACTIVE user can be suspended, only a SUSPENDED one
 * unsuspended, and a password expires only for a user who can sign in with one; any other move is
 * 403 `E0000038`.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { type IdentityControl, ProviderError, type ProviderFace } from './control.ts';
import { type OktaStandIn, type OktaStatus, type OktaUser, SIGNS_IN } from './okta.ts';

const OKTA_CODES: Record<number, [string, string]> = {
  400: ['E0000001', 'Api validation failed'],
  401: ['E0000011', 'Invalid token provided'],
  403: ['E0000006', 'You do not have permission to perform the requested action'],
  404: ['E0000007', 'Not found: Resource not found'],
  429: ['E0000047', 'API call exceeded rate limit due to too many requests.'],
};

const notFound = (what: string) =>
  new ProviderError(404, 'E0000007', `Not found: Resource not found: ${what} (User)`);
const wrongStatus = () =>
  new ProviderError(403, 'E0000038', "This operation is not allowed in the user's current status.");

/** The user object as Okta serves it (without what the stand-in keeps beside it). */
function served(c: Context, user: OktaUser): Record<string, unknown> {
  const { risk: _risk, sessionsClearedAt: _cleared, ...rest } = user;
  const base = new URL(c.req.url).origin + c.req.path.slice(0, c.req.path.indexOf('/api/v1/'));
  return { ...rest, _links: { self: { href: `${base}/api/v1/users/${user.id}` } } };
}

export function oktaRoutes(okta: OktaStandIn, control: IdentityControl): Hono {
  const app = new Hono();
  const face: ProviderFace = {
    provider: 'okta',
    errorAnswer(c, error) {
      const [code, summary] = OKTA_CODES[error.status] ?? ['E0000009', 'Internal Server Error'];
      const body = {
        errorCode: error.code ?? code,
        errorSummary: error.code ? error.message : summary,
        errorLink: error.code ?? code,
        errorId: `oae${randomBytes(11).toString('base64url')}`,
        errorCauses: [],
      };
      return c.json(body, error.status as 400, error.headers);
    },
    admit(c) {
      if (okta.take()) return undefined;
      return face.errorAnswer(c, new ProviderError(429, undefined, 'rate limit'));
    },
    headers: () => okta.rateHeaders(),
  };

  /** Checks the SSWS token; `act` needs one that may change users. */
  const authorize = (c: Context, act: boolean) => {
    const match = /^SSWS\s+(\S+)$/.exec(c.req.header('authorization') ?? '');
    const token = match?.[1];
    if (token !== undefined && token === okta.token) return;
    if (token !== undefined && token === okta.readOnlyToken) {
      if (!act) return;
      throw new ProviderError(403, 'E0000006', 'You do not have permission to perform the requested action');
    }
    throw new ProviderError(401, 'E0000011', 'Invalid token provided');
  };
  const userOf = (c: Context) => {
    const key = c.req.param('key') ?? '';
    const user = okta.user(key);
    if (!user) throw notFound(key);
    return user;
  };
  const stamp = (user: OktaUser, status?: OktaStatus) => {
    const at = new Date(control.now()).toISOString();
    if (status) {
      user.status = status;
      user.statusChanged = at;
    }
    user.lastUpdated = at;
  };
  const record = (action: Parameters<IdentityControl['recordAction']>[0]['action'], user: OktaUser) =>
    control.recordAction({ provider: 'okta', action, userId: user.id, login: user.profile.login });

  // A login that cannot be a path segment (it holds a `/`) is found by listing with a filter;
  // the stand-in knows the one filter a client needs: `profile.login eq "<login>"`.
  app.get(
    '/api/v1/users',
    control.endpoint(face, 'oktaUser', (c) => {
      authorize(c, false);
      const filter = /^profile\.login eq "((?:[^"\\]|\\.)*)"$/.exec(c.req.query('filter') ?? '');
      if (!filter) throw new ProviderError(400, 'E0000031', 'Invalid search criteria.');
      const login = (filter[1] as string).replace(/\\(.)/g, '$1');
      const user = okta.byLogin(login);
      return c.json(user ? [served(c, user)] : []);
    }),
  );

  app.get(
    '/api/v1/users/:key',
    control.endpoint(face, 'oktaUser', (c) => {
      authorize(c, false);
      return c.json(served(c, userOf(c)));
    }),
  );

  app.post(
    '/api/v1/users/:key/lifecycle/expire_password',
    control.endpoint(face, 'oktaExpirePassword', (c) => {
      authorize(c, true);
      const user = userOf(c);
      if (!SIGNS_IN.includes(user.status)) throw wrongStatus();
      stamp(user, 'PASSWORD_EXPIRED');
      record('requirePasswordChange', user);
      return c.json(served(c, user));
    }),
  );

  app.post(
    '/api/v1/users/:key/lifecycle/suspend',
    control.endpoint(face, 'oktaSuspend', (c) => {
      authorize(c, true);
      const user = userOf(c);
      if (user.status !== 'ACTIVE') throw wrongStatus();
      stamp(user, 'SUSPENDED');
      record('disable', user);
      return c.json({});
    }),
  );

  app.post(
    '/api/v1/users/:key/lifecycle/unsuspend',
    control.endpoint(face, 'oktaUnsuspend', (c) => {
      authorize(c, true);
      const user = userOf(c);
      if (user.status !== 'SUSPENDED') throw wrongStatus();
      stamp(user, 'ACTIVE');
      record('enable', user);
      return c.json({});
    }),
  );

  app.delete(
    '/api/v1/users/:key/sessions',
    control.endpoint(face, 'oktaClearSessions', (c) => {
      authorize(c, true);
      const user = userOf(c);
      user.sessionsClearedAt = new Date(control.now()).toISOString();
      record('revokeSessions', user);
      return c.body(null, 204);
    }),
  );

  app.put(
    '/api/v1/users/:key/risk',
    control.endpoint(face, 'oktaRisk', (c, body) => {
      authorize(c, true);
      // An org without the (feature-gated) user-risk API does not have the route at all.
      if (!okta.userRisk)
        throw new ProviderError(404, 'E0000007', 'Not found: Resource not found: risk (Feature)');
      const user = userOf(c);
      let input: { riskLevel?: unknown; riskReason?: unknown } = {};
      try {
        input = JSON.parse(body) as typeof input;
      } catch {
        // Refused below.
      }
      if (!['HIGH', 'MEDIUM', 'LOW'].includes(input?.riskLevel as string))
        throw new ProviderError(400, 'E0000001', 'Api validation failed: riskLevel');
      user.risk = {
        riskLevel: input.riskLevel as string,
        ...(typeof input.riskReason === 'string' ? { reason: input.riskReason } : {}),
      };
      record('setRisk', user);
      return c.json({ ...user.risk, _links: {} });
    }),
  );

  app.all(
    '/*',
    control.endpoint(face, 'unknown', (c) => {
      throw new ProviderError(404, 'E0000007', `Not found: Resource not found: ${c.req.path}`);
    }),
  );
  return app;
}
