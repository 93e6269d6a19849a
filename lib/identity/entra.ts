/**
 * Microsoft Entra ID through Microsoft Graph v1.0, with the app's client credentials
 * (lib/entra-token.ts buys and caches the token). A login is looked up as a userPrincipalName
 * first; a mail address that is not a UPN is found through `$filter=mail eq '…'`. The fields that
 * decide a verdict come back only when selected, so every request names them.
 */

import type { HttpPost } from '../deliver/post.ts';
import { entraToken, forgetEntraToken } from '../entra-token.ts';
import {
  errorCode,
  type LookupContext,
  type LookupResult,
  networkText,
  type ProviderClient,
  refusalText,
  retryAfterMs,
} from './client.ts';
import type { EntraConfig } from './schema.ts';
import type { Account } from './verdict.ts';

export const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';
export const USER_SELECT =
  'id,displayName,userPrincipalName,mail,accountEnabled,lastPasswordChangeDateTime,onPremisesSyncEnabled';

interface GraphUser {
  id?: unknown;
  displayName?: unknown;
  accountEnabled?: unknown;
  lastPasswordChangeDateTime?: unknown;
  onPremisesSyncEnabled?: unknown;
}

/** The account a Graph user is; undefined when Graph left out what decides a verdict. */
export function accountOfGraphUser(user: GraphUser): Account | undefined {
  if (typeof user.id !== 'string' || typeof user.accountEnabled !== 'boolean') return undefined;
  const changed = user.lastPasswordChangeDateTime;
  return {
    id: user.id,
    ...(typeof user.displayName === 'string' && user.displayName ? { displayName: user.displayName } : {}),
    enabled: user.accountEnabled,
    passwordChangedAt: typeof changed === 'string' && changed ? changed : null,
    unmanaged: user.onPremisesSyncEnabled === true,
  };
}

/** A value inside an OData string literal: every `'` doubled. */
export const odataString = (value: string) => `'${value.replace(/'/g, "''")}'`;

export function entraClient(name: string, config: EntraConfig, clientSecret: string): ProviderClient {
  const app = {
    loginUrl: config.loginUrl,
    tenantId: config.tenantId,
    clientId: config.clientId,
    clientSecret,
  };
  const label = `Entra ID ${name}`;
  const get = async (
    ctx: LookupContext,
    path: string,
    retried = false,
  ): Promise<{ res: Response; text: string } | LookupResult> => {
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
        : { failed: failure.error };
    }
    const res = await ctx.fetch(`${config.graphUrl}/v1.0/${path}`, {
      headers: { Authorization: `Bearer ${token.token}`, Accept: 'application/json' },
      signal: ctx.signal,
    });
    const text = await res.text();
    if (res.status === 401) {
      // A token Graph no longer takes (revoked, expired early): bought again once.
      forgetEntraToken(app, GRAPH_SCOPE);
      if (!retried) return get(ctx, path, true);
      return { refused: refusalText(label, 401, errorCode(text), 'Graph refuses the app’s token') };
    }
    return { res, text };
  };
  const answerOf = (res: Response, text: string, now: number): LookupResult | undefined => {
    if (res.status === 403)
      return {
        refused: refusalText(
          label,
          403,
          errorCode(text),
          'grant the app the User.Read.All application permission',
        ),
      };
    if (res.status === 429)
      return {
        failed: `${label}: HTTP 429`,
        retryAt: retryAfterMs(res.headers.get('retry-after'), now) ?? now + 1_000,
      };
    if (res.status < 200 || res.status >= 300)
      return { failed: `${label}: HTTP ${res.status}${errorCode(text) ? ` ${errorCode(text)}` : ''}` };
    return undefined;
  };
  return {
    type: 'entra',
    name,
    domains: config.domains,
    async lookup(login, ctx) {
      try {
        const byUpn = await get(ctx, `users/${encodeURIComponent(login)}?$select=${USER_SELECT}`);
        if (!('res' in byUpn)) return byUpn;
        if (byUpn.res.status !== 404) {
          const bad = answerOf(byUpn.res, byUpn.text, ctx.now());
          if (bad) return bad;
          const account = accountOfGraphUser(JSON.parse(byUpn.text) as GraphUser);
          return account
            ? { answer: { found: true, account } }
            : { failed: `${label}: the user came back without accountEnabled` };
        }
        // Not a UPN: perhaps a mail address of someone whose UPN differs.
        const filter = encodeURIComponent(`mail eq ${odataString(login)}`);
        const byMail = await get(ctx, `users?$filter=${filter}&$select=${USER_SELECT}`);
        if (!('res' in byMail)) return byMail;
        const bad = answerOf(byMail.res, byMail.text, ctx.now());
        if (bad) return bad;
        const users = (JSON.parse(byMail.text) as { value?: GraphUser[] }).value ?? [];
        if (!users.length) return { answer: { found: false } };
        const account = accountOfGraphUser(users[0] as GraphUser);
        return account
          ? { answer: { found: true, account } }
          : { failed: `${label}: the user came back without accountEnabled` };
      } catch (error) {
        return {
          failed:
            error instanceof SyntaxError
              ? `${label}: an answer that is not JSON`
              : networkText(label, error, ctx.signal),
        };
      }
    },
  };
}
