/**
 * What a stream's failure makes of its result, and of its log line: a lost lease, a spent budget,
 * the shared rate's refusal, a spent quota and refused credentials are outcomes a run expects and
 * the next run resumes from; anything else is a failure (and, on AWS, an SQS retry).
 *
 * An identifier group the upstream does not know (404) is a mistake in the config that every cycle
 * meets again: the stream fails each time (so `status`, the cycle's summary and the heartbeat show
 * it), but its log line, saying which group and where to fix it, is written once a run (`once`).
 */
import { describeError } from '../errors.ts';
import { LeaseLostError } from '../state/lease.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { StreamStatus } from './types.ts';

export interface StreamFailure {
  status: Exclude<StreamStatus, 'done' | 'skipped'>;
  error: { code: string; message: string };
  /** How the log says it. */
  level: 'warn' | 'error';
  log: string;
  fields: Record<string, unknown>;
  /** The same failure is logged at `level` once a run, under this key, and at debug after. */
  once?: string;
}

/** An identifier group's 404: which group, of which `tenants` entry (none: the top level). */
function unknownGroup(error: UpstreamError, stream: string | undefined): StreamFailure | undefined {
  if (error.code !== 'not_found' || error.endpoint !== 'identifierGroupEvents') return undefined;
  const m = /^group:(?:(\d+):)?(\d+)$/.exec(stream ?? '');
  const group = m?.[2] ?? '?';
  const where = m?.[1] ? `the sources.identifierGroups of tenants entry ${m[1]}` : 'sources.identifierGroups';
  const message = `the upstream knows no identifier group ${group} for this tenant (HTTP 404): check its id in ${where}; the stream fails every cycle until then`;
  return {
    status: 'failed',
    error: { code: 'unknown_group', message },
    level: 'warn',
    log: message,
    fields: { code: 'unknown_group' },
    once: `unknown_group:${stream}`,
  };
}

/** What a stream's failure (of the stream `stream`, when known) makes of its result, and of its log line. Pure. */
export function statusOf(error: unknown, stream?: string): StreamFailure {
  if (error instanceof LeaseLostError) {
    const message = 'the stream lease was lost; another run took over';
    return {
      status: 'lease_lost',
      error: { code: 'lease_lost', message },
      level: 'warn',
      log: message,
      fields: {},
    };
  }
  if (error instanceof UpstreamError && error.budgetSpent) {
    // The budget ended before the request could start, or cut it short: nothing failed, the next
    // run goes on from the saved cursor.
    return {
      status: 'budget',
      error: { code: 'budget', message: error.message },
      level: 'warn',
      log: 'time budget spent before the next request; the next run resumes from the saved cursor',
      fields: {},
    };
  }
  if (error instanceof UpstreamError && error.code === 'rate_limited') {
    return {
      status: 'rate_limited',
      error: { code: error.code, message: error.message },
      level: 'warn',
      log: 'rate limited by the upstream beyond the time budget; stopping cleanly, the next run resumes',
      fields: { retryAfterMs: error.retryAfterMs },
    };
  }
  if (error instanceof UpstreamError && error.code === 'quota_exceeded') {
    // The month's global searches are spent: credential polling pauses (cycle.ts, quota.ts), and
    // the stream goes on from its cursor once the quota is back. Nothing failed.
    return {
      status: 'paused',
      error: { code: error.code, message: error.message },
      level: 'warn',
      log: 'the monthly global-search quota is used up; credential polling pauses until it comes back',
      fields: {},
    };
  }
  if (error instanceof UpstreamError && error.code === 'unauthorized') {
    return {
      status: 'unauthorized',
      error: { code: error.code, message: error.message },
      level: 'error',
      log: 'the upstream rejected the credentials; fix EXPOSURE_API_TOKEN / EXPOSURE_API_KEY',
      fields: { code: error.code },
    };
  }
  const group = error instanceof UpstreamError ? unknownGroup(error, stream) : undefined;
  if (group) return group;
  const code = error instanceof UpstreamError ? error.code : ((error as { code?: string })?.code ?? 'error');
  return {
    status: 'failed',
    error: { code, message: describeError(error) },
    level: 'error',
    log: 'stream poll failed; the next run resumes from the saved cursor',
    fields: { code, error },
  };
}
