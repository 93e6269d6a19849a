/**
 * Every Lambda handler of ours (the API, the dispatchers, the workers) runs each invocation through
 * lib/invocation.ts: its metrics are written (EMF lines on stdout) before it returns, and when it
 * throws; and each log line written meanwhile carries the invocation's request id and whether it
 * was the environment's cold start. Through the real handlers, against the emulator, dynalite and
 * local receivers, with the environment the stack gives them.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createDispatchHandler } from '../../functions/dispatch.ts';
import { createWorkerHandler } from '../../functions/worker.ts';
import { recordAction } from '../../lib/actions/events.ts';
import type { SlackWork } from '../../lib/actions/slack-work.ts';
import type { FunctionUrlHandler } from '../../lib/api/lambda.ts';
import { systemClock } from '../../lib/clock.ts';
import { INVOCATION, withInvocation } from '../../lib/invocation.ts';
import { createLogger } from '../../lib/log.ts';
import { EmfMetrics } from '../../lib/metrics.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { functionUrlEvent } from '../api/function-url.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from './lambda.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const receivers = useReceivers();

/** What the stream was given while `withEnvironment` holds it (its writes are spied on there). */
const written = (stream: NodeJS.WriteStream) =>
  vi
    .mocked(stream.write)
    .mock.calls.flatMap(([chunk]) => String(chunk).split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** EMF lines carrying the metric `name`. */
const emf = (lines: Record<string, unknown>[], name: string) =>
  lines.filter((l) => l._aws !== undefined && name in l);

const invocation = (id: string) => ({ ...context(), awsRequestId: id });

const SLACK = {
  signingSecret: { secret: 'slackSigning' },
  teamId: 'T0TEAM01',
  allowedUsers: ['U0ANA001'],
};

describe('the invocation wrapper', () => {
  it('flushes when the handler throws, rethrows its error, and marks the lines of each invocation', async () => {
    const out: string[] = [];
    const lines: Record<string, unknown>[] = [];
    const metrics = new EmfMetrics({ service: 'test', write: (line) => out.push(line) });
    const logger = createLogger({ write: (line) => lines.push(JSON.parse(line)) });
    const handler = withInvocation(
      async (fail: boolean, _context?: { awsRequestId?: string }) => {
        metrics.count('Things', 2);
        logger.info('working');
        if (fail) throw new Error('boom');
        return 'ok';
      },
      [metrics],
    );
    await expect(handler(true, { awsRequestId: 'req-1' })).rejects.toThrow('boom');
    expect(out.map((l) => JSON.parse(l))).toMatchObject([{ service: 'test', Things: 2 }]);
    expect(await handler(false, { awsRequestId: 'req-2' })).toBe('ok');
    expect(out).toHaveLength(2);
    logger.info('between invocations');
    expect(lines).toMatchObject([
      { message: 'working', awsRequestId: 'req-1', coldStart: true },
      { message: 'working', awsRequestId: 'req-2', coldStart: false },
      { message: 'between invocations' },
    ]);
    expect(lines[2]).not.toHaveProperty('awsRequestId');
    expect(lines[2]).not.toHaveProperty('coldStart');
  });
});

describe('each handler', () => {
  it('a worker with nothing to poll: the delivery pass it ran for a click is counted before it returns', async () => {
    const hook = await receivers();
    const answers = await receivers();
    const table = await db.table();
    const vars = await lambdaVariables({
      apiUrl: emu.url,
      dynamodbEndpoint: db.endpoint,
      table,
      config: {
        sources: { tenantEvents: { enabled: true, lookback: 'P30D' } },
        destinations: { siem: { type: 'webhook', url: hook.url, followUps: true } },
        routes: [{ name: 'all', to: ['siem'] }],
        actions: { slack: { ...SLACK, responseUrlPrefix: `${answers.url}/` } },
        upstream: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
      },
      extra: { LOG_LEVEL: 'info' },
    });
    const uid = (emu.running.emulator.dataset.tenant('acme').events[0]?.item.metadata.uid ?? '') as string;
    await withEnvironment(vars, async () => {
      const lines: string[] = [];
      const handler = await createWorkerHandler('events', { emfWrite: (line) => lines.push(line) });
      expect(handler[INVOCATION]).toBe(true);
      await handler({ Records: [sqsRecord({ kind: 'events', stream: 'tenant' })] }, invocation('poll-1'));
      lines.length = 0;
      const request = {
        type: 'ignore' as const,
        uids: [uid],
        by: 'slack:U0ANA001',
        id: 'slack:T0TEAM01:U0ANA001:9.9',
      };
      await recordAction(
        {
          actions: new ActionStore({ client: db.client, tableName: table, clock: systemClock }),
          clock: systemClock,
        },
        request,
      );
      const work: SlackWork = { kind: 'slack-action', request, responseUrl: `${answers.url}/a/1` };
      const stderr = vi.mocked(process.stderr.write);
      stderr.mockClear();
      expect(await handler({ Records: [sqsRecord(work)] }, invocation('click-1'))).toEqual({
        batchItemFailures: [],
      });
      // The follow-up went in this invocation, and its count with it.
      expect(hook.requests.map((r) => (r.json() as { kind: string }).kind)).toContain('action');
      expect(
        emf(
          lines.map((l) => JSON.parse(l)),
          'DeliveriesSent',
        ),
      ).toMatchObject([{ service: 'poll-events', destination: 'siem', DeliveriesSent: 1 }]);
      // Every line of the invocation says which it was, and that it was not the cold start.
      const logged = written(process.stderr);
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expect(line).toMatchObject({ awsRequestId: 'click-1', coldStart: false });
    });
  }, 30_000);

  it('the API: a Slack request refused for its signature is counted before the answer goes', async () => {
    const table = await db.table();
    const secrets = await lambdaVariables({
      apiUrl: emu.url,
      dynamodbEndpoint: db.endpoint,
      table,
      config: { slackSigning: 'a-signing-secret-for-tests', apiClients: {} },
    });
    const vars = {
      ...secrets,
      // The config file lambdaVariables wrote is the secret object here.
      SECRETS_FILE: secrets.ALERTS_CONFIG as string,
      SLACK_ACTIONS: JSON.stringify(SLACK),
      LOG_LEVEL: 'warn',
    };
    await withEnvironment(vars, async () => {
      vi.resetModules();
      const { handler } = (await import('../../functions/api.ts')) as { handler: FunctionUrlHandler };
      expect((handler as unknown as Record<symbol, unknown>)[INVOCATION]).toBe(true);
      const event: LambdaFunctionURLEvent = functionUrlEvent('POST', '/slack/interactions', {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)),
          'x-slack-signature': `v0=${'0'.repeat(64)}`,
        },
        body: 'payload=%7B%7D',
      });
      const stdout = vi.mocked(process.stdout.write);
      stdout.mockClear();
      const answer = await (
        handler as unknown as (e: LambdaFunctionURLEvent, c: object) => Promise<{ statusCode: number }>
      )(event, { awsRequestId: 'api-1' });
      expect(answer.statusCode).toBe(401);
      expect(emf(written(process.stdout), 'SlackRequestsRejected')).toMatchObject([
        { service: 'api', route: 'interactions', SlackRequestsRejected: 1 },
      ]);
      const refused = written(process.stderr).find((l) =>
        String(l.message).includes('claiming to be from Slack'),
      );
      expect(refused).toMatchObject({ awsRequestId: 'api-1', coldStart: true });
    });
  }, 30_000);

  it('a dispatcher: its lines carry the request id, the cold start only on the first', async () => {
    const hook = await receivers();
    const vars = await lambdaVariables({
      apiUrl: emu.url,
      dynamodbEndpoint: db.endpoint,
      table: await db.table(),
      config: {
        sources: { tenantEvents: { enabled: true } },
        destinations: { siem: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', to: ['siem'] }],
      },
      extra: { LOG_LEVEL: 'info' },
    });
    await withEnvironment(vars, async () => {
      const handler = await createDispatchHandler('events', { send: async () => [] });
      expect(handler[INVOCATION]).toBe(true);
      const stderr = vi.mocked(process.stderr.write);
      stderr.mockClear();
      await handler({}, { awsRequestId: 'd-1' });
      await handler({}, { awsRequestId: 'd-2' });
      const enqueued = written(process.stderr).filter((l) => String(l.message).includes('enqueued'));
      expect(enqueued).toMatchObject([
        { awsRequestId: 'd-1', coldStart: true },
        { awsRequestId: 'd-2', coldStart: false },
      ]);
    });
  });
});
