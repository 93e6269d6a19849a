/**
 * How a destination's answer becomes a SendOutcome (lib/deliver/senders.ts), per
 * docs/destinations/: accepted, retried (408, 429, 5xx, network errors, timeouts; after the
 * Retry-After when one was given) or never retried (every other answer; 413 flagged too large so
 * the pass can split). `classify` is called directly for the status table; the answers only a
 * real exchange produces (a header read off the wire, a timeout, a refused connection, an abort)
 * go through `send` and the real POST against a local receiver.
 */
import { describe, expect, it } from 'vitest';
import type { ResolvedDestination } from '../../lib/deliver/destinations.ts';
import { httpPost } from '../../lib/deliver/post.ts';
import { readAs, type SendContext, type SendOutcome, send } from '../../lib/deliver/senders.ts';
import { startReceiver, useReceivers } from '../helpers/receiver.ts';

const receiver = useReceivers();

/** An answer read as the destination's kind reads it (what `send` does with one off the wire). */
const classify = (
  destination: ResolvedDestination,
  status: number,
  body: string,
  retryAfter: string | null,
  now: number,
) =>
  readAs(
    destination,
    { status, body, headers: new Headers(retryAfter === null ? {} : { 'retry-after': retryAfter }) },
    now,
  );

const NOW = Date.parse('2026-11-21T12:00:00Z');
const HOUR = 3_600_000;

const slack = (url = 'http://127.0.0.1:9/slack'): ResolvedDestination => ({
  name: 'soc',
  type: 'slack',
  url,
});
const webhook = (url = 'http://127.0.0.1:9/hook'): ResolvedDestination => ({
  name: 'siem',
  type: 'webhook',
  url,
  headers: {},
});
const email = (
  provider: 'generic' | 'sendgrid' | 'postmark',
  url = 'http://127.0.0.1:9/mail',
): ResolvedDestination => ({
  name: `mail-${provider}`,
  type: 'email',
  provider,
  url,
  apiKey: 'key',
  from: 'alerts@example.com',
  to: ['soc@example.com'],
});

const DESTINATIONS = [
  ['slack', slack()],
  ['webhook', webhook()],
  ['generic email', email('generic')],
  ['sendgrid', email('sendgrid')],
  ['postmark', email('postmark')],
] as const;

/** Retried: never permanent, never too large. */
function expectRetried(outcome: SendOutcome, status?: number) {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.permanent).toBe(false);
  expect(outcome.tooLarge).toBeUndefined();
  expect(outcome.status).toBe(status);
}

/** Never retried: a Retry-After on such an answer must not schedule anything. */
function expectPermanent(outcome: SendOutcome, status: number) {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.permanent).toBe(true);
  expect(outcome.status).toBe(status);
  expect(outcome.rateLimited).toBeUndefined();
  expect(outcome.retryAfterMs).toBeUndefined();
  // The operator reads this in `deliveries list` and the refusal notice: it must say which answer.
  expect(outcome.error).toContain(`HTTP ${status}`);
}

describe('classify: accepted', () => {
  it.each(DESTINATIONS)('%s: every 2xx is accepted', async (_, destination) => {
    for (const status of [200, 201, 202, 204]) {
      expect(await classify(destination, status, '', null, NOW)).toEqual({ ok: true, status });
    }
  });

  it("slack: 200 with the body 'ok' is accepted", async () => {
    expect(await classify(slack(), 200, 'ok', null, NOW)).toEqual({ ok: true, status: 200 });
  });

  it('sendgrid: 202 with an empty body is accepted (its only success)', async () => {
    expect(await classify(email('sendgrid'), 202, '', null, NOW)).toEqual({ ok: true, status: 202 });
  });

  it('webhook: a Teams Workflows 202 with an empty body is accepted (not the old connectors\' "1")', async () => {
    expect(await classify(webhook(), 202, '', null, NOW)).toEqual({ ok: true, status: 202 });
  });

  it('postmark: 200 with ErrorCode 0 is accepted, and so is a 200 without a JSON body', async () => {
    const body = JSON.stringify({ ErrorCode: 0, Message: 'OK', MessageID: 'b7bc2f4a' });
    expect(await classify(email('postmark'), 200, body, null, NOW)).toEqual({ ok: true, status: 200 });
    expect(await classify(email('postmark'), 200, 'OK', null, NOW)).toEqual({ ok: true, status: 200 });
  });
});

describe('classify: retried', () => {
  it.each(DESTINATIONS)(
    '%s: 408 and every 5xx without Retry-After back off as usual',
    async (_, destination) => {
      for (const status of [408, 500, 502, 503, 504, 599]) {
        const outcome = await classify(destination, status, 'busy', null, NOW);
        expectRetried(outcome, status);
        if (outcome.ok) continue;
        expect(outcome.retryAfterMs).toBeUndefined();
        // Only a 429 pauses the destination without counting an attempt.
        expect(outcome.rateLimited).toBeUndefined();
      }
    },
  );

  it.each(DESTINATIONS)('%s: a 5xx with Retry-After waits that long', async (_, destination) => {
    const outcome = await classify(destination, 503, 'maintenance', '120', NOW);
    expectRetried(outcome, 503);
    expect(outcome).toMatchObject({ retryAfterMs: 120_000 });
    expect(outcome).not.toHaveProperty('rateLimited');
  });

  it.each(DESTINATIONS)(
    '%s: 429 without Retry-After is rate limited, with no wait of its own',
    async (_, destination) => {
      const outcome = await classify(destination, 429, 'rate_limited', null, NOW);
      expectRetried(outcome, 429);
      expect(outcome).toMatchObject({ rateLimited: true });
      expect(outcome).not.toHaveProperty('retryAfterMs');
    },
  );

  it.each(DESTINATIONS)(
    '%s: 429 with Retry-After is rate limited for exactly that long',
    async (_, destination) => {
      const outcome = await classify(destination, 429, 'rate_limited', '30', NOW);
      expectRetried(outcome, 429);
      expect(outcome).toMatchObject({ rateLimited: true, retryAfterMs: 30_000 });
    },
  );

  it('Retry-After as an HTTP date is the time left until it; more than an hour is an hour', async () => {
    expect(await classify(slack(), 429, '', 'Sat, 21 Nov 2026 12:00:45 GMT', NOW)).toMatchObject({
      retryAfterMs: 45_000,
    });
    expect(await classify(slack(), 429, '', '7200', NOW)).toMatchObject({ retryAfterMs: HOUR });
    expect(await classify(slack(), 503, '', 'Sat, 21 Nov 2026 18:00:00 GMT', NOW)).toMatchObject({
      retryAfterMs: HOUR,
    });
  });

  it('an absurd or unreadable Retry-After is no Retry-After: still retried, with the usual backoff', async () => {
    for (const header of ['9999999999999', '1'.repeat(400), 'soon', '-5']) {
      const outcome = await classify(slack(), 429, '', header, NOW);
      expectRetried(outcome, 429);
      expect(outcome).not.toHaveProperty('retryAfterMs');
    }
  });

  it('slack: 500 rollup_error is retried', async () => {
    expectRetried(await classify(slack(), 500, 'rollup_error', null, NOW), 500);
  });

  it('postmark: 429, 500 and 503 are retried', async () => {
    for (const status of [429, 500, 503])
      expectRetried(await classify(email('postmark'), status, '{}', null, NOW), status);
  });
});

describe('classify: never retried', () => {
  it.each(DESTINATIONS)('%s: 400, 401, 403, 404, 410 and 422 are permanent', async (_, destination) => {
    for (const status of [400, 401, 403, 404, 410, 422]) {
      // A Retry-After on a refusal changes nothing: a revoked webhook will not heal with time.
      const outcome = await classify(destination, status, 'no', '30', NOW);
      expectPermanent(outcome, status);
      expect(outcome).not.toHaveProperty('tooLarge');
    }
  });

  it.each(DESTINATIONS)(
    '%s: 413 is permanent and flagged too large, so the pass can split',
    async (_, destination) => {
      const outcome = await classify(destination, 413, 'Request Entity Too Large', null, NOW);
      expectPermanent(outcome, 413);
      expect(outcome).toMatchObject({ tooLarge: true });
    },
  );

  it('a redirect is a refusal like any other answer (post.ts follows none)', async () => {
    expectPermanent(await classify(webhook(), 301, 'moved', null, NOW), 301);
    expectPermanent(await classify(slack(), 302, '', null, NOW), 302);
  });

  it.each([
    [404, 'channel_not_found'],
    [404, 'no_service'],
    [410, 'channel_is_archived'],
    [403, 'action_prohibited'],
    [400, 'invalid_blocks'],
  ])('slack: %d %s is permanent and its reason reaches the error', async (status, reason) => {
    const outcome = await classify(slack(), status, reason, null, NOW);
    expectPermanent(outcome, status);
    expect(outcome).toMatchObject({ error: `HTTP ${status} ${reason}` });
  });

  it('postmark: 200 with a non-zero ErrorCode is a refusal, named by its code', async () => {
    const body = JSON.stringify({
      ErrorCode: 406,
      Message: 'You tried to send to a recipient that has been marked as inactive.',
    });
    const outcome = await classify(email('postmark'), 200, body, null, NOW);
    expect(outcome).toEqual({ ok: false, permanent: true, status: 200, error: 'postmark ErrorCode 406' });
  });

  it('sendgrid: 400, 401, 403 and 413 are permanent', async () => {
    for (const status of [400, 401, 403, 413]) {
      expectPermanent(await classify(email('sendgrid'), status, '{"errors":[]}', null, NOW), status);
    }
  });

  it("the error quotes the answer's body on one line, at most 120 characters of it", async () => {
    const outcome = await classify(webhook(), 400, `  bad\n\tfield:\n ${'x'.repeat(300)}`, null, NOW);
    expectPermanent(outcome, 400);
    if (outcome.ok) return;
    expect(outcome.error).toMatch(/^HTTP 400 bad field: x+$/);
    expect(outcome.error.length).toBeLessThanOrEqual('HTTP 400 '.length + 120);
  });
});

describe('send: answers only a real exchange produces', () => {
  const ctx = (extra: Partial<SendContext> = {}): SendContext => ({
    post: httpPost,
    now: () => Date.now(),
    timeoutMs: 5_000,
    write: () => {},
    ...extra,
  });
  const slackPayload = { text: 'one alert', blocks: [] };
  const mail = { subject: 'one alert', text: 'text', html: '<p>html</p>' };

  it("slack: 200 'ok' over HTTP is accepted", async () => {
    const hook = await receiver({ status: 200, body: 'ok' });
    expect(await send(slack(hook.url), slackPayload, ['d1'], ctx())).toEqual({ ok: true, status: 200 });
    expect(hook.requests).toHaveLength(1);
  });

  it('429 with Retry-After: the header is read off the answer', async () => {
    const hook = await receiver({ status: 429, body: 'rate_limited', headers: { 'Retry-After': '2' } });
    expect(await send(slack(hook.url), slackPayload, ['d1'], ctx())).toMatchObject({
      ok: false,
      permanent: false,
      status: 429,
      rateLimited: true,
      retryAfterMs: 2_000,
    });
  });

  it('postmark: 200 with a non-zero ErrorCode over HTTP is a refusal', async () => {
    const hook = await receiver({
      status: 200,
      body: JSON.stringify({ ErrorCode: 300, Message: 'Invalid email request' }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(await send(email('postmark', hook.url), mail, ['d1'], ctx())).toMatchObject({
      ok: false,
      permanent: true,
      error: 'postmark ErrorCode 300',
    });
  });

  it('sendgrid: 202 with an empty body over HTTP is accepted', async () => {
    const hook = await receiver({ status: 202, body: '' });
    expect(await send(email('sendgrid', hook.url), mail, ['d1'], ctx())).toEqual({ ok: true, status: 202 });
  });

  it('no answer within the timeout is retried (it may have been delivered: at-least-once)', async () => {
    const hook = await receiver({ hang: true });
    const started = Date.now();
    const outcome = await send(webhook(hook.url), slackPayload, ['d1'], ctx({ timeoutMs: 300 }));
    expect(outcome).toEqual({ ok: false, permanent: false, error: 'no answer within 300 ms' });
    // The timeout ends the wait, not the receiver (which never answers).
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('a refused connection is retried, as a network error', async () => {
    // A port that was just listening and is now closed: the connection is refused.
    const gone = await startReceiver();
    await gone.close();
    const outcome = await send(webhook(gone.url), slackPayload, ['d1'], ctx());
    expectRetried(outcome);
    expect(outcome).toMatchObject({ error: expect.stringMatching(/^network error: .*ECONNREFUSED/) });
  });

  it("the caller's abort is not an outcome: send rejects with its reason, nothing is classified", async () => {
    // A pass that lost its lease must not record a retry or a refusal for a send it cut short.
    const hook = await receiver({ hang: true });
    const abort = new AbortController();
    const reason = new Error('lease lost');
    setTimeout(() => abort.abort(reason), 100);
    await expect(send(webhook(hook.url), slackPayload, ['d1'], ctx({ signal: abort.signal }))).rejects.toBe(
      reason,
    );
  });
});
