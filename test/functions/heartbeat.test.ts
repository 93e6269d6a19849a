/**
 * The heartbeat on the AWS path (docs/configuration.md), as the local runtime runs the Lambda
 * handlers: a dispatcher (its SQS sends recorded) and workers given its messages, against the
 * emulator and dynalite over HTTP and a real heartbeat receiver. A dispatch and its jobs are the
 * cycle: the first job pings the start, success goes out only once the last job has ended, once,
 * even with a job delivered twice; a job that failed makes the dispatch ping its failure with what
 * failed; a dispatch whose jobs never all end pings nothing more than its start.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDispatchHandler, type QueueEntry } from '../../functions/dispatch.ts';
import { createWorkerHandler } from '../../functions/worker.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type HeartbeatReceiver, startHeartbeat } from '../helpers/heartbeat.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from './lambda.ts';

const emu = useEmulator({ eventsPerTenant: 6, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const receiver = useReceivers();
const open: HeartbeatReceiver[] = [];
afterEach(async () => {
  emu.running.emulator.control.clearFaults();
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function setUp() {
  const beat = await startHeartbeat();
  open.push(beat);
  const hook = await receiver({ status: 200, body: 'ok' });
  const vars = await lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table: await db.table(),
    config: {
      sources: {
        tenantEvents: { enabled: true, lookback: 'P7D' },
        identifierGroups: [
          { id: 101, lookback: 'P7D' },
          { id: 102, lookback: 'P7D' },
        ],
      },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
      upstream: { requestsPerSecond: 100, searchRequestsPerSecond: 50 },
      heartbeat: { events: beat.url },
    },
  });
  return { beat, vars };
}

/** Dispatches once; the jobs as SQS would deliver them (a record each). */
async function dispatchOnce() {
  const entries: QueueEntry[] = [];
  const dispatch = await createDispatchHandler('events', {
    send: async (_url, batch) => {
      entries.push(...batch);
      return [];
    },
  });
  await dispatch();
  return entries.map((e) => JSON.parse(e.MessageBody) as { stream: string; dispatch: string; job: number });
}

const kinds = (beat: HeartbeatReceiver) => beat.pings.map((p) => p.kind);

describe('the heartbeat of a dispatch', () => {
  it('start with the first job, success only after the last, once, a job delivered twice counted once', async () => {
    const { beat, vars } = await setUp();
    await withEnvironment(vars, async () => {
      const jobs = await dispatchOnce();
      expect(jobs.map((j) => j.job)).toEqual([0, 1, 2]);
      expect(new Set(jobs.map((j) => j.dispatch)).size).toBe(1);
      const worker = await createWorkerHandler('events');
      const run = (...which: number[]) =>
        worker({ Records: which.map((i) => sqsRecord({ kind: 'events', ...jobs[i] })) }, context());
      await run(0, 1);
      expect(kinds(beat)).toEqual(['start']);
      // SQS delivers job 1 again: it counts for nothing, and the dispatch is not over.
      await run(1);
      expect(kinds(beat)).toEqual(['start']);
      await run(2);
      expect(kinds(beat)).toEqual(['start', 'success']);
      // The last job again: nothing more.
      await run(2);
      expect(kinds(beat)).toEqual(['start', 'success']);
    });
  });

  it('a job that failed: the dispatch pings its failure, saying which stream and why', async () => {
    const { beat, vars } = await setUp();
    await withEnvironment(vars, async () => {
      const jobs = await dispatchOnce();
      const worker = await createWorkerHandler('events');
      emu.running.emulator.control.addFault({ endpoint: 'identifierGroupEvents', status: 400, times: 1 });
      const records = jobs.map((j) => sqsRecord({ kind: 'events', ...j }));
      const out = await worker({ Records: records }, context());
      expect(out.batchItemFailures).toHaveLength(1);
      expect(beat.pings.map((p) => `${p.method} ${p.kind}`)).toEqual(['GET start', 'POST fail']);
      expect(beat.pings[1]?.body).toMatch(
        /^poll events: 1 of the dispatch's jobs did not end well\ngroup:10[12]: failed \(bad_request: /,
      );
      // SQS offers the failed job again and it succeeds: the dispatch was over; nothing more.
      const failed = records.find((r) => r.messageId === out.batchItemFailures[0]?.itemIdentifier);
      await worker({ Records: [sqsRecord(JSON.parse(failed?.body ?? '{}'))] }, context());
      expect(kinds(beat)).toEqual(['start', 'fail']);
    });
  });

  it('jobs that never all end: no success, so the service’s grace time raises the alarm', async () => {
    const { beat, vars } = await setUp();
    await withEnvironment(vars, async () => {
      const jobs = await dispatchOnce();
      const worker = await createWorkerHandler('events');
      await worker({ Records: jobs.slice(0, 2).map((j) => sqsRecord({ kind: 'events', ...j })) }, context());
      expect(kinds(beat)).toEqual(['start']);
    });
  });
});
