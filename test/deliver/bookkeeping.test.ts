/**
 * What a send's outcome writes onto delivery records (lib/deliver/retry.ts), the one rule the
 * delivery pass and inline delivery share: sent; failed for now, due after the backoff or exactly
 * the Retry-After; dead on a permanent refusal or on the 8th attempt; a 429 costs no attempt and
 * dies only when still refused 24 h after the first 429. In memory, no store: the records as
 * the callers then write them. Expected numbers are written out, not taken from the constants.
 */
import { describe, expect, it } from 'vitest';
import { markFailed, markRateLimited, markSent } from '../../lib/deliver/retry.ts';
import type { SendFailure } from '../../lib/deliver/senders.ts';
import type { DeliveryRecord } from '../../lib/state/records/index.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-21T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const noDraw = () => {
  throw new Error('a Retry-After wait must not be jittered');
};

function pending(overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id: 'hook~event~e1',
    destination: 'hook',
    kind: 'event',
    key: 'e1',
    source: 'tenant',
    status: 'pending',
    attempts: 0,
    nextAttemptAt: iso(NOW - 1_000),
    routes: ['all'],
    item: {},
    createdAt: iso(NOW - HOUR),
    updatedAt: iso(NOW - HOUR),
    ...overrides,
  };
}

const serverError = (extra: Partial<SendFailure> = {}): SendFailure => ({
  ok: false,
  permanent: false,
  status: 503,
  error: 'HTTP 503 busy',
  ...extra,
});
const tooMany = (extra: Partial<SendFailure> = {}): SendFailure => ({
  ok: false,
  permanent: false,
  status: 429,
  rateLimited: true,
  error: 'HTTP 429 slow down',
  ...extra,
});

describe('markSent', () => {
  it('a sent record counts the attempt and forgets its error, its due time and its 429s', () => {
    const record = pending({
      attempts: 3,
      lastError: 'HTTP 503 busy',
      rateLimitedSince: iso(NOW - HOUR),
    });
    markSent([record], NOW);
    expect(record).toMatchObject({ status: 'sent', sentAt: iso(NOW), updatedAt: iso(NOW), attempts: 4 });
    expect(record.nextAttemptAt).toBeUndefined();
    expect(record.lastError).toBeUndefined();
    expect(record.rateLimitedSince).toBeUndefined();
  });

  it('a new record (inline delivery) is sent on its first attempt', () => {
    const record = pending();
    markSent([record], NOW);
    expect(record.attempts).toBe(1);
  });
});

describe('markFailed: a 5xx', () => {
  it('without Retry-After: one attempt counted, due after the backoff of that attempt, jittered', () => {
    const record = pending({ attempts: 2 });
    // The third attempt's step is 4 s; a draw of 0.5 waits three quarters of it.
    expect(markFailed([record], serverError(), NOW, () => 0.5)).toBe(0);
    expect(record).toMatchObject({
      status: 'pending',
      attempts: 3,
      lastError: 'HTTP 503 busy',
      nextAttemptAt: iso(NOW + 3_000),
    });
  });

  it('with Retry-After: due exactly then, no jitter drawn; more than an hour is an hour', () => {
    const soon = pending();
    expect(markFailed([soon], serverError({ retryAfterMs: 120_000 }), NOW, noDraw)).toBe(0);
    expect(soon).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: iso(NOW + 120_000) });
    const late = pending();
    markFailed([late], serverError({ retryAfterMs: 30 * HOUR }), NOW, noDraw);
    expect(late.nextAttemptAt).toBe(iso(NOW + HOUR));
  });

  it('keeps the first 429 of a run of them: a 5xx between two 429s does not restart the day', () => {
    const record = pending({ rateLimitedSince: iso(NOW - HOUR) });
    markFailed([record], serverError(), NOW, () => 0);
    expect(record.rateLimitedSince).toBe(iso(NOW - HOUR));
  });

  it('stores at most 500 characters of the error', () => {
    const record = pending();
    markFailed([record], serverError({ error: `HTTP 503 ${'x'.repeat(2_000)}` }), NOW, () => 0);
    expect(record.lastError).toHaveLength(500);
  });
});

describe('markFailed: dead', () => {
  it('a permanent refusal is dead at once, whatever the attempts, with its error', () => {
    const record = pending({ rateLimitedSince: iso(NOW - HOUR) });
    const refused: SendFailure = { ok: false, permanent: true, status: 410, error: 'HTTP 410 gone' };
    expect(markFailed([record], refused, NOW, noDraw)).toBe(1);
    expect(record).toMatchObject({ status: 'dead', attempts: 1, lastError: 'HTTP 410 gone' });
    expect(record.nextAttemptAt).toBeUndefined();
    // A delivery retried by hand later starts a new day of 429s.
    expect(record.rateLimitedSince).toBeUndefined();
  });

  it('the 8th attempt is the last: it dies, the 7th is retried', () => {
    const seventh = pending({ attempts: 6 });
    const eighth = pending({ id: 'hook~event~e2', key: 'e2', attempts: 7 });
    expect(markFailed([seventh, eighth], serverError(), NOW, () => 0)).toBe(1);
    // The 7th attempt's step is 64 s; the lowest draw waits half of it.
    expect(seventh).toMatchObject({ status: 'pending', attempts: 7, nextAttemptAt: iso(NOW + 32_000) });
    expect(eighth).toMatchObject({ status: 'dead', attempts: 8, lastError: 'HTTP 503 busy' });
    expect(eighth.nextAttemptAt).toBeUndefined();
  });

  it('a Retry-After does not save the 8th attempt', () => {
    const record = pending({ attempts: 7 });
    expect(markFailed([record], serverError({ retryAfterMs: 1_000 }), NOW, noDraw)).toBe(1);
    expect(record.status).toBe('dead');
  });
});

describe('markRateLimited: a 429', () => {
  const until = NOW + 30_000;

  it('costs no attempt: due at the end of the pause, its first 429 remembered', () => {
    const record = pending({ attempts: 2 });
    expect(markRateLimited([record], tooMany(), NOW, until)).toBe(0);
    expect(record).toMatchObject({
      status: 'pending',
      attempts: 2,
      lastError: 'HTTP 429 slow down',
      nextAttemptAt: iso(until),
      rateLimitedSince: iso(NOW),
    });
  });

  it('a later 429 keeps the time of the first', () => {
    const record = pending({ rateLimitedSince: iso(NOW - 5 * HOUR) });
    markRateLimited([record], tooMany(), NOW, until);
    expect(record.rateLimitedSince).toBe(iso(NOW - 5 * HOUR));
    expect(record.status).toBe('pending');
  });

  it('still refused 24 h after the first 429: dead, saying why', () => {
    const justUnder = pending({ rateLimitedSince: iso(NOW - 24 * HOUR + 1) });
    const day = pending({
      id: 'hook~event~e2',
      key: 'e2',
      attempts: 1,
      rateLimitedSince: iso(NOW - 24 * HOUR),
    });
    expect(markRateLimited([justUnder, day], tooMany(), NOW, until)).toBe(1);
    expect(justUnder).toMatchObject({ status: 'pending', nextAttemptAt: iso(until) });
    expect(day).toMatchObject({
      status: 'dead',
      attempts: 1,
      lastError: 'HTTP 429 slow down (still rate limited 24 h after the first 429; giving up)',
    });
    expect(day.nextAttemptAt).toBeUndefined();
    expect(day.rateLimitedSince).toBeUndefined();
  });

  it('any number of 429s within the day costs no attempt', () => {
    const record = pending({ attempts: 7 });
    for (let hour = 0; hour < 24; hour++) markRateLimited([record], tooMany(), NOW + hour * HOUR, until);
    expect(record).toMatchObject({ status: 'pending', attempts: 7, rateLimitedSince: iso(NOW) });
  });

  it('an unreadable first-429 time starts the day now', () => {
    const record = pending({ rateLimitedSince: 'not a time' });
    markRateLimited([record], tooMany(), NOW, until);
    expect(record).toMatchObject({ status: 'pending', rateLimitedSince: iso(NOW) });
  });
});
