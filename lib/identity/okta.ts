/**
 * Okta's Management API with an API token (`Authorization: SSWS …`); an OAuth service app is a
 * later addition (the docs say so). A login is looked up by itself (`/api/v1/users/<login>`); one
 * with a `/` cannot be a path segment there, so it is searched by `profile.login`. Okta says how
 * much of its rate is left on every answer: at 0 (or a 429) the org's lane pauses until its reset,
 * for every run (client.ts `send`).
 */
import {
  actNotDone,
  dateField,
  errorCode,
  idField,
  type LookupContext,
  type LookupResult,
  nameField,
  networkText,
  noTurnText,
  notDone,
  objectOf,
  type ProviderClient,
  type ProviderLanes,
  refusalText,
  type Sent,
  sameLogin,
  send,
  unreadable,
} from './client.ts';
import type { OktaConfig } from './schema.ts';
import type { Account } from './verdict.ts';
import type { AccountAction } from './words.ts';

/** Statuses in which an account cannot sign in; every other one can, with its password. */
const CANNOT_SIGN_IN = new Set(['STAGED', 'PROVISIONED', 'SUSPENDED', 'DEPROVISIONED']);

/** Okta's user statuses (its spec's enum): a status outside them is an answer the product cannot read. */
const STATUSES = new Set([
  'ACTIVE',
  'PASSWORD_EXPIRED',
  'LOCKED_OUT',
  'RECOVERY',
  'STAGED',
  'PROVISIONED',
  'SUSPENDED',
  'DEPROVISIONED',
]);

/**
 * The account an Okta user is, read as Okta documents it; undefined when it cannot be read so (not
 * an object, no `id`, a status Okta does not have, a `passwordChanged` that is not a date). The
 * caller makes that a failed lookup (`unreadable`), never "no account".
 */
export function accountOfOktaUser(value: unknown): Account | undefined {
  const user = objectOf(value);
  if (!user || !idField(user.id)) return undefined;
  if (typeof user.status !== 'string' || !STATUSES.has(user.status)) return undefined;
  const changed = dateField(user.passwordChanged);
  if (changed === undefined) return undefined;
  const p = objectOf(user.profile) ?? {};
  const named =
    typeof p.displayName === 'string' && p.displayName
      ? p.displayName
      : [p.firstName, p.lastName].filter((s): s is string => typeof s === 'string' && s !== '').join(' ');
  return {
    id: user.id as string,
    ...(named ? { displayName: nameField(named) } : {}),
    enabled: !CANNOT_SIGN_IN.has(user.status),
    passwordChangedAt: changed,
    // Okta vouches for the password only when it holds it; no provider named is no vouching.
    unmanaged: objectOf(objectOf(user.credentials)?.provider)?.type !== 'OKTA',
  };
}

/** What a 403 E0000006 to each action means the API token's owner lacks (docs/identity.md). */
export const OKTA_NEEDS: Record<AccountAction, string> = {
  revokeSessions:
    "the API token's owner needs an admin role that may manage users' sessions (Help Desk Administrator or above)",
  requirePasswordChange:
    "the API token's owner needs an admin role that may reset passwords (Help Desk Administrator or above)",
  confirmCompromised: "the API token's owner needs a role with okta.userRisk.manage",
  disable: "the API token's owner needs an admin role that may suspend users (Group Administrator or above)",
  enable: "the API token's owner needs an admin role that may unsuspend users (Group Administrator or above)",
};

const TOKEN_REFUSED = 'the API token is invalid, expired or revoked';

/** When Okta's rate resets (`X-Rate-Limit-Reset`, epoch seconds), capped at 10 minutes ahead. */
function resetAt(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-rate-limit-reset'));
  return Number.isFinite(reset) && reset > 0
    ? Math.min(Math.max(reset * 1000, now), now + 600_000)
    : undefined;
}

/** `lanes`: the provider's share of the deployment's rate (lanes.ts); none sends at once (`identity test`). */
export function oktaClient(
  name: string,
  config: OktaConfig,
  token: string,
  lanes?: ProviderLanes,
): ProviderClient {
  const label = `Okta ${name}`;
  /** One request in its turn of the org's lane; Okta's reset says when a spent rate comes back. */
  const call = (ctx: LookupContext, method: string, path: string, body?: unknown): Promise<Sent> =>
    send(
      ctx,
      lanes?.directory,
      `${config.orgUrl}/api/v1/${path}`,
      {
        method,
        headers: {
          Authorization: `SSWS ${token}`,
          Accept: 'application/json',
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      resetAt,
    );
  return {
    type: 'okta',
    name,
    domains: config.domains,
    cannot: (action) =>
      action === 'confirmCompromised' && !config.userRisk
        ? `Okta ${name} has no userRisk: confirmCompromised needs Okta's user-risk API (set "userRisk": true once the org has it)`
        : undefined,
    async act(action, account, ctx) {
      const user = `users/${encodeURIComponent(account.id)}`;
      const request: [string, string, unknown?] =
        action === 'revokeSessions'
          ? ['DELETE', `${user}/sessions?oauthTokens=true`]
          : action === 'requirePasswordChange'
            ? ['POST', `${user}/lifecycle/expire_password`]
            : action === 'disable'
              ? ['POST', `${user}/lifecycle/suspend`]
              : action === 'enable'
                ? ['POST', `${user}/lifecycle/unsuspend`]
                : [
                    'PUT',
                    `${user}/risk`,
                    { riskLevel: 'HIGH', riskReason: (ctx.reason ?? 'leaked credential').slice(0, 200) },
                  ];
      let got: Sent;
      try {
        got = await call(ctx, ...request);
      } catch (error) {
        return { noAnswer: networkText(label, error, ctx.signal) };
      }
      if ('noTurn' in got) return { rateLimited: noTurnText(label), retryAt: got.noTurn };
      const { res, text } = got;
      const now = ctx.now();
      const code = errorCode(text);
      if (action === 'confirmCompromised' && (res.status === 403 || res.status === 404))
        return {
          refused: refusalText(label, res.status, code, "the org does not have Okta's user-risk API"),
        };
      // A 403 other than E0000006 (E0000038: the user's status does not allow it) is no refusal.
      const hints = { 401: TOKEN_REFUSED, 403: code === 'E0000006' ? OKTA_NEEDS[action] : undefined };
      return actNotDone(label, res, text, hints, resetAt(res.headers, now), now) ?? { ok: true };
    },
    async lookup(login, ctx): Promise<LookupResult> {
      const searched = login.includes('/');
      const path = searched
        ? `users?filter=${encodeURIComponent(`profile.login eq "${login.replace(/["\\]/g, '\\$&')}"`)}&limit=1`
        : `users/${encodeURIComponent(login)}`;
      try {
        const got = await call(ctx, 'GET', path);
        if ('noTurn' in got) return { failed: noTurnText(label), retryAt: got.noTurn };
        const { res, text } = got;
        // Only Okta's own "not found" says there is no such login; another 404 (a wrong orgUrl, a
        // proxy's page) says nothing of it.
        if (res.status === 404 && !searched && errorCode(text) === 'E0000007')
          return { answer: { found: false } };
        const now = ctx.now();
        const hints = { 401: TOKEN_REFUSED, 403: "the API token's owner needs a role that may read users" };
        const bad = notDone(label, res, text, hints, resetAt(res.headers, now), now);
        if (bad) return bad;
        // The read answers the user; the search a list of them, `[]` when there is none.
        const body: unknown = JSON.parse(text);
        if (searched ? !Array.isArray(body) : !objectOf(body))
          return unreadable(label, searched ? 'the search without its list' : 'the user');
        const user: unknown = Array.isArray(body) ? body[0] : body;
        if (user === undefined) return { answer: { found: false } };
        // Another login's user (a proxy's or a cache's mix-up) says nothing of this one.
        if (!sameLogin(objectOf(objectOf(user)?.profile)?.login, login))
          return unreadable(label, 'a user of another login');
        const account = accountOfOktaUser(user);
        return account ? { answer: { found: true, account } } : unreadable(label, 'the user');
      } catch (error) {
        return {
          failed:
            error instanceof SyntaxError
              ? unreadable(label, 'not JSON').failed
              : networkText(label, error, ctx.signal),
        };
      }
    },
  };
}
