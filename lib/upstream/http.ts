/**
 * One request to the upstream, with everything the contract asks of it: bearer auth (renewed once
 * on a 401), a timeout on every attempt, 429 waits that honour `Retry-After` (else about 10 s),
 * exponential backoff with jitter on 5xx, network errors and timeouts, a bound on attempts, and an
 * overall deadline that no wait may cross.
 *
 * Log lines name the endpoint, never the URL: endpoint 5 carries a password in its path.
 */
import type { Clock } from '../clock.ts';
import { systemClock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { silentLogger } from '../log.ts';
import { originOf, waitingFor } from '../waits.ts';
import type { TokenProvider } from './auth.ts';
import { codeForStatus, UpstreamError } from './errors.ts';
import { type RateGovernor, SEARCH_TIER_ENDPOINTS } from './rate.ts';
import { checkBaseUrl } from './settings.ts';
import { parseRetryAfter, readBody, upstreamCode, upstreamMessage } from './wire.ts';

export type QueryValue = string | number | boolean | readonly string[] | readonly number[] | undefined | null;

export interface RequestSpec {
  /** Logical name used in logs, metrics and errors, e.g. `tenantEvents`. */
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path relative to the base URL; `{core}` is replaced by the core segment. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

export interface CallOptions {
  /** Absolute time (ms since the epoch) after which no attempt starts and no wait may end. */
  deadline?: number;
  signal?: AbortSignal;
  /**
   * What must be done before the request is sent (an audit record, say), awaited beside the first
   * attempt's turn rather than before it; if it fails, nothing is sent and its error is thrown.
   */
  ready?: Promise<unknown>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface UpstreamHttpOptions {
  baseUrl: string;
  /** The path segment the spec writes `core`; `firework` on the real service. */
  coreSegment?: string;
  auth: TokenProvider;
  fetch?: typeof fetch;
  clock?: Clock;
  logger?: Logger;
  /** Per-attempt timeout; default 30 s. */
  timeoutMs?: number;
  /** Attempts per request, the first included; default 5. */
  maxAttempts?: number;
  /** Wait after a 429 without `Retry-After`; default 10 s, as the upstream's docs ask. */
  rateLimitWaitMs?: number;
  /** First backoff step for 5xx, network errors and timeouts; default 500 ms, doubling up to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  random?: () => number;
  /** The shared rate governor; none for a run that uses no table (`token test`). */
  governor?: RateGovernor;
  /**
   * Every answer, refusals included (the client reads the quota headers of every global search,
   * a 403 for the quota among them).
   */
  onAnswer?: (answer: { endpoint: string; status: number; headers: Headers; body: unknown }) => void;
}

export function buildUrl(baseUrl: string, coreSegment: string, spec: RequestSpec): string {
  const path = spec.path.replace('{core}', coreSegment);
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(spec.query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
    else url.searchParams.set(key, String(value));
  }
  return url.toString();
}

export class UpstreamHttp {
  readonly baseUrl: string;
  readonly coreSegment: string;
  private readonly auth: TokenProvider;
  private readonly doFetch: typeof fetch;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly rateLimitWaitMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly random: () => number;
  private readonly governor?: RateGovernor;
  private readonly onAnswer?: UpstreamHttpOptions['onAnswer'];

  constructor(options: UpstreamHttpOptions) {
    checkBaseUrl(options.baseUrl);
    this.baseUrl = options.baseUrl;
    this.coreSegment = options.coreSegment ?? 'firework';
    this.auth = options.auth;
    this.doFetch = options.fetch ?? fetch;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.rateLimitWaitMs = options.rateLimitWaitMs ?? 10_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffMaxMs = options.backoffMaxMs ?? 8_000;
    this.random = options.random ?? Math.random;
    this.governor = options.governor;
    this.onAnswer = options.onAnswer;
  }

  private backoff(attempt: number): number {
    const step = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** (attempt - 1));
    // Equal jitter: at least half the step, so retries spread out without collapsing to zero.
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  async request(spec: RequestSpec, options: CallOptions = {}): Promise<RawResponse> {
    const url = buildUrl(this.baseUrl, this.coreSegment, spec);
    const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
    let renewed = false;
    let attempt = 0;
    for (;;) {
      attempt += 1;
      const spent = () =>
        new UpstreamError('timeout', `${spec.endpoint}: the time budget ran out before the request`, {
          endpoint: spec.endpoint,
          attempts: attempt - 1,
          budgetSpent: true,
        });
      if (deadline - this.clock.now() <= 0) throw spent();
      let failure: UpstreamError;
      let waitMs: number;
      // The token before the turn: an exchange (a round trip, with a turn of its own) must not sit
      // between this request's slot and its sending, or the request would reach the upstream late
      // and crowd the next second.
      const token = await this.auth.getToken({ deadline, signal: options.signal }).catch((error: unknown) => {
        if (error instanceof UpstreamError) return error;
        throw error;
      });
      if (token instanceof UpstreamError) {
        failure = token;
      } else {
        // Every attempt takes its turn, retries included; a turn that cannot come in time ends
        // here. The governor paces in real time (its slots are shared with other processes): the
        // budget is handed over as real time too, whatever clock this client runs on.
        const turn = this.governor?.take(SEARCH_TIER_ENDPOINTS.has(spec.endpoint) ? 'search' : 'basic', {
          deadline: Number.isFinite(deadline) ? Date.now() + (deadline - this.clock.now()) : undefined,
          signal: options.signal,
        });
        if (attempt === 1 && options.ready) {
          // Both settle before anything is sent: a failed `ready` sends nothing.
          const [done] = await Promise.allSettled([options.ready, turn]);
          if (done.status === 'rejected') throw done.reason;
        }
        await turn;
        // What is left after the turn: the request gets no longer than that.
        const remaining = deadline - this.clock.now();
        if (remaining <= 0) throw spent();
        const timeoutMs = Math.min(this.timeoutMs, remaining);
        const outcome = await this.attempt(spec, url, token, timeoutMs, options.signal);
        if (outcome.kind === 'ok') return outcome.response;
        failure = outcome.error;
        if (failure.code === 'timeout' && failure.status === undefined && timeoutMs < this.timeoutMs) {
          // Cut short by the budget, not given up on by us: the budget is spent, nothing failed.
          failure = new UpstreamError('timeout', `${failure.message}, the rest of the time budget`, {
            endpoint: spec.endpoint,
            attempts: attempt,
            budgetSpent: true,
          });
        }
        if (failure.code === 'unauthorized') {
          if (!renewed && outcome.token !== undefined && this.auth.invalidate(outcome.token)) {
            renewed = true;
            attempt -= 1; // a renewal is not a failed attempt
            this.logger.info('upstream token refused; renewing it once', { endpoint: spec.endpoint });
            continue;
          }
          throw failure;
        }
      }
      if (failure.code === 'rate_limited' && failure.status === 429) await this.governor?.slowDown();
      if (!failure.retryable || failure.budgetSpent) throw failure;
      waitMs =
        failure.code === 'rate_limited'
          ? (failure.retryAfterMs ?? this.rateLimitWaitMs)
          : (failure.retryAfterMs ?? this.backoff(attempt));
      if (attempt >= this.maxAttempts) {
        throw new UpstreamError(failure.code, `${failure.message} (gave up after ${attempt} attempts)`, {
          endpoint: spec.endpoint,
          status: failure.status,
          retryAfterMs: failure.retryAfterMs,
          attempts: attempt,
          cause: failure,
        });
      }
      if (this.clock.now() + waitMs > deadline) {
        throw new UpstreamError(
          failure.code,
          `${failure.message} (no retry: waiting ${Math.ceil(waitMs / 1000)} s would pass the time budget)`,
          {
            endpoint: spec.endpoint,
            status: failure.status,
            retryAfterMs: failure.retryAfterMs,
            attempts: attempt,
          },
        );
      }
      this.logger.warn('upstream request failed; retrying', {
        // The request that failed: the token exchange's own, when it was the exchange.
        endpoint: failure.endpoint ?? spec.endpoint,
        code: failure.code,
        status: failure.status,
        attempt,
        waitMs,
      });
      await waitingFor(
        `the upstream at ${originOf(url)} (to try again after ${failure.code})`,
        this.clock.sleep(waitMs, options.signal),
      );
    }
  }

  private async attempt(
    spec: RequestSpec,
    url: string,
    token: string,
    timeoutMs: number,
    callerSignal?: AbortSignal,
  ): Promise<
    { kind: 'ok'; response: RawResponse } | { kind: 'error'; error: UpstreamError; token?: string }
  > {
    const timeout = AbortSignal.timeout(Math.max(1, Math.floor(timeoutMs)));
    const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    let body: { json: unknown; ok: boolean; text: string };
    try {
      const answer = async () => {
        const got = await this.doFetch(url, {
          method: spec.method,
          headers,
          body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
          signal,
        });
        return { got, read: await readBody(got) };
      };
      ({ got: res, read: body } = await waitingFor(`the upstream at ${originOf(url)}`, answer()));
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      const timedOut = timeout.aborted || (error as Error)?.name === 'TimeoutError';
      return {
        kind: 'error',
        error: new UpstreamError(
          timedOut ? 'timeout' : 'upstream_unavailable',
          timedOut
            ? `${spec.endpoint}: no answer within ${Math.round(timeoutMs)} ms`
            : `${spec.endpoint}: network error (${(error as Error)?.message ?? 'unknown'})`,
          { endpoint: spec.endpoint, cause: error },
        ),
      };
    }
    this.onAnswer?.({ endpoint: spec.endpoint, status: res.status, headers: res.headers, body: body.json });
    if (res.status >= 200 && res.status < 300) {
      if (!body.ok) {
        return {
          kind: 'error',
          error: new UpstreamError('invalid_response', `${spec.endpoint}: the response is not valid JSON`, {
            endpoint: spec.endpoint,
            status: res.status,
          }),
        };
      }
      return { kind: 'ok', response: { status: res.status, headers: res.headers, body: body.json } };
    }
    const code =
      res.status === 403 && upstreamCode(body.json) === 'QUOTA_EXCEEDED'
        ? 'quota_exceeded'
        : codeForStatus(res.status);
    // A 429's wait, and a 5xx's when it says one (a 503 in maintenance): honoured, capped as every wait is.
    const retryAfterMs =
      code === 'rate_limited' || res.status >= 500
        ? parseRetryAfter(res.headers.get('retry-after'), this.clock.now())
        : undefined;
    const what =
      code === 'unauthorized'
        ? 'the upstream refused the credentials'
        : code === 'rate_limited'
          ? 'rate limited by the upstream'
          : code === 'quota_exceeded'
            ? 'the monthly global-search quota is used up'
            : `HTTP ${res.status}`;
    return {
      kind: 'error',
      token,
      error: new UpstreamError(code, `${spec.endpoint}: ${what}${upstreamMessage(body.json)}`, {
        endpoint: spec.endpoint,
        status: res.status,
        retryAfterMs,
      }),
    };
  }
}
