/**
 * One Microsoft Entra ID directory as the stand-in keeps it: the tenant, the one app registration
 * that may call it (client id, secret, the application permissions granted), its users, and the
 * tokens it issues. The routes that serve it are login.ts (the token endpoint) and graph.ts.
 *
 * Roles are written into each token when it is issued, as Entra does: a change of `roles` applies
 * from the next token on.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type AppTokenClaims, GRAPH_AUDIENCE, readToken, signToken } from './token.ts';

/** What a test or the demo says of a user; everything but the UPN has a default. */
export interface EntraUserInput {
  userPrincipalName: string;
  id?: string;
  /** Default: the UPN. */
  mail?: string | null;
  /** Default: made from the UPN's local part (`kim.lee7` → `Kim Lee`). */
  displayName?: string;
  givenName?: string | null;
  surname?: string | null;
  /** Default true. */
  accountEnabled?: boolean;
  /** Default: 400 days before the stand-in's now. */
  createdDateTime?: string;
  /** When the password last changed or the user was created, whichever is later (default: created). */
  lastPasswordChangeDateTime?: string;
  /** `true` for a user synced from on-premises AD; default null (a cloud user). */
  onPremisesSyncEnabled?: boolean | null;
  /** Default `SMTP:<mail>`. */
  proxyAddresses?: string[];
  jobTitle?: string | null;
}

/** A user as kept: Graph's property names, plus what the actions changed. */
export interface EntraUser {
  id: string;
  userPrincipalName: string;
  mail: string | null;
  displayName: string;
  givenName: string | null;
  surname: string | null;
  accountEnabled: boolean;
  createdDateTime: string;
  lastPasswordChangeDateTime: string;
  onPremisesSyncEnabled: boolean | null;
  proxyAddresses: string[];
  jobTitle: string | null;
  businessPhones: string[];
  mobilePhone: string | null;
  officeLocation: string | null;
  preferredLanguage: string | null;
  userType: 'Member';
  passwordProfile: { forceChangePasswordNextSignIn: boolean; password: null };
  /** Moved to now by `revokeSignInSessions`. */
  signInSessionsValidFromDateTime: string;
  /** Identity Protection's view (not a user property): `confirmCompromised` sets it. */
  risk: { riskLevel: 'none' | 'high'; riskState: 'none' | 'confirmedCompromised' };
}

export interface EntraOptions {
  /** Default: a fixed GUID. */
  tenantId?: string;
  /** Verified domains the token endpoint also takes in place of the tenant id. */
  tenantDomains?: string[];
  clientId?: string;
  /** Default: random per stand-in. */
  clientSecret?: string;
  /** The application permissions granted; default `["User.Read.All"]`. */
  roles?: string[];
  /** Entra ID P2 (Identity Protection); default true. */
  identityProtection?: boolean;
  users?: EntraUserInput[];
}

export const DEFAULT_ENTRA_TENANT = '2f6c1b1e-7d0a-4c5e-9b3a-5d8e0f1a2b3c';
export const DEFAULT_ENTRA_CLIENT = '8a1d4c2b-3e5f-4a6b-9c7d-0e1f2a3b4c5d';

/** The permissions each kind of request needs: any one of a list will do (Graph's least-privilege tables). */
export const GRAPH_PERMISSIONS = {
  read: ['User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  revokeSessions: ['User.RevokeSessions.All', 'User.ReadWrite.All', 'Directory.ReadWrite.All'],
  passwordProfile: ['User.ReadWrite.All', 'User-PasswordProfile.ReadWrite.All', 'Directory.ReadWrite.All'],
  accountEnabled: ['User.EnableDisableAccount.All', 'User.ReadWrite.All', 'Directory.ReadWrite.All'],
  confirmCompromised: ['IdentityRiskyUser.ReadWrite.All'],
} as const;

/** Every permission the product's Entra actions use: what the demo's app is granted. */
export const ALL_ENTRA_ROLES = [
  'User.Read.All',
  'User.RevokeSessions.All',
  'User.ReadWrite.All',
  'User.EnableDisableAccount.All',
  'IdentityRiskyUser.ReadWrite.All',
];

const DAY = 86_400_000;

/** `kim.lee7@acme.test` → `Kim Lee`: a person's name for a made-up account. */
export function nameFromLogin(login: string): { first: string; last: string; display: string } {
  const words = (login.split('@')[0] ?? login)
    .split(/[._-]+/)
    .map((w) => w.replace(/\d+$/, ''))
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1));
  const first = words[0] ?? 'User';
  const last = words.slice(1).join(' ') || 'Demo';
  return { first, last, display: `${first} ${last}` };
}

export class EntraStandIn {
  tenantId: string;
  tenantDomains: string[];
  clientId: string;
  clientSecret: string;
  roles: string[];
  identityProtection: boolean;
  /** `expires_in` of the tokens issued (Entra's is 3599, sometimes more). */
  tokenTtlSeconds = 3599;
  /** Users by id. */
  readonly users = new Map<string, EntraUser>();
  /** When Identity Protection last took a call (1 a second per tenant). */
  lastRiskyUsersCall = Number.NEGATIVE_INFINITY;
  private readonly key = randomBytes(32);
  /** The `uti` of every token issued and not revoked ({@link revokeTokens}). */
  private readonly issued = new Set<string>();

  constructor(
    options: EntraOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.tenantId = options.tenantId ?? DEFAULT_ENTRA_TENANT;
    this.tenantDomains = options.tenantDomains ?? [];
    this.clientId = options.clientId ?? DEFAULT_ENTRA_CLIENT;
    this.clientSecret = options.clientSecret ?? `entra-secret-${randomBytes(12).toString('base64url')}`;
    this.roles = options.roles ?? ['User.Read.All'];
    this.identityProtection = options.identityProtection ?? true;
    for (const user of options.users ?? []) this.addUser(user);
  }

  /** Adds a user (or replaces the one with the same UPN); returns it as kept. */
  addUser(input: EntraUserInput): EntraUser {
    const existing = this.user(input.userPrincipalName);
    if (existing) this.users.delete(existing.id);
    const name = nameFromLogin(input.userPrincipalName);
    const created = input.createdDateTime ?? new Date(this.now() - 400 * DAY).toISOString();
    const mail = input.mail === undefined ? input.userPrincipalName : input.mail;
    const user: EntraUser = {
      id: input.id ?? randomUUID(),
      userPrincipalName: input.userPrincipalName,
      mail,
      displayName: input.displayName ?? name.display,
      givenName: input.givenName === undefined ? name.first : input.givenName,
      surname: input.surname === undefined ? name.last : input.surname,
      accountEnabled: input.accountEnabled ?? true,
      createdDateTime: created,
      lastPasswordChangeDateTime: input.lastPasswordChangeDateTime ?? created,
      onPremisesSyncEnabled: input.onPremisesSyncEnabled ?? null,
      proxyAddresses: input.proxyAddresses ?? (mail ? [`SMTP:${mail}`] : []),
      jobTitle: input.jobTitle ?? null,
      businessPhones: [],
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: null,
      userType: 'Member',
      passwordProfile: { forceChangePasswordNextSignIn: false, password: null },
      signInSessionsValidFromDateTime: created,
      risk: { riskLevel: 'none', riskState: 'none' },
    };
    this.users.set(user.id, user);
    return user;
  }

  /** The user with this id or UPN (case-insensitive, as Graph matches them). */
  user(key: string): EntraUser | undefined {
    const byId = this.users.get(key) ?? this.users.get(key.toLowerCase());
    if (byId) return byId;
    const want = key.toLowerCase();
    for (const user of this.users.values()) if (user.userPrincipalName.toLowerCase() === want) return user;
    return undefined;
  }

  /** Changes a user's properties (a test's or the demo's, not a Graph PATCH); returns it. */
  updateUser(key: string, change: Partial<Omit<EntraUserInput, 'id'>>): EntraUser {
    const user = this.user(key);
    if (!user) throw new RangeError(`no Entra user ${key}`);
    Object.assign(
      user,
      Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)),
    );
    return user;
  }

  removeUser(key: string): boolean {
    const user = this.user(key);
    return user ? this.users.delete(user.id) : false;
  }

  /** Whether `tenant` (the token URL's segment) names this directory: its id or a verified domain. */
  isTenant(tenant: string): boolean {
    const want = tenant.toLowerCase();
    return want === this.tenantId.toLowerCase() || this.tenantDomains.some((d) => d.toLowerCase() === want);
  }

  /** A new access token for the app, with the roles granted now. */
  issueToken(): { token: string; expiresIn: number } {
    const iat = Math.floor(this.now() / 1000);
    const claims: AppTokenClaims = {
      aud: GRAPH_AUDIENCE,
      iss: `https://sts.windows.net/${this.tenantId}/`,
      iat,
      nbf: iat,
      exp: iat + this.tokenTtlSeconds,
      appid: this.clientId,
      oid: this.clientId,
      sub: this.clientId,
      tid: this.tenantId,
      roles: [...this.roles],
      idtyp: 'app',
      ver: '1.0',
      uti: randomUUID(),
    };
    this.issued.add(claims.uti);
    return { token: signToken(this.key, claims), expiresIn: this.tokenTtlSeconds };
  }

  /** The claims of a token this directory issued and still honours, or why not. */
  verify(token: string): AppTokenClaims | string {
    const claims = readToken(this.key, token);
    if (!claims) return 'IDX14100: JWT is not well formed, or its signature is not valid.';
    if (claims.aud !== GRAPH_AUDIENCE) return 'Access token validation failure. Invalid audience.';
    if (claims.tid !== this.tenantId) return 'Access token validation failure. Invalid tenant.';
    const now = this.now() / 1000;
    if (claims.exp <= now) return 'Lifetime validation failed, the token is expired.';
    if (!this.issued.has(claims.uti)) return 'Access token has been revoked.';
    return claims;
  }

  /** Refuses every token issued so far (the next token request gets a good one). */
  revokeTokens(): void {
    this.issued.clear();
  }
}
