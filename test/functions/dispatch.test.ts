/**
 * The dispatcher Lambda's handler (functions/dispatch.ts): one SQS message per stream of its kind,
 * `{kind, stream}`, in turn order (never polled first, in config order; then the one polled least
 * recently), ten to a batch, to the queue the stack names; what SQS refuses is tried once more,
 * and a refusal that stays fails the invocation. The real runtime against the emulator and
 * dynalite over HTTP; the SQS client is replaced by one that records what would be sent. The
 * worker handler does the polling that sets the turn order, as it would on AWS.
 */
import { describe, expect, it } from 'vitest';
import { createDispatchHandler, type QueueEntry, type RefusedEntry } from '../../functions/dispatch.ts';
import { createWorkerHandler } from '../../functions/worker.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { context, lambdaVariables, QUEUE_URL, sqsRecord, withEnvironment } from './lambda.ts';

// A few events a tenant, not 120: the worker's polls here only set the turn order.
const emu = useEmulator({ eventsPerTenant: 6, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const receiver = useReceivers();

interface Sent {
  queueUrl: string;
  entries: QueueEntry[];
}

/** A sender that records every batch, refusing the entries `refuse` picks (once each by default). */
function recorder(refuse: (entry: QueueEntry, attempt: number) => boolean = () => false) {
  const sent: Sent[] = [];
  const attempts = new Map<string, number>();
  const send = async (queueUrl: string, entries: QueueEntry[]): Promise<RefusedEntry[]> => {
    sent.push({ queueUrl, entries });
    return entries
      .filter((e) => {
        const attempt = (attempts.get(e.MessageBody) ?? 0) + 1;
        attempts.set(e.MessageBody, attempt);
        return refuse(e, attempt);
      })
      .map((e) => ({ Id: e.Id, code: 'InternalError', message: 'try again' }));
  };
  return { sent, send };
}

const bodies = (sent: Sent[]) => sent.flatMap((b) => b.entries.map((e) => JSON.parse(e.MessageBody)));

async function variables(groups: number[]) {
  const hook = await receiver({ status: 200, body: 'ok' });
  return lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table: await db.table(),
    config: {
      sources: {
        tenantEvents: { enabled: true, lookback: 'P7D' },
        identifierGroups: groups.map((id) => ({ id, lookback: 'P7D' })),
        credentials: { domains: ['acme.test', 'example.org'], lookback: 'P7D' },
      },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
      upstream: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
    },
  });
}

describe('createDispatchHandler', () => {
  it('enqueues one message per stream of its kind, in turn order: never polled first, then least recently polled', async () => {
    const vars = await variables([101, 102, 103]);
    await withEnvironment(vars, async () => {
      const first = recorder();
      const dispatch = await createDispatchHandler('events', { send: first.send });
      // Nothing polled yet: the config's order.
      expect(await dispatch()).toEqual({
        kind: 'events',
        streams: ['tenant', 'group:101', 'group:102', 'group:103'],
        batches: 1,
      });
      expect(first.sent.map((b) => b.queueUrl)).toEqual([QUEUE_URL]);
      expect(bodies(first.sent)).toEqual([
        { kind: 'events', stream: 'tenant' },
        { kind: 'events', stream: 'group:101' },
        { kind: 'events', stream: 'group:102' },
        { kind: 'events', stream: 'group:103' },
      ]);

      // A worker polls group:102, then tenant: those two go to the back, the one polled first ahead.
      const work = await createWorkerHandler('events');
      for (const stream of ['group:102', 'tenant'])
        expect(await work({ Records: [sqsRecord({ kind: 'events', stream })] }, context())).toEqual({
          batchItemFailures: [],
        });
      const second = recorder();
      const again = await createDispatchHandler('events', { send: second.send });
      await again();
      expect(bodies(second.sent).map((b) => b.stream)).toEqual([
        'group:101',
        'group:103',
        'group:102',
        'tenant',
      ]);
    });
  }, 60_000);

  it('sends ten to a batch, in order, each entry with an id unique in its batch', async () => {
    const groups = Array.from({ length: 23 }, (_, i) => 1000 + i);
    await withEnvironment(await variables(groups), async () => {
      const { sent, send } = recorder();
      const result = await (await createDispatchHandler('events', { send }))();
      expect(sent.map((b) => b.entries.length)).toEqual([10, 10, 4]);
      expect(result.batches).toBe(3);
      expect(bodies(sent).map((b) => b.stream)).toEqual(['tenant', ...groups.map((g) => `group:${g}`)]);
      for (const batch of sent)
        expect(new Set(batch.entries.map((e) => e.Id)).size).toBe(batch.entries.length);
    });
  }, 60_000);

  it('credentials: one message per configured domain, kind credentials', async () => {
    await withEnvironment(await variables([101]), async () => {
      const { sent, send } = recorder();
      await (await createDispatchHandler('credentials', { send }))();
      expect(bodies(sent)).toEqual([
        { kind: 'credentials', stream: 'credentials:acme.test' },
        { kind: 'credentials', stream: 'credentials:example.org' },
      ]);
    });
  }, 60_000);

  it('tries the entries SQS refused once more, and fails the invocation when it refuses them again', async () => {
    await withEnvironment(await variables([101, 102]), async () => {
      const group = (e: QueueEntry) => e.MessageBody.includes('group:101');
      const once = recorder((e, attempt) => group(e) && attempt === 1);
      await (await createDispatchHandler('events', { send: once.send }))();
      // The second call carries only the refused entry.
      expect(once.sent.map((b) => b.entries.map((e) => JSON.parse(e.MessageBody).stream))).toEqual([
        ['tenant', 'group:101', 'group:102'],
        ['group:101'],
      ]);

      const always = recorder(group);
      const dispatch = await createDispatchHandler('events', { send: always.send });
      await expect(dispatch()).rejects.toThrow(
        /^SQS refused 1 of 3 stream messages twice \(InternalError: try again\); those streams wait for the next dispatch$/,
      );
    });
  }, 60_000);

  it('a missing STREAM_QUEUE_URL fails the cold start, naming it', async () => {
    const vars = await variables([101]);
    vars.STREAM_QUEUE_URL = '';
    await withEnvironment(vars, async () => {
      await expect(createDispatchHandler('events', { send: recorder().send })).rejects.toThrow(
        /dispatch-events cannot start: STREAM_QUEUE_URL must be the URL of the events stream queue/,
      );
    });
  }, 60_000);
});
