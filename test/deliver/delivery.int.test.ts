/**
 * Delivery against real local HTTP receivers: every answer a destination can give ends the
 * delivery in the right state; 429 waits are honoured; refusals are reported once; the Slack pace
 * holds; a slow destination holds up nobody; e-mail providers get their own payloads and headers.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { MAX_ATTEMPTS } from '../../lib/deliver/retry.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 6, credentials: 60 });
const db = useDynalite();
const receiver = useReceivers();

/** The demo tenant's events: all inside the 7-day lookback, so all of them are new to a fresh table. */
const events = () => emu.running.emulator.dataset.tenant('acme').events.length;

function eventsTo(destinations: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    sources: { tenantEvents: { lookback: 'P7D' } },
    destinations,
    routes: [{ name: 'all', match: {}, to: Object.keys(destinations).filter((d) => d !== 'ops') }],
    digest: { threshold: 100, maxItems: 20 },
    ...extra,
  };
}

describe('destination answers', () => {
  it('200 ok: every delivery is sent once', async () => {
    const slack = await receiver({ status: 200, body: 'ok' });
    const world = await makeWorld(
      emu,
      db,
      eventsTo({ slack: { type: 'slack', url: slack.url } }, { digest: { threshold: 2, maxItems: 20 } }),
    );
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(events());
    expect(slack.requests).toHaveLength(1); // over the threshold: one digest
    const records = await world.runtime.deliveries.list({ limit: 100 });
    expect(records.map((r) => r.status)).toEqual(Array(events()).fill('sent'));
    expect(world.metrics.get('DeliveriesSent')).toBe(events());
  }, 20_000);

  it('429 with Retry-After: retried after the delay it gave, never sooner', async () => {
    // The two seconds are waited on this clock, which the receiver stamps requests with too.
    const clock = skipClock();
    const hook = await receiver(undefined, { now: clock.now });
    hook.script({ status: 429, headers: { 'Retry-After': '2' }, body: 'slow down' });
    const world = await makeWorld(emu, db, eventsTo({ hook: { type: 'webhook', url: hook.url } }), {
      clock,
    });
    const first = await world.cycle('events');
    expect(first.delivery.retrying).toBeGreaterThan(0);
    const refusedAt = hook.requests[0]?.at ?? 0;
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
    expect(pending.length).toBeGreaterThan(0);
    for (const r of pending) {
      expect(r.attempts).toBe(0); // a 429 costs no attempt (rate-limit.test.ts)
      expect(Date.parse(r.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(refusedAt + 1_900);
    }
    const early = await world.deliver();
    expect(early.sent).toBe(0); // not due yet
    await clock.sleep(2_100);
    const later = await world.deliver();
    expect(later.sent).toBe(pending.length);
    // The same items carry the same Idempotency-Key on the retry, which came no sooner than asked.
    const key = hook.requests[0]?.headers['idempotency-key'];
    const retry = hook.requests.find((r, i) => i > 0 && r.headers['idempotency-key'] === key);
    expect(retry).toBeDefined();
    expect((retry?.at ?? 0) - refusedAt).toBeGreaterThanOrEqual(2_000);
  }, 20_000);

  it('500: retried with backoff, and dead after 8 attempts', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => now, sleep: systemClock.sleep };
    const hook = await receiver({ status: 500, body: 'rollup_error' });
    const world = await makeWorld(emu, db, eventsTo({ hook: { type: 'webhook', url: hook.url } }), { clock });
    await world.cycle('events');
    const delays: number[] = [];
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const [record] = await world.runtime.deliveries.list({
        status: 'pending',
        destinations: ['hook'],
        limit: 1,
      });
      expect(record?.attempts).toBe(attempt);
      const delay = Date.parse(record?.nextAttemptAt ?? '') - now;
      delays.push(delay);
      const step = Math.min(300_000, 1_000 * 2 ** (attempt - 1));
      expect(delay).toBeGreaterThanOrEqual(step / 2 - 5);
      expect(delay).toBeLessThanOrEqual(step + 5);
      now += 10 * 60_000;
      await world.deliver();
    }
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['hook'] });
    // One webhook body carried every item; all of them died together after the last attempt.
    expect(dead).toHaveLength(events());
    expect(dead.every((r) => r.attempts === MAX_ATTEMPTS)).toBe(true);
    expect(dead[0]?.lastError).toMatch(/HTTP 500/);
    expect(world.metrics.get('DeliveriesDead')).toBeGreaterThan(0);
    expect(delays[delays.length - 1]).toBeGreaterThan(delays[0] ?? 0);
  }, 30_000);

  it('400 invalid_payload: dead at once, never retried', async () => {
    const slack = await receiver({ status: 400, body: 'invalid_payload' });
    const world = await makeWorld(
      emu,
      db,
      eventsTo({ slack: { type: 'slack', url: slack.url } }, { digest: { threshold: 2, maxItems: 5 } }),
    );
    const summary = await world.cycle('events');
    expect(summary.delivery.dead).toBe(events());
    expect(slack.requests).toHaveLength(1); // one digest, refused
    await world.deliver();
    expect(slack.requests).toHaveLength(1);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['slack'] });
    expect(dead.every((r) => r.lastError?.includes('invalid_payload'))).toBe(true);
  }, 20_000);

  it('404 no_service: dead, and reported to operators once for many refusals', async () => {
    const revoked = await receiver({ status: 404, body: 'no_service' });
    const ops = await receiver({ status: 200, body: 'ok' });
    const world = await makeWorld(
      emu,
      db,
      eventsTo(
        { soc: { type: 'webhook', url: revoked.url }, ops: { type: 'webhook', url: ops.url } },
        { ops: { to: ['ops'] } },
      ),
    );
    const summary = await world.cycle('events', 30);
    expect(summary.delivery.dead).toBe(events());
    expect(revoked.requests.length).toBeGreaterThan(0);
    expect(ops.requests).toHaveLength(1);
    const notice = ops.requests[0]?.json() as { kind: string; title: string; message: string };
    expect(notice.kind).toBe('notice');
    expect(notice.title).toContain('soc');
    expect(notice.message).toContain('404');
    expect(world.metrics.get('DestinationRefused')).toBe(1);
    expect(world.logs.filter((l) => l.includes('refuses permanently'))).toHaveLength(1);
    // A later run that meets the same refusal does not report it again.
    emu.running.emulator.dataset.appendEvents(1001, 1);
    await world.cycle('events');
    expect(ops.requests).toHaveLength(1);
  }, 30_000);

  it('no answer: the request times out and the delivery is retried later', async () => {
    const silent = await receiver({ hang: true });
    const world = await makeWorld(emu, db, eventsTo({ hook: { type: 'webhook', url: silent.url } }));
    world.runtime.deliver.sendTimeoutMs = 300;
    const summary = await world.cycle('events');
    expect(summary.delivery.retrying).toBe(events());
    const pending = await world.runtime.deliveries.list({ status: 'pending', destinations: ['hook'] });
    expect(pending.every((r) => r.attempts === 1 && /no answer within 300 ms/.test(r.lastError ?? ''))).toBe(
      true,
    );
  }, 20_000);
});

describe('pace and isolation', () => {
  it('never sends more than one message a second to a Slack webhook', async () => {
    // The pace is taken on this clock, not waited out; the receiver stamps requests with it.
    const clock = skipClock();
    const slack = await receiver({ status: 200, body: 'ok' }, { now: clock.now });
    const world = await makeWorld(emu, db, eventsTo({ slack: { type: 'slack', url: slack.url } }), {
      clock,
    });
    // Three events, each its own message (the digest threshold is 100).
    const chosen = new Set(
      emu.running.emulator.dataset
        .tenant('acme')
        .events.slice(0, 3)
        .map((e) => e.item.metadata.uid),
    );
    world.runtime.poll.route = (alert) => ({
      destinations: new Map(chosen.has(alert.key) ? [['slack', ['all']]] : []),
    });
    await world.cycle('events');
    expect(slack.requests).toHaveLength(3);
    const gaps = slack.requests.slice(1).map((r, i) => r.at - (slack.requests[i]?.at ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(990);
  }, 30_000);

  it('a slow destination holds up no other', async () => {
    const slow = await receiver({ hang: true });
    const fast = await receiver({ status: 200, body: 'ok' });
    const world = await makeWorld(
      emu,
      db,
      eventsTo({ slow: { type: 'webhook', url: slow.url }, fast: { type: 'webhook', url: fast.url } }),
    );
    world.runtime.deliver.sendTimeoutMs = 1_500;
    const started = Date.now();
    await world.cycle('events');
    expect(fast.requests.length).toBeGreaterThan(0);
    expect((fast.requests[0]?.at ?? Number.POSITIVE_INFINITY) - started).toBeLessThan(1_400);
  }, 20_000);
});

describe('payloads and headers', () => {
  it('e-mail: generic, SendGrid and Postmark each get their own shape and auth header', async () => {
    const generic = await receiver({ status: 202, body: '' });
    const sendgrid = await receiver({ status: 202, body: '' });
    const postmark = await receiver({ status: 200, body: '{"ErrorCode":0,"Message":"OK"}' });
    const email = (provider: string, url: string, apiKey?: unknown) => ({
      type: 'email',
      provider,
      url: `${url}/send`,
      ...(apiKey ? { apiKey } : {}),
      from: 'alerts@example.com',
      to: ['soc@example.com', 'ciso@example.com'],
    });
    const world = await makeWorld(
      emu,
      db,
      eventsTo(
        {
          generic: email('generic', generic.url, { secret: 'genericKey' }),
          sendgrid: email('sendgrid', sendgrid.url, { secret: 'sendgridKey' }),
          postmark: email('postmark', postmark.url, { secret: 'postmarkKey' }),
        },
        { digest: { threshold: 2, maxItems: 10 } },
      ),
      { secrets: { genericKey: 'gen-key-123', sendgridKey: 'SG.key-456', postmarkKey: 'pm-token-789' } },
    );
    const summary = await world.cycle('events');
    expect(summary.delivery.sent).toBe(events() * 3);

    const g = generic.requests[0];
    expect(g?.headers.authorization).toBe('Bearer gen-key-123');
    const gBody = g?.json() as Record<string, unknown>;
    expect(Object.keys(gBody).sort()).toEqual(['from', 'html', 'subject', 'text', 'to']);
    expect(gBody.to).toEqual(['soc@example.com', 'ciso@example.com']);
    expect(gBody.subject).toContain(String(events()));

    const s = sendgrid.requests[0];
    expect(s?.headers.authorization).toBe('Bearer SG.key-456');
    const sBody = s?.json() as {
      personalizations: { to: { email: string }[] }[];
      from: { email: string };
      subject: string;
      content: { type: string; value: string }[];
    };
    expect(sBody.personalizations[0]?.to).toEqual([
      { email: 'soc@example.com' },
      { email: 'ciso@example.com' },
    ]);
    expect(sBody.from).toEqual({ email: 'alerts@example.com' });
    expect(sBody.content.map((c) => c.type)).toEqual(['text/plain', 'text/html']);

    const p = postmark.requests[0];
    expect(p?.headers['x-postmark-server-token']).toBe('pm-token-789');
    expect(p?.headers.authorization).toBeUndefined();
    const pBody = p?.json() as Record<string, string>;
    expect(pBody.From).toBe('alerts@example.com');
    expect(pBody.To).toBe('soc@example.com, ciso@example.com');
    expect(pBody.MessageStream).toBe('outbound');
    expect(typeof pBody.TextBody).toBe('string');
    expect(typeof pBody.HtmlBody).toBe('string');
  }, 20_000);

  it('e-mail refusals follow each provider: SendGrid 413 and Postmark 422 are final, 503 is retried', async () => {
    const sendgrid = await receiver({ status: 413, body: 'too large' });
    const postmark = await receiver({
      status: 422,
      body: '{"ErrorCode":300,"Message":"Invalid email request"}',
    });
    const flaky = await receiver({ status: 503, body: 'unavailable' });
    const email = (provider: string, url: string) => ({
      type: 'email',
      provider,
      url,
      apiKey: 'k3y-value',
      from: 'alerts@example.com',
      to: ['soc@example.com'],
    });
    const world = await makeWorld(
      emu,
      db,
      eventsTo(
        {
          sg: email('sendgrid', sendgrid.url),
          pm: email('postmark', postmark.url),
          flaky: email('postmark', flaky.url),
        },
        { digest: { threshold: 2, maxItems: 10 } },
      ),
    );
    await world.cycle('events');
    const status = async (d: string) =>
      (await world.runtime.deliveries.list({ limit: 100 }))
        .filter((r) => r.destination === d)
        .map((r) => r.status);
    expect(new Set(await status('sg'))).toEqual(new Set(['dead']));
    expect(new Set(await status('pm'))).toEqual(new Set(['dead']));
    expect(new Set(await status('flaky'))).toEqual(new Set(['pending']));
  }, 20_000);

  it('webhook: exactly the documented body, signed with HMAC-SHA256 over "<timestamp>.<body>"', async () => {
    const hook = await receiver();
    const world = await makeWorld(
      emu,
      db,
      eventsTo({ siem: { type: 'webhook', url: hook.url, signingSecret: { secret: 'siemKey' } } }),
      { secrets: { siemKey: 'whsec-test-secret' } },
    );
    await world.cycle('events');
    const req = hook.requests[0];
    expect(req?.headers['content-type']).toBe('application/json');
    const body = req?.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['destination', 'items', 'kind', 'routes', 'sentAt', 'version']);
    expect(body.version).toBe(1);
    expect(body.kind).toBe('events');
    expect(body.destination).toBe('siem');
    expect(body.routes).toEqual(['all']);
    expect((body.items as unknown[]).length).toBe(events());
    const ts = req?.headers['x-signature-timestamp'] ?? '';
    expect(ts).toMatch(/^\d+$/);
    const expected = `sha256=${createHmac('sha256', 'whsec-test-secret').update(`${ts}.${req?.body}`).digest('hex')}`;
    expect(req?.headers['x-signature-256']).toBe(expected);
    expect(req?.headers['idempotency-key']).toMatch(/^[0-9a-f]{16,}$/);
  }, 20_000);
});

describe('an item that cannot be rendered', () => {
  it('dies alone, recorded with its error; the rest of its batch is sent', async () => {
    const slack = await receiver({ status: 200, body: 'ok' });
    const world = await makeWorld(
      emu,
      db,
      eventsTo({ slack: { type: 'slack', url: slack.url } }, { digest: { threshold: 2, maxItems: 20 } }),
    );
    const poison = emu.running.emulator.dataset.tenant('acme').events[0]?.item.metadata.uid;
    const render = world.runtime.deliver.render;
    world.runtime.deliver.render = (destination, alerts, now) => {
      if (alerts.some((a) => a.key === poison)) throw new Error('template broke on this item');
      return render(destination, alerts, now);
    };
    const summary = await world.cycle('events', 30);
    expect(summary.delivery.sent).toBe(events() - 1);
    const dead = await world.runtime.deliveries.list({ status: 'dead', destinations: ['slack'] });
    expect(dead.map((r) => r.key)).toEqual([poison]);
    expect(dead[0]?.lastError).toBe('render failed: template broke on this item');
    expect(world.metrics.get('DeliveriesDead')).toBe(1);
    // The others still went as one digest, and the poison is never retried.
    expect(slack.requests).toHaveLength(1);
    await world.deliver();
    expect(slack.requests).toHaveLength(1);
  }, 30_000);
});
