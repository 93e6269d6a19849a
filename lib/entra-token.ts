/**
 * Microsoft Entra ID tokens bought with an app's client credentials (the OAuth 2.0 client
 * credentials grant), one module for everything that calls Microsoft: the Sentinel destination
 * (scope `https://monitor.azure.com//.default`) and the identity provider (Microsoft Graph).
 * A token is cached per app, secret and scope until a minute before it expires, so a pass asks for
 * it once, not once a request. The client secret and the token are secrets: neither is ever put in
 * an error, a record or a log line, and Entra's error description (which may quote what was sent)
 * is never repeated: only its error code.
 */
import { createHash } from 'node:crypto';
import type { HttpPost } from './deliver/post.ts';
import { originOf, waitingFor } from './waits.ts';

export interface EntraApp {
  loginUrl: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

export interface TokenContext {
  post: HttpPost;
  now: () => number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface TokenFailure {
  /** The token endpoint's status; none for a network error. */
  status?: number;
  /** Entra's error code (`invalid_client`...), never its description. */
  code?: string;
  /** Says what failed, without secrets: `Entra token: HTTP 401 invalid_client`. */
  error: string;
  /** A 4xx other than 408 and 429: asking again will not help until the config changes. */
  permanent: boolean;
}

/** A token is given up this long before it expires (a request in flight must not carry a dead one). */
export const TOKEN_MARGIN_MS = 60_000;

const tokens = new Map<string, { token: string; until: number }>();
/** Token requests in flight: callers at the same moment share one (8 lookups at a cold start buy 1). */
const buying = new Map<string, Promise<{ token: string } | { failure: TokenFailure }>>();

/** Per app, secret and scope: a rotated secret buys its own token (only a digest of it is held). */
function cacheKey(app: EntraApp, scope: string): string {
  const secret = createHash('sha256').update(app.clientSecret).digest('hex').slice(0, 16);
  return `${app.loginUrl} ${app.tenantId} ${app.clientId} ${secret} ${scope}`;
}

/** The bearer token for `app` and `scope`, from the cache or Entra; a failure says why, without secrets. */
export async function entraToken(
  app: EntraApp,
  scope: string,
  ctx: TokenContext,
): Promise<{ token: string } | { failure: TokenFailure }> {
  const key = cacheKey(app, scope);
  const cached = tokens.get(key);
  if (cached && cached.until > ctx.now()) return { token: cached.token };
  let shared = buying.get(key);
  if (!shared) {
    // Its own timeout, not the caller's signal: one caller giving up must not fail the others.
    shared = buy(app, scope, key, { ...ctx, signal: undefined }).finally(() => buying.delete(key));
    buying.set(key, shared);
  }
  const { signal } = ctx;
  if (!signal) return shared;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

async function buy(
  app: EntraApp,
  scope: string,
  key: string,
  ctx: TokenContext,
): Promise<{ token: string } | { failure: TokenFailure }> {
  const now = ctx.now();
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  try {
    const answer = async () => {
      const res = await ctx.post(`${app.loginUrl}/${encodeURIComponent(app.tenantId)}/oauth2/v2.0/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: app.clientId,
          client_secret: app.clientSecret,
          scope,
          grant_type: 'client_credentials',
        }).toString(),
        signal: ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout,
      });
      return { res, text: await res.text() };
    };
    const { res, text } = await waitingFor(`Entra ID's sign-in at ${originOf(app.loginUrl)}`, answer());
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not JSON: the status says it.
    }
    if (res.status < 200 || res.status >= 300 || typeof body.access_token !== 'string') {
      const code = typeof body.error === 'string' ? body.error.slice(0, 60) : undefined;
      return {
        failure: {
          status: res.status,
          ...(code ? { code } : {}),
          error: `Entra token: HTTP ${res.status}${code ? ` ${code}` : ''}`,
          permanent: res.status >= 400 && res.status < 500 && res.status !== 429 && res.status !== 408,
        },
      };
    }
    const seconds = Number(body.expires_in);
    const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 3_600_000;
    tokens.set(key, { token: body.access_token, until: now + lifetime - TOKEN_MARGIN_MS });
    return { token: body.access_token };
  } catch (error) {
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    const why = timeout.aborted
      ? `no answer within ${ctx.timeoutMs} ms`
      : ((error as Error)?.message ?? 'unknown');
    return { failure: { error: `Entra token: network error: ${why}`, permanent: false } };
  }
}

/** Forgets the cached token (a service refused it): the next call buys another. */
export function forgetEntraToken(app: EntraApp, scope: string): void {
  tokens.delete(cacheKey(app, scope));
}
