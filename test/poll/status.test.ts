/** statusOf (lib/poll/failure.ts): what a stream's failure makes of its result. Pure. */
import { describe, expect, it } from 'vitest';
import { statusOf } from '../../lib/poll/failure.ts';
import { LeaseLostError, LeaseRenewalError } from '../../lib/state/lease.ts';
import { UpstreamError } from '../../lib/upstream/errors.ts';

describe('statusOf', () => {
  it('a lease taken over: lease_lost, a warning', () => {
    expect(statusOf(new LeaseLostError('stream#tenant'))).toMatchObject({
      status: 'lease_lost',
      error: { code: 'lease_lost' },
      level: 'warn',
    });
  });

  it('a renewal that failed for another reason: failed, saying what happened, not "another run"', () => {
    const failure = statusOf(new LeaseRenewalError('stream#tenant', new Error('socket hang up')));
    expect(failure.status).toBe('failed');
    expect(failure.error.code).toBe('lease_renewal_failed');
    expect(failure.error.message).toMatch(/could not renew the lease on stream#tenant \(socket hang up\)/);
  });

  it('rate limited beyond the budget: a clean stop, with the wait asked for', () => {
    const failure = statusOf(new UpstreamError('rate_limited', 'HTTP 429', { retryAfterMs: 30_000 }));
    expect(failure).toMatchObject({
      status: 'rate_limited',
      level: 'warn',
      fields: { retryAfterMs: 30_000 },
    });
  });

  it('refused credentials: unauthorized, an error', () => {
    expect(statusOf(new UpstreamError('unauthorized', 'HTTP 401'))).toMatchObject({
      status: 'unauthorized',
      error: { code: 'unauthorized', message: 'HTTP 401' },
      level: 'error',
    });
  });

  it('anything else: failed, with its code and a message that says what failed', () => {
    expect(statusOf(new UpstreamError('upstream_unavailable', 'tenantEvents: HTTP 503'))).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_unavailable', message: 'tenantEvents: HTTP 503' },
    });
    const sdk = Object.assign(new Error('UnknownError'), {
      name: 'UnknownError',
      $metadata: { httpStatusCode: 500 },
      $service: 'DynamoDB',
      $operation: 'BatchWriteItem',
    });
    expect(statusOf(sdk).error.message).toBe('DynamoDB BatchWriteItem failed: UnknownError (HTTP 500)');
  });

  it("an identifier group's 404: failed, unknown_group, naming the group and where it is configured, said once a run", () => {
    const notFound = new UpstreamError('not_found', 'HTTP 404', { endpoint: 'identifierGroupEvents' });
    expect(statusOf(notFound, 'group:1003:301')).toMatchObject({
      status: 'failed',
      level: 'warn',
      once: 'unknown_group:group:1003:301',
      error: {
        code: 'unknown_group',
        message: expect.stringContaining(
          'no identifier group 301 for this tenant (HTTP 404): check its id in the sources.identifierGroups of tenants entry 1003',
        ),
      },
    });
    // Another endpoint's 404 is an ordinary failure.
    expect(
      statusOf(new UpstreamError('not_found', 'HTTP 404', { endpoint: 'tenantEvents' }), 'tenant'),
    ).toMatchObject({
      status: 'failed',
      level: 'error',
      error: { code: 'not_found' },
    });
  });
});
