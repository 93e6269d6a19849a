/**
 * One Okta org as the stand-in keeps it (its API token, its users, its rate limit, whether it has
 * the user-risk API) and the Management API routes over it, answering as identity-facts.md says
 * Okta's do: `GET /api/v1/users/<id, login or short name>` with `Authorization: SSWS <token>`,
 * the lifecycle actions, sessions and risk; Okta's error objects (`E0000011`, `E0000007`, …);
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
import { nameFromLogin } from './entra.ts';

export const OKTA_STATUSES = [
  'ACTIVE',
  'PASSWORD_EXPIRED',
  'LOCKED_OUT',
  'RECOVERY',
  'STAGED',
  'PROVISIONED',
  'SUSPENDED',
  'DEPROVISIONED',
] as const;
export type OktaStatus = (typeof OKTA_STATUSES)[number];

/** Who holds the password: `OKTA`, or a delegated store whose changes Okta does not see. */
export type OktaProviderType = 'OKTA' | 'ACTIVE_DIRECTORY' | 'LDAP' | 'FEDERATION' | 'SOCIAL' | 'IMPORT';

/** Statuses whose user can still sign in with a password (the ones `expire_password` applies to). */
const SIGNS_IN: readonly OktaStatus[] = ['ACTIVE', 'PASSWORD_EXPIRED', 'LOCKED_OUT', 'RECOVERY'];

export interface OktaUserInput {
  login: string;
  id?: string;
  /** Default: the login. */
  email?: string;
  firstName?: string;
  lastName?: string;
  /** Default ACTIVE. */
  status?: OktaStatus;
  /** Default 400 days before the stand-in's now. */
  created?: string;
  /** Default: `created`; null when the password was never changed. */
  passwordChanged?: string | null;
  lastLogin?: string | null;
  /** Default OKTA. */
  providerType?: OktaProviderType;
  /** Default: `OKTA`, or a name that fits the type (`corp.local` for ACTIVE_DIRECTORY). */
  providerName?: string;
}

/** A user as kept: Okta's fields, plus what the actions changed. */
export interface OktaUser {
  id: string;
  status: OktaStatus;
  created: string;
  activated: string | null;
  statusChanged: string | null;
  lastLogin: string | null;
  lastUpdated: string;
  passwordChanged: string | null;
  type: { id: string };
  profile: {
    firstName: string;
    lastName: string;
    mobilePhone: null;
    secondEmail: null;
    login: string;
    email: string;
  };
  credentials: { password?: Record<string, never>; provider: { type: OktaProviderType; name: string } };
  /** Set by `PUT …/risk` (not part of the user object Okta returns). */
  risk?: { riskLevel: string; reason?: string };
  /** When sessions were last cleared (not part of the user object). */
  sessionsClearedAt?: string;
}

export interface OktaOptions {
  /** The API token (`SSWS`); default random per stand-in. */
  token?: string;
  /** A token that may read but not act (403 `E0000006` on every action); default none. */
  readOnlyToken?: string;
  /** The org has the user-risk API (`PUT …/risk`); default false (404, as an org without it). */
  userRisk?: boolean;
  /** Requests per window; default 600 a minute. */
  rateLimit?: { limit: number; windowSeconds?: number };
  users?: OktaUserInput[];
}

const DAY = 86_400_000;

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

export class OktaStandIn {
  token: string;
  readOnlyToken?: string;
  userRisk: boolean;
  readonly users = new Map<string, OktaUser>();
  private limit: number;
  private windowSeconds: number;
  private window = { resetAt: 0, used: 0 };

  constructor(
    options: OktaOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.token = options.token ?? `okta-token-${randomBytes(12).toString('base64url')}`;
    this.readOnlyToken = options.readOnlyToken;
    this.userRisk = options.userRisk ?? false;
    this.limit = options.rateLimit?.limit ?? 600;
    this.windowSeconds = options.rateLimit?.windowSeconds ?? 60;
    for (const user of options.users ?? []) this.addUser(user);
  }

  /** Adds a user (or replaces the one with the same login); returns it as kept. */
  addUser(input: OktaUserInput): OktaUser {
    const existing = this.user(input.login);
    if (existing) this.users.delete(existing.id);
    const name = nameFromLogin(input.login);
    const created = input.created ?? new Date(this.now() - 400 * DAY).toISOString();
    const status = input.status ?? 'ACTIVE';
    const type = input.providerType ?? 'OKTA';
    const staged = status === 'STAGED' || status === 'PROVISIONED';
    const user: OktaUser = {
      id: input.id ?? `00u${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x').slice(0, 17)}`,
      status,
      created,
      activated: staged ? null : created,
      statusChanged: created,
      lastLogin: input.lastLogin === undefined ? null : input.lastLogin,
      lastUpdated: created,
      passwordChanged: input.passwordChanged === undefined ? created : input.passwordChanged,
      type: { id: 'oty1a2b3c4d5e6f7g8h9' },
      profile: {
        firstName: input.firstName ?? name.first,
        lastName: input.lastName ?? name.last,
        mobilePhone: null,
        secondEmail: null,
        login: input.login,
        email: input.email ?? input.login,
      },
      credentials: {
        ...(type === 'OKTA' ? { password: {} } : {}),
        provider: { type, name: input.providerName ?? providerNameOf(type) },
      },
    };
    this.users.set(user.id, user);
    return user;
  }

  /**
   * The user with this id, login, or login short name (the part before `@`, when one user has it),
   * logins case-insensitive. A key with `/` is only ever an id, as Okta's path can carry no other.
   */
  user(key: string): OktaUser | undefined {
    const byId = this.users.get(key);
    if (byId || key.includes('/')) return byId;
    const want = key.toLowerCase();
    const all = [...this.users.values()];
    const byLogin = all.find((u) => u.profile.login.toLowerCase() === want);
    if (byLogin || want.includes('@')) return byLogin;
    const short = all.filter((u) => u.profile.login.toLowerCase().split('@')[0] === want);
    return short.length === 1 ? short[0] : undefined;
  }

  /** Changes a user (a test's or the demo's, not an API call); returns it. */
  updateUser(key: string, change: Partial<Omit<OktaUserInput, 'id' | 'login'>>): OktaUser {
    const user = this.user(key);
    if (!user) throw new RangeError(`no Okta user ${key}`);
    if (change.status) user.status = change.status;
    if (change.passwordChanged !== undefined) user.passwordChanged = change.passwordChanged;
    if (change.lastLogin !== undefined) user.lastLogin = change.lastLogin;
    if (change.email) user.profile.email = change.email;
    if (change.firstName) user.profile.firstName = change.firstName;
    if (change.lastName) user.profile.lastName = change.lastName;
    if (change.providerType || change.providerName) {
      const type = change.providerType ?? user.credentials.provider.type;
      user.credentials = {
        ...(type === 'OKTA' ? { password: {} } : {}),
        provider: { type, name: change.providerName ?? providerNameOf(type) },
      };
    }
    return user;
  }

  removeUser(key: string): boolean {
    const user = this.user(key);
    return user ? this.users.delete(user.id) : false;
  }

  /**
   * Sets the rate limit: requests per window of `windowSeconds`; `remaining` spends the current
   * window down to that many (0: the next request is a 429).
   */
  setRateLimit(change: { limit?: number; windowSeconds?: number; remaining?: number }): void {
    for (const [key, value] of Object.entries(change)) {
      if (value !== undefined && (!Number.isInteger(value) || value < (key === 'remaining' ? 0 : 1)))
        throw new RangeError(
          `okta rate ${key} must be a whole number${key === 'remaining' ? '' : ' above 0'}`,
        );
    }
    if (change.limit !== undefined) this.limit = change.limit;
    if (change.windowSeconds !== undefined) this.windowSeconds = change.windowSeconds;
    this.roll();
    if (change.remaining !== undefined) this.window.used = Math.max(0, this.limit - change.remaining);
  }

  /** The rate headers as they stand: the limit, what is left of the window, when it resets. */
  rateHeaders(): Record<string, string> {
    this.roll();
    return {
      'X-Rate-Limit-Limit': String(this.limit),
      'X-Rate-Limit-Remaining': String(Math.max(0, this.limit - this.window.used)),
      'X-Rate-Limit-Reset': String(Math.ceil(this.window.resetAt / 1000)),
    };
  }

  /** Counts a request; false when the window's requests are spent. */
  take(): boolean {
    this.roll();
    if (this.window.used >= this.limit) return false;
    this.window.used += 1;
    return true;
  }

  private roll(): void {
    const now = this.now();
    if (now >= this.window.resetAt) this.window = { resetAt: now + this.windowSeconds * 1000, used: 0 };
  }
}

function providerNameOf(type: OktaProviderType): string {
  return type === 'ACTIVE_DIRECTORY' ? 'corp.local' : type === 'LDAP' ? 'ldap.corp.local' : type;
}

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
