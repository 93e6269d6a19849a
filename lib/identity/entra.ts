/**
 * Microsoft Entra ID through Microsoft Graph v1.0, with the app's client credentials
 * (lib/entra-token.ts buys and caches the token). A login is looked up as a userPrincipalName
 * first; a mail address that is not a UPN is found through `$filter=mail eq '…'`. The fields that
 * decide a verdict come back only when selected, so every request names them.
 */

import type { HttpPost } from '../deliver/post.ts';
import { entraToken, forgetEntraToken } from '../entra-token.ts';
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
  RATE_PAUSE_MS,
  refusalText,
  retryAfterMs,
  type Sent,
  sameLogin,
  send,
  unreadable,
} from './client.ts';
import type { EntraConfig } from './schema.ts';
import type { Account } from './verdict.ts';
import type { AccountAction } from './words.ts';

export const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
export const USER_SELECT =
  'id,displayName,userPrincipalName,mail,accountEnabled,lastPasswordChangeDateTime,onPremisesSyncEnabled';

/**
 * The account a Graph user is, read as Graph documents it (user.md); undefined when it cannot be
 * read so: not an object, no `id` or `accountEnabled`, or a field of the wrong type. The caller
 * makes that a failed lookup (`unreadable`), never "no account".
 */
export function accountOfGraphUser(value: unknown): Account | undefined {
  const user = objectOf(value);
  if (!user || !idField(user.id) || typeof user.accountEnabled !== 'boolean') return undefined;
  const changed = dateField(user.lastPasswordChangeDateTime);
  const synced = user.onPremisesSyncEnabled ?? null;
  const name = user.displayName ?? null;
  if (changed === undefined || (synced !== null && typeof synced !== 'boolean')) return undefined;
  if (name !== null && typeof name !== 'string') return undefined;
  return {
    id: user.id,
    ...(name ? { displayName: nameField(name) } : {}),
    enabled: user.accountEnabled,
    passwordChangedAt: changed,
    unmanaged: synced === true,
  };
}

/** Each action as a Graph request on the user `id`. */
const ENTRA_REQUESTS: Record<
  AccountAction,
  (id: string) => { method: string; path: string; body?: unknown }
> = {
  revokeSessions: (id) => ({ method: 'POST', path: `users/${encodeURIComponent(id)}/revokeSignInSessions` }),
  requirePasswordChange: (id) => ({
    method: 'PATCH',
    path: `users/${encodeURIComponent(id)}`,
    body: { passwordProfile: { forceChangePasswordNextSignIn: true } },
  }),
  confirmCompromised: (id) => ({
    method: 'POST',
    path: 'identityProtection/riskyUsers/confirmCompromised',
    body: { userIds: [id] },
  }),
  disable: (id) => ({
    method: 'PATCH',
    path: `users/${encodeURIComponent(id)}`,
    body: { accountEnabled: false },
  }),
  enable: (id) => ({
    method: 'PATCH',
    path: `users/${encodeURIComponent(id)}`,
    body: { accountEnabled: true },
  }),
};

/** What a 403 to each action means the app lacks (docs/identity.md lists the same). */
export const ENTRA_NEEDS: Record<AccountAction, string> = {
  revokeSessions:
    'grant the app User.RevokeSessions.All (and, for an administrator, the Privileged Authentication Administrator role)',
  requirePasswordChange:
    'grant the app User.ReadWrite.All and the User Administrator directory role (Privileged Authentication Administrator for an administrator)',
  confirmCompromised: 'grant the app IdentityRiskyUser.ReadWrite.All; it needs Microsoft Entra ID P2',
  disable:
    'grant the app User.EnableDisableAccount.All (and, for an administrator, the Privileged Authentication Administrator role)',
  enable:
    'grant the app User.EnableDisableAccount.All (and, for an administrator, the Privileged Authentication Administrator role)',
};

/** A value inside an OData string literal: every `'` doubled. */
export const odataString = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** `lanes`: the provider's share of the deployment's rate (lanes.ts); none sends at once (`identity test`). */
export function entraClient(
  name: string,
  config: EntraConfig,
  clientSecret: string,
  lanes?: ProviderLanes,
): ProviderClient {
  const app = {
    loginUrl: config.loginUrl,
    tenantId: config.tenantId,
    clientId: config.clientId,
    clientSecret,
  };
  const label = `Entra ID ${name}`;
  const retryAfter = (headers: Headers, now: number) => retryAfterMs(headers.get('retry-after'), now);
  /** One Graph request in its turn of `lane`; `spent` is the lookup's answer time used so far. */
  const call = async (
    ctx: LookupContext,
    path: string,
    init: { method?: string; body?: unknown } = {},
    lane = lanes?.directory,
    spent = { ms: 0 },
    retried = false,
  ): Promise<Sent | LookupResult> => {
    const post: HttpPost = (url, init) => ctx.fetch(url, init);
    const token = await entraToken(app, GRAPH_SCOPE, {
      post,
      now: ctx.now,
      timeoutMs: 3_000,
      signal: ctx.signal,
    });
    if ('failure' in token) {
      const { failure } = token;
      return failure.permanent
        ? {
            refused: refusalText(
              `${label} token`,
              failure.status ?? 0,
              failure.code,
              'check tenantId, clientId and the client secret',
            ),
          }
        : // Refused for rate by the sign-in service: nothing was asked of Graph yet.
          {
            failed: failure.error,
            ...(failure.status === 429 ? { retryAt: ctx.now() + RATE_PAUSE_MS } : {}),
          };
    }
    const sent = await send(
      ctx,
      lane,
      `${config.graphUrl}/v1.0/${path}`,
      {
        method: init.method ?? 'GET',
        headers: {
          Authorization: `Bearer ${token.token}`,
          Accept: 'application/json',
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      },
      retryAfter,
      spent,
    );
    if ('res' in sent && sent.res.status === 401) {
      // A token Graph no longer takes (revoked, expired early): bought again once.
      forgetEntraToken(app, GRAPH_SCOPE);
      if (!retried) return call(ctx, path, init, lane, spent, true);
      return { refused: refusalText(label, 401, errorCode(sent.text), 'Graph refuses the app’s token') };
    }
    return sent;
  };
  const answerOf = (res: Response, text: string, now: number): LookupResult | undefined =>
    notDone(
      label,
      res,
      text,
      { 403: 'grant the app the User.Read.All application permission' },
      retryAfterMs(res.headers.get('retry-after'), now),
      now,
    );
  return {
    type: 'entra',
    name,
    domains: config.domains,
    cannot: () => undefined,
    async act(action, account, ctx) {
      const request = ENTRA_REQUESTS[action](account.id);
      // Identity Protection has a lane of its own: 1 request a second per directory.
      const lane = action === 'confirmCompromised' ? lanes?.protection : lanes?.directory;
      let got: Sent | LookupResult;
      try {
        got = await call(ctx, request.path, request, lane);
      } catch (error) {
        return { noAnswer: networkText(label, error, ctx.signal) };
      }
      if ('noTurn' in got) return { rateLimited: noTurnText(label), retryAt: got.noTurn };
      if (!('res' in got)) {
        if ('refused' in got) return got;
        if (!('failed' in got)) return { failed: `${label}: no token` };
        // A token refused for rate: the action was not asked for, so it is asked again later.
        return got.retryAt === undefined
          ? { failed: got.failed }
          : { rateLimited: got.failed, retryAt: got.retryAt };
      }
      const { res, text } = got;
      const now = ctx.now();
      return (
        actNotDone(label, res, text, { 403: ENTRA_NEEDS[action] }, retryAfter(res.headers, now), now) ?? {
          ok: true,
        }
      );
    },
    async lookup(login, ctx) {
      const spent = { ms: 0 };
      const read = async (path: string): Promise<{ res: Response; text: string } | LookupResult> => {
        const got = await call(ctx, path, {}, lanes?.directory, spent);
        return 'noTurn' in got ? { failed: noTurnText(label), retryAt: got.noTurn } : got;
      };
      try {
        const byUpn = await read(`users/${encodeURIComponent(login)}?$select=${USER_SELECT}`);
        if (!('res' in byUpn)) return byUpn;
        // Only Graph's own "not found" sends the login on to the mail search: another 404 (a
        // proxy's page, a wrong graphUrl) says nothing of the UPN, and the search's "none" would
        // then be no_account for an account that exists.
        if (byUpn.res.status !== 404 || errorCode(byUpn.text) !== 'Request_ResourceNotFound') {
          const bad = answerOf(byUpn.res, byUpn.text, ctx.now());
          if (bad) return bad;
          const user: unknown = JSON.parse(byUpn.text);
          if (!sameLogin(objectOf(user)?.userPrincipalName, login))
            return unreadable(label, 'a user of another UPN');
          const account = accountOfGraphUser(user);
          return account ? { answer: { found: true, account } } : unreadable(label, 'the user');
        }
        // Not a UPN: perhaps a mail address of someone whose UPN differs.
        const filter = encodeURIComponent(`mail eq ${odataString(login)}`);
        const byMail = await read(`users?$filter=${filter}&$select=${USER_SELECT}`);
        if (!('res' in byMail)) return byMail;
        const bad = answerOf(byMail.res, byMail.text, ctx.now());
        if (bad) return bad;
        // Only `{"value": []}` says there is no one; a body without its list says nothing.
        const users = objectOf(JSON.parse(byMail.text))?.value;
        if (!Array.isArray(users)) return unreadable(label, 'the search without its value list');
        if (!users.length) return { answer: { found: false } };
        if (!sameLogin(objectOf(users[0])?.mail, login)) return unreadable(label, 'a user of another mail');
        const account = accountOfGraphUser(users[0]);
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
