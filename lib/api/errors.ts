/**
 * The HTTP API's errors: one class with a stable `code` and the status it answers with, the JSON
 * body every error shares (`{"error": {"code", "message"}}`, docs/api.md), and the one
 * mapping from upstream failures to what a caller of the API sees.
 */
import { UpstreamError } from '../upstream/errors.ts';

export type ApiErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  /** Authenticated, but the request is outside the client's scopes. */
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  /** A request with this Idempotency-Key is still running. */
  | 'idempotency_key_in_progress'
  /** This Idempotency-Key came with another request before. */
  | 'idempotency_key_reused'
  /** Under `start --dry-run`, a route that would act outside does nothing (dry-run.ts). */
  | 'dry_run'
  /** Too soon: a destination's test message, at most one a minute (`Retry-After` says when). */
  | 'rate_limited'
  | 'upstream_error'
  /** The upstream refused this service's own credentials: an operator's problem, not the caller's. */
  | 'upstream_auth_failed'
  | 'upstream_rate_limited'
  | 'upstream_timeout'
  | 'internal_error';

export const STATUS_OF: Record<ApiErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_in_progress: 409,
  dry_run: 409,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  upstream_auth_failed: 502,
  upstream_rate_limited: 503,
  upstream_timeout: 504,
};

export interface ErrorBody {
  error: { code: ApiErrorCode; message: string };
}

/** Wait suggested to a rate-limited caller when the upstream named none (its docs ask for 10 s). */
export const DEFAULT_RETRY_AFTER_SECONDS = 10;

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status: number;
  /** Extra response headers: `WWW-Authenticate`, `Retry-After`, `Allow`. */
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = STATUS_OF[code];
    this.headers = options.headers ?? {};
  }

  get body(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }
}

export const REALM = 'exposure-alerts';

/** A 401 with the challenge RFC 6750 asks for; `invalid_token` once a token was actually presented. */
export function unauthorized(message: string, tokenPresented: boolean): ApiError {
  const challenge = tokenPresented
    ? `Bearer realm="${REALM}", error="invalid_token"`
    : `Bearer realm="${REALM}"`;
  return new ApiError('unauthorized', message, { headers: { 'WWW-Authenticate': challenge } });
}

/**
 * What the caller of the API gets for an upstream failure. The upstream's own text stays in our
 * logs: it may name internals that are none of the caller's business.
 *
 * @example
 * fromUpstreamError(new UpstreamError('not_found', '...'), 42).status // 404
 */
export function fromUpstreamError(error: UpstreamError, assetId: number): ApiError {
  switch (error.code) {
    case 'not_found':
      return new ApiError('not_found', `asset ${assetId} does not exist upstream`, { cause: error });
    case 'rate_limited': {
      const seconds =
        error.retryAfterMs === undefined
          ? DEFAULT_RETRY_AFTER_SECONDS
          : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
      return new ApiError(
        'upstream_rate_limited',
        `the upstream is rate limiting this service; retry in ${seconds} s`,
        { headers: { 'Retry-After': String(seconds) }, cause: error },
      );
    }
    case 'timeout':
      return new ApiError(
        'upstream_timeout',
        'the upstream did not answer in time; the toggle may or may not have been applied, so check the asset and retry',
        { cause: error },
      );
    case 'unauthorized':
    case 'forbidden':
      return new ApiError(
        'upstream_auth_failed',
        "the upstream refused this service's own credentials (not yours); an operator has to fix them",
        { cause: error },
      );
    default:
      return new ApiError('upstream_error', `the upstream failed (${error.code}); retry later`, {
        cause: error,
      });
  }
}

/** Any failure of the toggle as an ApiError; unknown errors become `internal_error`. */
export function toApiError(error: unknown, assetId: number): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UpstreamError) return fromUpstreamError(error, assetId);
  return new ApiError('internal_error', 'the toggle failed inside this service; see its logs', {
    cause: error,
  });
}

/**
 * An upstream that did not answer a request other than the toggle (an action, a lookup): 503 when
 * it rate limits (with `Retry-After`), 504 when it timed out, 502 otherwise (upstream_auth_failed
 * when it refused our own credentials). `then` says what the caller should know and do.
 */
export function upstreamFailure(error: UpstreamError, then: string): ApiError {
  if (error.code === 'rate_limited') {
    const seconds =
      error.retryAfterMs === undefined
        ? DEFAULT_RETRY_AFTER_SECONDS
        : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return new ApiError(
      'upstream_rate_limited',
      `the upstream is rate limiting this service; ${then} in ${seconds} s`,
      {
        headers: { 'Retry-After': String(seconds) },
        cause: error,
      },
    );
  }
  if (error.code === 'timeout')
    return new ApiError('upstream_timeout', `the upstream did not answer in time; ${then}`, { cause: error });
  if (error.code === 'unauthorized' || error.code === 'forbidden')
    return new ApiError(
      'upstream_auth_failed',
      "the upstream refused this service's own credentials (not yours); an operator has to fix them",
      { cause: error },
    );
  return new ApiError('upstream_error', `the upstream failed (${error.code}); ${then}`, { cause: error });
}
