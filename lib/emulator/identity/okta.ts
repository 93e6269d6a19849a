/**
 * One Okta org as the stand-in keeps it: its API token (and a read-only one), its users, its rate
 * limit (a window of requests, as Okta's `X-Rate-Limit-*` headers tell it), and whether it has the
 * user-risk API. The Management API routes over it are okta-routes.ts.
 */
import { randomBytes } from 'node:crypto';
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
export const SIGNS_IN: readonly OktaStatus[] = ['ACTIVE', 'PASSWORD_EXPIRED', 'LOCKED_OUT', 'RECOVERY'];

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

  /** The user whose login is exactly `login` (case aside), whatever it holds: a filter's search. */
  byLogin(login: string): OktaUser | undefined {
    const want = login.toLowerCase();
    return [...this.users.values()].find((u) => u.profile.login.toLowerCase() === want);
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
