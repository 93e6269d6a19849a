/**
 * Where the bearer token comes from: a static token used as is, or an API key exchanged at
 * `POST /tokens/generate`. Exchanged tokens live an hour upstream; we renew after 45 minutes (as
 * the official SDKs do) and once more whenever a request meets a 401.
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import { redactor } from '../log.ts';
import { UpstreamError } from './errors.ts';
import type { RateGovernor } from './rate.ts';
import { generatedTokenSchema } from './schemas.ts';

export interface TokenProvider {
  /** The token to send now. */
  getToken(): Promise<string>;
  /**
   * Called when `token` met a 401. Returns true when a different token is worth a retry (the
   * provider renewed), false when nothing would change (a static token).
   */
  invalidate(token: string): boolean;
}

export function staticToken(token: string): TokenProvider {
  if (!token) throw new UpstreamError('unauthorized', 'the upstream token is empty');
  return {
    getToken: async () => token,
    invalidate: () => false,
  };
}

export interface ApiKeyExchangeOptions {
  baseUrl: string;
  apiKey: string;
  tenantId?: number;
  fetch?: typeof fetch;
  clock?: Clock;
  /** Reuse a token for this long; default 45 minutes, under the upstream's 1 hour. */
  reuseMs?: number;
  timeoutMs?: number;
  /** The exchange is a request of the organization too: it takes its turn (http.ts RateGovernor). */
  governor?: RateGovernor;
}

/** Exchanges an API key for bearer tokens, caching each and sharing one exchange between concurrent callers. */
export function apiKeyExchange(options: ApiKeyExchangeOptions): TokenProvider {
  if (!options.apiKey) throw new UpstreamError('unauthorized', 'the upstream API key is empty');
  const doFetch = options.fetch ?? fetch;
  const clock = options.clock ?? systemClock;
  const reuseMs = options.reuseMs ?? 45 * 60_000;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/tokens/generate`;
  let current: { token: string; renewAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  const exchange = async (): Promise<string> => {
    await options.governor?.take('basic', {});
    let res: Response;
    try {
      res = await doFetch(url, {
        method: 'POST',
        headers: {
          Authorization: options.apiKey,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: JSON.stringify(options.tenantId === undefined ? {} : { tenant_id: options.tenantId }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      throw new UpstreamError(
        timedOut ? 'timeout' : 'upstream_unavailable',
        `token exchange failed: ${timedOut ? 'timed out' : 'network error'}`,
        { endpoint: 'generateToken', cause: error },
      );
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new UpstreamError('unauthorized', `the upstream refused the API key (HTTP ${res.status})`, {
        endpoint: 'generateToken',
        status: res.status,
      });
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new UpstreamError(
        res.status >= 500 || res.status === 429 ? 'upstream_unavailable' : 'bad_request',
        `token exchange failed with HTTP ${res.status}`,
        { endpoint: 'generateToken', status: res.status },
      );
    }
    const parsed = generatedTokenSchema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) {
      throw new UpstreamError('invalid_response', 'token exchange answered without a token', {
        endpoint: 'generateToken',
      });
    }
    // As secret as the key it came from: never in a log line, an error or an alert.
    redactor.add(parsed.data.token);
    current = { token: parsed.data.token, renewAt: clock.now() + reuseMs };
    return parsed.data.token;
  };

  return {
    async getToken() {
      if (current && clock.now() < current.renewAt) return current.token;
      inflight ??= exchange().finally(() => {
        inflight = undefined;
      });
      return inflight;
    },
    invalidate(token) {
      if (current?.token === token) current = undefined;
      return true;
    },
  };
}
