/**
 * Typed errors of the upstream client. The `code` is stable: callers branch on it, logs and
 * metrics carry it, and the CLI maps `unauthorized` to exit code 3.
 */

export type UpstreamErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'not_found'
  | 'bad_request'
  | 'upstream_unavailable'
  | 'invalid_response'
  | 'timeout'
  /** A global search refused for the monthly quota (403 QUOTA_EXCEEDED): a pause, not a failure. */
  | 'quota_exceeded';

export interface UpstreamErrorDetails {
  /** Logical endpoint name, e.g. `tenantEvents`; never a URL with a secret in it. */
  endpoint?: string;
  status?: number;
  /** How long the upstream asked us to wait, when it said so (429). */
  retryAfterMs?: number;
  attempts?: number;
  /**
   * The run's time budget ended, not the upstream: before the request could start, or while it
   * was in flight with a timeout the budget had cut short. Nothing failed; the next run goes on.
   */
  budgetSpent?: boolean;
  /**
   * The shared governor's word: no turn is free before the deadline (`retryAfterMs` says when the
   * next one is). Not the upstream's refusal: nothing was sent.
   */
  noTurn?: boolean;
  cause?: unknown;
}

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly code: UpstreamErrorCode;
  readonly endpoint?: string;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly attempts?: number;
  readonly budgetSpent: boolean;
  readonly noTurn: boolean;

  constructor(code: UpstreamErrorCode, message: string, details: UpstreamErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.endpoint = details.endpoint;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    this.attempts = details.attempts;
    this.budgetSpent = details.budgetSpent === true;
    this.noTurn = details.noTurn === true;
  }

  /** Worth another attempt: the same request may succeed later. */
  get retryable(): boolean {
    return (
      this.code === 'rate_limited' ||
      this.code === 'upstream_unavailable' ||
      this.code === 'timeout' ||
      this.code === 'invalid_response'
    );
  }
}

/** The error code for a non-2xx HTTP status. */
export function codeForStatus(status: number): UpstreamErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'upstream_unavailable';
  return 'bad_request';
}

/** A request that breaks a documented limit; thrown before anything is sent. */
export class RequestLimitError extends UpstreamError {
  constructor(endpoint: string, message: string) {
    super('bad_request', message, { endpoint });
  }
}
