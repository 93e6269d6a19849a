/**
 * `Retry-After` as destinations and the upstream send it, absurd values included: no header can
 * stop a pass, the delivery stream or the upstream client, and every wait it asks for is bounded
 * by an hour. Real dynalite, real local receivers.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS } from '../../lib/deliver/retry.ts';
import { staticToken } from '../../lib/upstream/auth.ts';
import { UpstreamHttp } from '../../lib/upstream/http.ts';
import { parseRetryAfter } from '../../lib/upstream/wire.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { deliveryWorld } from './seed.ts';

const db = useDynalite();
const receiver = useReceivers();

const HOUR = 3_600_000;

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  it.each([
    ['30', 30_000],
    ['0', 0],
    ['1.5', 1_500],
    ['7200', HOUR], // honoured up to an hour
    ['Sat, 21 Nov 2026 12:00:45 GMT', 45_000],
    ['Sat, 21 Nov 2026 11:00:00 GMT', 0], // a date already past: no wait
    ['Sat, 21 Nov 2026 18:00:00 GMT', HOUR],
  ])('%j is a wait of %d ms', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });

  it.each([
    ['9999999999999'], // 13 digits: new Date(now + it) is not a date at all
    ['1'.repeat(400)], // Number() says Infinity
    ['1767225600'], // an epoch timestamp written where seconds belong: 56 years
    ['Fri, 31 Dec 9999 23:59:59 GMT'],
    ['soon'],
    ['-5'],
    [''],
    [null],
  ])('%j is no Retry-After at all (the caller backs off as usual)', (header) => {
    expect(parseRetryAfter(header, now)).toBeUndefined();
  });
});

describe('a destination answering an absurd Retry-After', () => {
  for (const [status, header] of [
    [429, '9999999999999'],
    [503, '9999999999999'],
    [429, '99999999999999999999999'],
  ] as const) {
    it(`${status} with Retry-After ${header}: an ordinary retry, nothing stops`, async () => {
      const hook = await receiver({ status: 200, body: 'ok' });
      hook.script({ status, headers: { 'Retry-After': header }, body: 'no' });
      const world = await deliveryWorld(db, {
        destinations: { hook: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', match: {}, to: ['hook'] }],
      });
      world.runtime.deliver.random = () => 0.5;
      await world.seed('hook', 3);
      const before = Date.now();
      const summary = await world.pass();
      // Before the fix: RangeError from toISOString, the destination 'failed', nothing recorded.
      expect(summary.destinations[0]?.status).not.toBe('failed');
      const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
      expect(pending).toHaveLength(3);
      for (const r of pending) {
        const wait = Date.parse(r.nextAttemptAt ?? '') - before;
        // The backoff's first step (1 s, jitter 0.5: 750 ms), far from any hour.
        expect(wait).toBeGreaterThanOrEqual(700);
        expect(wait).toBeLessThan(5_000);
        expect(r.lastError).toContain(String(status));
      }
    }, 20_000);
  }

  it('a Retry-After of two hours is honoured for one hour, no more', async () => {
    const hook = await receiver();
    hook.script({ status: 503, headers: { 'Retry-After': '7200' }, body: 'maintenance' });
    const world = await deliveryWorld(db, {
      destinations: { hook: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', match: {}, to: ['hook'] }],
    });
    await world.seed('hook', 2);
    const before = Date.now();
    await world.pass();
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
    expect(pending).toHaveLength(2);
    for (const r of pending) {
      const at = Date.parse(r.nextAttemptAt ?? '');
      expect(at - before).toBeGreaterThanOrEqual(MAX_DELAY_MS - 1_000);
      expect(at - Date.now()).toBeLessThanOrEqual(MAX_DELAY_MS);
    }
  }, 20_000);
});

describe('5xx with Retry-After', () => {
  it('503 Retry-After: 120 waits the 120 s it asked for, not the backoff', async () => {
    const clock = fakeClock();
    const hook = await receiver();
    hook.script({ status: 503, headers: { 'Retry-After': '120' }, body: 'busy' });
    const world = await deliveryWorld(
      db,
      {
        destinations: { hook: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', match: {}, to: ['hook'] }],
      },
      { clock },
    );
    await world.seed('hook', 2);
    const start = clock.now();
    await world.pass();
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
    expect(pending.map((r) => Date.parse(r.nextAttemptAt ?? '') - start)).toEqual([120_000, 120_000]);
    // A 5xx is a failed attempt all the same (a message that breaks the receiver must end).
    expect(pending.every((r) => r.attempts === 1)).toBe(true);
    clock.advance(119_000);
    await world.pass();
    expect(hook.requests).toHaveLength(1);
    clock.advance(1_000);
    const later = await world.pass();
    expect(later.sent).toBe(2);
    expect(hook.requests).toHaveLength(2);
  }, 20_000);
});

describe('the upstream client', () => {
  it('waits the backoff, not forever (nor not at all), after a 429 with an absurd Retry-After', async () => {
    const json = { 'Content-Type': 'application/json' };
    const upstream = await receiver({ status: 200, headers: json, body: '{"ok":true}' });
    upstream.script({
      status: 429,
      headers: { 'Retry-After': '9999999999999', ...json },
      body: '{"error":"slow down"}',
    });
    const waits: number[] = [];
    const clock = { now: () => Date.now(), sleep: async (ms: number) => void waits.push(ms) };
    const http = new UpstreamHttp({
      baseUrl: upstream.url,
      auth: staticToken('t0ken'),
      clock,
      rateLimitWaitMs: 10_000,
    });
    // No deadline: the wait alone decides. 1e16 ms overflowed setTimeout and retried at once.
    const out = await http.request({ endpoint: 'test', method: 'GET', path: '/x' });
    expect(out.status).toBe(200);
    expect(waits).toEqual([10_000]);
    expect(upstream.requests).toHaveLength(2);
  });
});
