/**
 * Longer than 300 lines on purpose: every Graph route is written inline on the app, as the
 * upstream emulator's are, so the service reads in one place.
 *
 * Microsoft Graph's user routes over one EntraStandIn, answering as docs/identity.md says the real
 * ones do: a token the directory issued and still honours, holding the permission the request
 * needs; the user read with `$select` kept exactly (a property comes back only when selected, or
 * when in the default set); the `mail eq '…'` search; the account actions. Mounted at `/entra`: a
 * config's `graphUrl` is `<origin>/entra/graph` (the token endpoint is login.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { type IdentityControl, ProviderError, type ProviderFace } from './control.ts';
import { type EntraStandIn, type EntraUser, GRAPH_PERMISSIONS } from './entra.ts';
import type { AppTokenClaims } from './token.ts';

/** What Graph returns for a user when `$select` is not given (v1.0). */
const DEFAULT_SELECT = [
  'businessPhones',
  'displayName',
  'givenName',
  'jobTitle',
  'mail',
  'mobilePhone',
  'officeLocation',
  'preferredLanguage',
  'surname',
  'userPrincipalName',
  'id',
];

/** The user properties the stand-in knows; any other in `$select` is a 400, as Graph's is. */
const SELECTABLE = [
  ...DEFAULT_SELECT,
  'accountEnabled',
  'lastPasswordChangeDateTime',
  'onPremisesSyncEnabled',
  'createdDateTime',
  'proxyAddresses',
  'userType',
  'passwordProfile',
  'signInSessionsValidFromDateTime',
] as const;

const CANONICAL = new Map(SELECTABLE.map((name) => [name.toLowerCase(), name]));

/** Graph's usual code for a status, for an injected fault. */
const GRAPH_CODES: Record<number, string> = {
  400: 'BadRequest',
  401: 'InvalidAuthenticationToken',
  403: 'Authorization_RequestDenied',
  404: 'Request_ResourceNotFound',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

const graphFace: ProviderFace = {
  provider: 'entra',
  errorAnswer(c, error) {
    const headers: Record<string, string> = { ...error.headers };
    if (error.status === 401)
      headers['WWW-Authenticate'] =
        'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"';
    const body = {
      error: {
        code: error.code ?? GRAPH_CODES[error.status] ?? 'generalException',
        message: error.message,
        innerError: { date: new Date().toISOString().slice(0, 19), 'request-id': randomUUID() },
      },
    };
    return c.json(body, error.status as 400, headers);
  },
};

const denied = () =>
  new ProviderError(403, 'Authorization_RequestDenied', 'Insufficient privileges to complete the operation.');

/** The token's claims when it is a good one of this directory holding one of `anyOf` (any, when empty). */
function authorize(c: Context, entra: EntraStandIn, anyOf: readonly string[]): AppTokenClaims {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '');
  if (!match) throw new ProviderError(401, undefined, 'Access token is empty.');
  const claims = entra.verify(match[1] as string);
  if (typeof claims === 'string') throw new ProviderError(401, undefined, claims);
  if (anyOf.length && !anyOf.some((role) => claims.roles.includes(role))) throw denied();
  return claims;
}

/** `$select`'s properties, in Graph's spelling; the default set when absent. */
function selected(c: Context): string[] {
  const query = new URL(c.req.url).searchParams;
  for (const key of query.keys()) {
    if (key.startsWith('$') && !['$select', '$filter', '$top'].includes(key))
      throw new ProviderError(400, 'BadRequest', `Query option '${key}' is not allowed.`);
  }
  const raw = query.get('$select');
  if (raw === null) return DEFAULT_SELECT;
  return raw.split(',').map((name) => {
    const known = CANONICAL.get(name.trim().toLowerCase());
    if (!known)
      throw new ProviderError(
        400,
        'BadRequest',
        `Parsing OData Select and Expand failed: Could not find a property named '${name.trim()}' on type 'microsoft.graph.user'.`,
      );
    return known;
  });
}

function view(user: EntraUser, select: string[]): Record<string, unknown> {
  const record = user as unknown as Record<string, unknown>;
  return Object.fromEntries(select.map((name) => [name, record[name] ?? null]));
}

/**
 * The search `$filter` takes: `mail eq '…'`, `userPrincipalName eq '…'` or
 * `proxyAddresses/any(x:x eq 'smtp:…')`, a quote in the value doubled. Anything else is a 400.
 */
function filterOf(filter: string): (user: EntraUser) => boolean {
  const quoted = "'((?:[^']|'')*)'";
  const eq = new RegExp(`^\\s*(mail|userPrincipalName|id)\\s+eq\\s+${quoted}\\s*$`, 'i').exec(filter);
  if (eq) {
    const field = (eq[1] as string).toLowerCase();
    const value = (eq[2] as string).replaceAll("''", "'").toLowerCase();
    return (user) =>
      (field === 'mail' ? user.mail : field === 'id' ? user.id : user.userPrincipalName)?.toLowerCase() ===
      value;
  }
  const any = new RegExp(`^\\s*proxyAddresses/any\\((\\w+):\\1\\s+eq\\s+${quoted}\\)\\s*$`, 'i').exec(filter);
  if (any) {
    const value = (any[2] as string).replaceAll("''", "'").toLowerCase();
    return (user) => user.proxyAddresses.some((address) => address.toLowerCase() === value);
  }
  throw new ProviderError(400, 'BadRequest', `Invalid filter clause: the stand-in cannot read ${filter}`);
}

function found(entra: EntraStandIn, key: string): EntraUser {
  const user = entra.user(key);
  if (!user)
    throw new ProviderError(
      404,
      'Request_ResourceNotFound',
      `Resource '${key}' does not exist or one of its queried reference-property objects are not present.`,
    );
  return user;
}

function jsonBody(body: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new ProviderError(400, 'BadRequest', 'Unable to read JSON request payload.');
}

export function graphRoutes(entra: EntraStandIn, control: IdentityControl): Hono {
  const app = new Hono();
  const now = () => control.now();

  /** Graph's base as the client called it (`<origin>/entra/graph`), for `@odata.context`. */
  const graphBase = (c: Context) =>
    new URL(c.req.url).origin + c.req.path.slice(0, c.req.path.indexOf('/v1.0/'));
  const context = (c: Context, select: string[], entity: boolean) =>
    `${graphBase(c)}/v1.0/$metadata#users(${select.join(',')})${entity ? '/$entity' : ''}`;

  app.get(
    '/graph/v1.0/users/:key',
    control.endpoint(graphFace, 'graphUser', (c) => {
      authorize(c, entra, GRAPH_PERMISSIONS.read);
      const select = selected(c);
      const user = found(entra, c.req.param('key') ?? '');
      return c.json({ '@odata.context': context(c, select, true), ...view(user, select) });
    }),
  );

  app.get(
    '/graph/v1.0/users',
    control.endpoint(graphFace, 'graphUsers', (c) => {
      authorize(c, entra, GRAPH_PERMISSIONS.read);
      const select = selected(c);
      const filter = c.req.query('$filter');
      const top = Number(c.req.query('$top') ?? 100);
      if (!Number.isInteger(top) || top < 1 || top > 999)
        throw new ProviderError(
          400,
          'BadRequest',
          'Invalid page size specified: the $top value must be from 1 to 999.',
        );
      const match = filter === undefined ? () => true : filterOf(filter);
      const users = [...entra.users.values()].filter(match).slice(0, top);
      return c.json({
        '@odata.context': context(c, select, false),
        value: users.map((u) => view(u, select)),
      });
    }),
  );

  app.post(
    '/graph/v1.0/users/:key/revokeSignInSessions',
    control.endpoint(graphFace, 'graphRevokeSessions', (c) => {
      authorize(c, entra, GRAPH_PERMISSIONS.revokeSessions);
      const user = found(entra, c.req.param('key') ?? '');
      user.signInSessionsValidFromDateTime = new Date(now()).toISOString();
      control.recordAction({
        provider: 'entra',
        action: 'revokeSessions',
        userId: user.id,
        login: user.userPrincipalName,
      });
      return c.json({
        '@odata.context': `${graphBase(c)}/v1.0/$metadata#Edm.Boolean`,
        value: true,
      });
    }),
  );

  app.patch(
    '/graph/v1.0/users/:key',
    control.endpoint(graphFace, 'graphUpdateUser', (c, body) => {
      // Which permission a PATCH needs depends on what it changes: checked below, per property.
      const claims = authorize(c, entra, []);
      const change = jsonBody(body);
      for (const key of Object.keys(change)) {
        if (key !== 'accountEnabled' && key !== 'passwordProfile')
          throw new ProviderError(
            400,
            'Request_BadRequest',
            `The stand-in does not update property '${key}'.`,
          );
      }
      const needs = (roles: readonly string[]) => {
        if (!roles.some((role) => claims.roles.includes(role))) throw denied();
      };
      if ('accountEnabled' in change) {
        if (typeof change.accountEnabled !== 'boolean')
          throw new ProviderError(
            400,
            'Request_BadRequest',
            "Invalid value specified for property 'accountEnabled' of resource 'User'.",
          );
        needs(GRAPH_PERMISSIONS.accountEnabled);
      }
      const profile = change.passwordProfile as Record<string, unknown> | undefined;
      if ('passwordProfile' in change) {
        if (
          !profile ||
          typeof profile !== 'object' ||
          typeof profile.forceChangePasswordNextSignIn !== 'boolean'
        )
          throw new ProviderError(
            400,
            'Request_BadRequest',
            "Invalid value specified for property 'passwordProfile' of resource 'User'.",
          );
        needs(GRAPH_PERMISSIONS.passwordProfile);
      }
      const user = found(entra, c.req.param('key') ?? '');
      if (typeof change.accountEnabled === 'boolean') {
        user.accountEnabled = change.accountEnabled;
        control.recordAction({
          provider: 'entra',
          action: change.accountEnabled ? 'enable' : 'disable',
          userId: user.id,
          login: user.userPrincipalName,
        });
      }
      if (profile) {
        user.passwordProfile.forceChangePasswordNextSignIn = profile.forceChangePasswordNextSignIn as boolean;
        control.recordAction({
          provider: 'entra',
          action: 'requirePasswordChange',
          userId: user.id,
          login: user.userPrincipalName,
        });
      }
      return c.body(null, 204);
    }),
  );

  app.post(
    '/graph/v1.0/identityProtection/riskyUsers/confirmCompromised',
    control.endpoint(graphFace, 'graphConfirmCompromised', (c, body) => {
      authorize(c, entra, GRAPH_PERMISSIONS.confirmCompromised);
      if (!entra.identityProtection)
        throw new ProviderError(
          403,
          'Forbidden',
          'Your tenant is not licensed for this feature (Microsoft Entra ID P2).',
        );
      // 1 request a second per tenant, and its 429 carries no Retry-After (docs/identity.md).
      if (now() - entra.lastRiskyUsersCall < 1_000)
        throw new ProviderError(
          429,
          'TooManyRequests',
          'Too many requests: Identity Protection takes 1 request a second per tenant.',
        );
      entra.lastRiskyUsersCall = now();
      const ids = jsonBody(body).userIds;
      if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string'))
        throw new ProviderError(400, 'BadRequest', 'userIds must be a non-empty array of user ids.');
      const users = (ids as string[]).map((id) => found(entra, id));
      for (const user of users) {
        user.risk = { riskLevel: 'high', riskState: 'confirmedCompromised' };
        control.recordAction({
          provider: 'entra',
          action: 'confirmCompromised',
          userId: user.id,
          login: user.userPrincipalName,
        });
      }
      return c.body(null, 204);
    }),
  );

  app.all(
    '/graph/*',
    control.endpoint(graphFace, 'unknown', (c) => {
      throw new ProviderError(
        400,
        'BadRequest',
        `Resource not found for the segment in ${c.req.method} ${c.req.path}.`,
      );
    }),
  );
  return app;
}
