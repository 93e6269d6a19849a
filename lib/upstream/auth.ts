/**
 * Where the bearer token comes from: a static token used as is, or an API key exchanged at
 * `POST /tokens/generate`. Exchanged tokens live an hour upstream; we renew after 45 minutes (as
 * the official SDKs do) and once more whenever a request meets a 401.
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import { redactor } from '../log.ts';
import { originOf, waitingFor } from '../waits.ts';
import { UpstreamError } from './errors.ts';
import type { RateGovernor } from './rate.ts';
import { generatedTokenSchema } from './schemas-polled.ts';
import { parseRetryAfter } from './wire.ts';

/** A caller's time: the exchange's turn and request end by its deadline (on the provider's clock). */
export interface TokenOptions {
  deadline?: number;
  signal?: AbortSignal;
}

export interface TokenProvider {
  /** The token to send now. */
  getToken(options?: TokenOptions): Promise<string>;
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
  const spent = () =>
    new UpstreamError('timeout', 'generateToken: the time budget ran out before the token exchange', {
      endpoint: 'generateToken',
      budgetSpent: true,
    });

  const exchange = async (deadline: number, signal?: AbortSignal): Promise<string> => {
    // A turn like every request, by the caller's deadline (the governor counts in real time).
    await options.governor?.take('basic', {
      deadline: Number.isFinite(deadline) ? Date.now() + (deadline - clock.now()) : undefined,
      signal,
    });
    const left = deadline - clock.now();
    if (left <= 0) throw spent();
    const limit = options.timeoutMs ?? 15_000;
    let res: Response;
    try {
      res = await waitingFor(
        `the upstream's token exchange at ${originOf(url)}`,
        doFetch(url, {
          method: 'POST',
          headers: {
            Authorization: options.apiKey,
            'Content-Type': 'application/json',
            Accept: 'application/json',
          },
          body: JSON.stringify(options.tenantId === undefined ? {} : { tenant_id: options.tenantId }),
          signal: AbortSignal.timeout(Math.max(1, Math.floor(Math.min(limit, left)))),
        }),
      );
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      throw new UpstreamError(
        timedOut ? 'timeout' : 'upstream_unavailable',
        `token exchange failed: ${timedOut ? 'timed out' : 'network error'}`,
        // Cut short by the budget rather than given up on: nothing failed, the budget is spent.
        { endpoint: 'generateToken', cause: error, budgetSpent: timedOut && left < limit },
      );
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new UpstreamError('unauthorized', `the upstream refused the API key (HTTP ${res.status})`, {
        endpoint: 'generateToken',
        status: res.status,
      });
    }
    if (res.status === 429) {
      await res.body?.cancel();
      // A rate limit like any other: its Retry-After (else the usual wait) and the shared slowdown.
      throw new UpstreamError('rate_limited', 'generateToken: rate limited by the upstream', {
        endpoint: 'generateToken',
        status: 429,
        retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), clock.now()),
      });
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new UpstreamError(
        res.status >= 500 ? 'upstream_unavailable' : 'bad_request',
        `token exchange failed with HTTP ${res.status}`,
        {
          endpoint: 'generateToken',
          status: res.status,
          ...(res.status >= 500
            ? { retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), clock.now()) }
            : {}),
        },
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
    async getToken(wanted = {}) {
      if (current && clock.now() < current.renewAt) return current.token;
      const deadline = wanted.deadline ?? Number.POSITIVE_INFINITY;
      inflight ??= exchange(deadline, wanted.signal).finally(() => {
        inflight = undefined;
      });
      // Callers share one exchange, but each waits for it only until its own deadline.
      if (!Number.isFinite(deadline)) return inflight;
      const left = deadline - clock.now();
      if (left <= 0) throw spent();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(spent()), left);
      });
      try {
        return await Promise.race([inflight, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    invalidate(token) {
      if (current?.token === token) current = undefined;
      return true;
    },
  };
}
