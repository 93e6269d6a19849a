/**
 * The worker Lambda's handler (functions/worker.ts): given stream messages as the SQS event source
 * delivers them, it polls those streams against the upstream and reports, as batch item failures,
 * the messages of the streams whose poll failed, and only those. A stream skipped for its lease,
 * stopped by the rate limit, paused by the quota reserve, or already polled since its message was
 * sent is no failure: SQS must delete its message, not offer it again and dead-letter it. The real
 * runtime, against the emulator and dynalite over HTTP, a real local receiver as the destination.
 */
import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { systemClock } from '../../lib/clock.ts';
import { QuotaStore } from '../../lib/state/quota.ts';
import { StreamStore } from '../../lib/state/streams.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from './lambda.ts';

// Six events a tenant, not 120: every test polls and delivers whole streams, and none needs more than a few.
const emu = useEmulator({ eventsPerTenant: 6 });
const db = useDynalite();
const receiver = useReceivers();
afterEach(() => emu.running.emulator.control.clearFaults());

/** A fresh table, and a config polling the tenant and both groups, every event to a local webhook. */
async function setup(options: { token?: string } = {}) {
  const hook: Receiver = await receiver({ status: 200, body: 'ok' });
  const table = await db.table();
  const vars = await lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table,
    token: options.token,
    config: {
      sources: {
        tenantEvents: { enabled: true, lookback: 'P7D' },
        identifierGroups: [
          { id: 101, lookback: 'P7D' },
          { id: 102, lookback: 'P7D' },
        ],
        credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 20 },
      },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
      // The real tiers would pace a test at four requests a second; the rules are the same.
      upstream: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
    },
  });
  return { vars, hook, table };
}

const message = (stream: string, options: Parameters<typeof sqsRecord>[1] = {}, kind = 'events') =>
  sqsRecord({ kind, stream }, options);
const ids = (records: SQSRecord[]) => records.map((r) => ({ itemIdentifier: r.messageId }));
/** Upstream requests for `endpoint` since `from` (the emulator's request log). */
const calls = (endpoint: string, from: number) =>
  emu.running.emulator.control.requests.slice(from).filter((r) => r.endpoint === endpoint);

describe('createWorkerHandler', () => {
  it('polls the streams of its messages, delivers, and reports no failure', async () => {
    const { vars, hook } = await setup();
    const lines: string[] = [];
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events', { emfWrite: (line) => lines.push(line) });
      return handler({ Records: [message('tenant'), message('group:101')] }, context());
    });
    expect(response).toEqual({ batchItemFailures: [] });
    // Both streams were polled (and the one not asked for was not), and their alerts were sent.
    expect(calls('tenantEvents', 0).length).toBeGreaterThan(0);
    expect(calls('identifierGroupEvents', 0).map((r) => r.path)).toEqual(
      calls('identifierGroupEvents', 0).map(() => expect.stringMatching(/\/101\//)),
    );
    expect(hook.requests.length).toBeGreaterThan(0);
    // Its metrics go out under the service the alarms watch.
    const services = new Set(lines.map((l) => (JSON.parse(l) as { service: string }).service));
    expect([...services]).toEqual(['poll-events']);
  }, 60_000);

  it('reports exactly the messages of the streams whose poll failed', async () => {
    const { vars, table } = await setup();
    const tenant = message('tenant');
    const group = message('group:101');
    const other = message('group:102');
    // The client's backoffs between the retries are taken on this clock, not waited out.
    const clock = skipClock();
    const from = emu.running.emulator.control.requests.length;
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events', { clock });
      // More 500s than the client has retries: both group streams fail, the tenant does not.
      emu.running.emulator.control.addFault({ endpoint: 'identifierGroupEvents', status: 500, times: 200 });
      return handler({ Records: [tenant, group, other] }, context());
    });
    expect(response.batchItemFailures).toEqual(ids([group, other]));
    // Each group stream's request was retried, backing off between its attempts.
    const tried = calls('identifierGroupEvents', from).map((r) => r.path);
    for (const id of [101, 102]) expect(tried.filter((p) => p.includes(`/${id}/`)).length).toBeGreaterThan(1);
    expect(clock.skipped()).toBeGreaterThan(0);
    const polled = await new StreamStore(db.client, table, systemClock).lastPolled([
      'tenant',
      'group:101',
      'group:102',
    ]);
    expect([...polled].map(([id, p]) => [id, p.result]).sort()).toEqual([
      ['group:101', 'failed'],
      ['group:102', 'failed'],
      ['tenant', 'done'],
    ]);
  }, 60_000);

  it('a message that is not a stream message of its kind is a failure (it ends in the dead-letter queue)', async () => {
    const { vars } = await setup();
    const broken = sqsRecord('{not json');
    const wrongKind = message('credentials:acme.test', {}, 'credentials');
    const noStream = sqsRecord({ kind: 'events' });
    const good = message('tenant');
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      return handler({ Records: [broken, wrongKind, noStream, good] }, context());
    });
    expect(response.batchItemFailures).toEqual(ids([broken, wrongKind, noStream]));
  }, 60_000);

  it('a stream another worker holds is skipped, not failed, and not polled', async () => {
    const { vars, table } = await setup();
    const streams = new StreamStore(db.client, table, systemClock);
    expect(await streams.acquire('group:101', 'another-worker')).toBeDefined();
    const from = emu.running.emulator.control.requests.length;
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      return handler({ Records: [message('group:101')] }, context());
    });
    expect(response).toEqual({ batchItemFailures: [] });
    expect(calls('identifierGroupEvents', from)).toEqual([]);
  }, 60_000);

  it('a stream stopped by the rate limit is not a failure: it resumes from its cursor next time', async () => {
    const { vars, table } = await setup();
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      // A 429 asking for a wait longer than the invocation has left.
      emu.running.emulator.control.addFault({
        endpoint: 'tenantEvents',
        status: 429,
        retryAfter: 3600,
        times: 20,
      });
      return handler({ Records: [message('tenant')] }, context());
    });
    expect(response).toEqual({ batchItemFailures: [] });
    // It was the rate limit that stopped it (the stream's own record says so), not a success.
    const polled = await new StreamStore(db.client, table, systemClock).lastPolled(['tenant']);
    expect(polled.get('tenant')?.result).toBe('rate_limited');
  }, 60_000);

  it('credential streams paused by the quota reserve are not failures, and spend no search', async () => {
    const { vars, table } = await setup();
    // The last reading, just now: 3 searches left, below the reserve of 100.
    await new QuotaStore(db.client, table).write({ remaining: 3, at: new Date().toISOString() });
    const from = emu.running.emulator.control.requests.length;
    const response = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('credentials');
      return handler({ Records: [message('credentials:acme.test', {}, 'credentials')] }, context());
    });
    expect(response).toEqual({ batchItemFailures: [] });
    expect(calls('globalCredentials', from)).toEqual([]);
  }, 60_000);

  it('a spent quota (403 QUOTA_EXCEEDED) pauses credential polling: no batch failure, a reading of 0 stored and published', async () => {
    const { vars, table } = await setup();
    emu.running.emulator.setQuotaRemaining(0);
    const lines: string[] = [];
    try {
      const records = [message('credentials:acme.test', {}, 'credentials')];
      const response = await withEnvironment(vars, async () => {
        const handler = await createWorkerHandler('credentials', { emfWrite: (line) => lines.push(line) });
        return handler({ Records: records }, context());
      });
      // Before: the 403 failed the stream, every run, and SQS dead-lettered the message.
      expect(response).toEqual({ batchItemFailures: [] });
      expect((await new QuotaStore(db.client, table).read())?.remaining).toBe(0);
      const published = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((m) => 'GlobalSearchQuotaRemaining' in m);
      expect(published.map((m) => m.GlobalSearchQuotaRemaining)).toContain(0);
      const polled = await new StreamStore(db.client, table, systemClock).lastPolled([
        'credentials:acme.test',
      ]);
      expect(polled.get('credentials:acme.test')?.result).toBe('paused');
    } finally {
      emu.running.emulator.setQuotaRemaining(10_000);
    }
  }, 60_000);

  it('a message whose stream was polled since it was sent is deleted unpolled; an older poll does not count', async () => {
    const { vars } = await setup();
    const sentBefore = Date.now() - 60_000;
    await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      await handler({ Records: [message('tenant')] }, context());
      const from = emu.running.emulator.control.requests.length;
      // Sent before that poll: the work it asks for is done.
      const stale = await handler({ Records: [message('tenant', { sentAt: sentBefore })] }, context());
      expect(stale).toEqual({ batchItemFailures: [] });
      expect(calls('tenantEvents', from)).toEqual([]);
      // Sent after it: polled again.
      const fresh = await handler({ Records: [message('tenant', { sentAt: Date.now() + 1 })] }, context());
      expect(fresh).toEqual({ batchItemFailures: [] });
      expect(calls('tenantEvents', from).length).toBeGreaterThan(0);
    });
  }, 60_000);

  it('a stream whose last poll failed is polled again by its retried message', async () => {
    const { vars } = await setup();
    // The client's backoffs between the retries are taken on this clock, not waited out.
    const clock = skipClock();
    await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events', { clock });
      const first = message('group:101', { sentAt: Date.now() - 1 });
      emu.running.emulator.control.addFault({ endpoint: 'identifierGroupEvents', status: 500, times: 200 });
      expect((await handler({ Records: [first] }, context())).batchItemFailures).toEqual(ids([first]));
      expect(clock.skipped()).toBeGreaterThan(0);
      emu.running.emulator.control.clearFaults();
      // SQS offers the same message again: its stream was polled since, but that poll failed.
      const from = emu.running.emulator.control.requests.length;
      const retried = { ...first, attributes: { ...first.attributes, ApproximateReceiveCount: '2' } };
      expect(await handler({ Records: [retried] }, context())).toEqual({ batchItemFailures: [] });
      expect(calls('identifierGroupEvents', from).length).toBeGreaterThan(0);
    });
  }, 60_000);

  it('credentials the upstream refuses fail the invocation, naming it, without the token', async () => {
    const token = 'not-a-real-token-7f3a';
    const { vars } = await setup({ token });
    const error = await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('events');
      return handler({ Records: [message('tenant')] }, context()).then(
        () => undefined,
        (e: unknown) => e,
      );
    });
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^the upstream rejected the credentials: /);
    expect((error as Error).message).not.toContain(token);
  }, 60_000);
});
