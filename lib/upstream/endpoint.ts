/**
 * What the client's endpoint methods share (client.ts, and other-endpoints.ts for those no poll
 * calls): the spec's limits, checked before a request is sent, and the reading of an answer (its
 * `{items, next}` envelope, its quota headers, a shape it should not have), and the one warning a
 * deprecated endpoint gives.
 */
import type { Logger } from '../log.ts';
import { RequestLimitError, UpstreamError } from './errors.ts';
import type { Page, Quota } from './requests.ts';
import { nextPageEnvelopeSchema } from './schemas-polled.ts';
import type { SplitItems } from './validate.ts';
import { describeIssues, issuesToText } from './validate.ts';

export const LIMITS = {
  tenantEventsSize: 10,
  globalCredentialsSize: 10_000,
  byPasswordSize: 10_000,
  v2CredentialsSize: 5_000,
  byAccountsBatch: 100,
  eventActionTargets: 10,
} as const;

export function checkSize(endpoint: string, size: number | undefined, min: number, max: number): void {
  if (size === undefined) return;
  if (!Number.isInteger(size) || size < min || size > max) {
    throw new RequestLimitError(
      endpoint,
      `${endpoint}: size must be an integer from ${min} to ${max}, got ${size}`,
    );
  }
}

export function checkPositiveId(endpoint: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RequestLimitError(endpoint, `${endpoint}: ${name} must be a positive integer, got ${value}`);
  }
}

export function checkSegment(endpoint: string, name: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new RequestLimitError(endpoint, `${endpoint}: ${name} must be a non-empty string`);
  }
}

export function readQuota(headers: Headers): Quota {
  const remaining = headers.get('x-flare-global-searches-remaining');
  const reached = headers.get('x-flare-global-searches-batch-reached');
  const n = remaining === null ? Number.NaN : Number(remaining);
  return {
    remaining: Number.isFinite(n) ? n : null,
    batchReached: reached === null ? null : /^(true|1|yes)$/i.test(reached.trim()),
  };
}

export function invalidResponse(endpoint: string, detail: string): UpstreamError {
  return new UpstreamError('invalid_response', `${endpoint}: unexpected response shape (${detail})`, {
    endpoint,
  });
}

export function normaliseNext(next: string | number | null | undefined): string | null {
  if (next === null || next === undefined || next === '') return null;
  return String(next);
}

/** A `{items, next}` answer: its items split into valid and invalid ones, its `next` as a string. */
export function parseNextPage<T>(
  endpoint: string,
  body: unknown,
  split: (raw: unknown[]) => SplitItems<T>,
): Page<T> {
  const envelope = nextPageEnvelopeSchema.safeParse(body);
  if (!envelope.success) {
    throw invalidResponse(endpoint, issuesToText(describeIssues(envelope.error.issues, body)));
  }
  return { ...split(envelope.data.items), next: normaliseNext(envelope.data.next) };
}

const deprecationWarned = new Set<string>();

/** Forget which deprecation warnings were printed (tests). */
export function resetDeprecationWarnings(): void {
  deprecationWarned.clear();
}

/** Warns once a process that a deprecated endpoint was called, and what replaces it. */
export function warnDeprecated(logger: Logger, endpoint: string, replacement: string): void {
  if (deprecationWarned.has(endpoint)) return;
  deprecationWarned.add(endpoint);
  logger.warn(`upstream endpoint ${endpoint} is deprecated; ${replacement}`, { endpoint });
}
