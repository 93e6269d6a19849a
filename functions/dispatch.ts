/**
 * What the two dispatcher functions share (docs/architecture.md: concurrent runs share the
 * work): on each scheduled run, list the streams of one kind in turn, the one polled least
 * recently first (lib/poll/dispatch.ts), and enqueue one SQS message per stream, `{kind, stream}`,
 * ten to a batch, in that order. The workers (functions/worker.ts) take them from there.
 *
 * The dispatcher polls nothing: it makes no upstream request, so it takes no turn of the shared
 * rate governor, and its only table read is the streams' last-polled times. So it loads the config
 * and the stream store only (lib/poll/turn.ts): no upstream client, destinations or renderers, no
 * secrets. With a heartbeat it also writes the dispatch (how many jobs), and numbers each job: the
 * workers ping the heartbeat (state/heartbeat.ts).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { systemClock } from '../lib/clock.ts';
import { readEnvironment } from '../lib/env.ts';
import { ConfigError } from '../lib/errors.ts';
import { type InvocationContext, withInvocation } from '../lib/invocation.ts';
import { createLogger, startFailure } from '../lib/log.ts';
import type { PollKind } from '../lib/poll/streams.ts';
import { dispatchStreams, type LastPolled, type StreamJob } from '../lib/poll/turn.ts';
import type { AlertsConfig } from '../lib/rules/config.ts';
import { loadAlertsConfig } from '../lib/rules/source.ts';
import { syncedClock } from '../lib/state/clock-sync.ts';
import { DispatchStore } from '../lib/state/heartbeat.ts';
import { StreamStore } from '../lib/state/streams.ts';
import { createDynamoClient, ensureTable } from '../lib/state/table.ts';

/** SQS takes at most ten messages in one SendMessageBatch. */
export const SQS_BATCH = 10;

export interface QueueEntry {
  /** Unique within its batch. */
  Id: string;
  /** JSON of a StreamJob. */
  MessageBody: string;
}

export interface RefusedEntry {
  Id: string;
  code: string;
  message: string;
}

/** Sends one batch to `queueUrl`; resolves with the entries SQS refused (none on full success). */
export type SendBatch = (queueUrl: string, entries: QueueEntry[]) => Promise<RefusedEntry[]>;

export interface DispatchResult {
  kind: PollKind;
  /** The streams enqueued, in the order they were sent. */
  streams: string[];
  batches: number;
}

export interface DispatchOptions {
  /** Sends the batches; SQS by default. Tests capture what would be sent instead. */
  send?: SendBatch;
}

/**
 * The SQS client, loaded with `require` for the reason lib/state/sdk.ts gives (its CommonJS build
 * loads in about half the time of the ES module build, on every cold start); the runtime provides
 * the package, so it is not in the bundle.
 */
function sqsSender(): SendBatch {
  type Sqs = typeof import('@aws-sdk/client-sqs');
  const sqs = createRequire(import.meta.url)('@aws-sdk/client-sqs') as Sqs;
  const client = new sqs.SQSClient({});
  return async (queueUrl, entries) => {
    const out = await client.send(new sqs.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    return (out.Failed ?? []).map((f) => ({
      Id: f.Id ?? '',
      code: f.Code ?? 'unknown',
      message: f.Message ?? '',
    }));
  };
}

/** Sends `entries`, trying the refused ones once more (SQS refuses an entry now and then under load). */
async function sendAll(send: SendBatch, queueUrl: string, entries: QueueEntry[]): Promise<void> {
  let refused = await send(queueUrl, entries);
  if (refused.length > 0) {
    const again = new Set(refused.map((r) => r.Id));
    refused = await send(
      queueUrl,
      entries.filter((e) => again.has(e.Id)),
    );
  }
  if (refused.length > 0) {
    const first = refused[0] as RefusedEntry;
    throw new Error(
      `SQS refused ${refused.length} of ${entries.length} stream messages twice (${first.code}: ${first.message}); those streams wait for the next dispatch`,
    );
  }
}

export async function createDispatchHandler(kind: PollKind, options: DispatchOptions = {}) {
  const name = `dispatch-${kind}`;
  let logger = createLogger({ name });
  let config: AlertsConfig;
  let configSource: string;
  let store: LastPolled;
  let dispatches: DispatchStore;
  let queueUrl: string;
  let send: SendBatch;
  try {
    const env = readEnvironment();
    logger = createLogger({ level: env.logLevel, name });
    queueUrl = process.env.STREAM_QUEUE_URL?.trim() ?? '';
    if (!/^https:\/\//.test(queueUrl))
      throw new ConfigError(
        `STREAM_QUEUE_URL must be the URL of the ${kind} stream queue, got ${JSON.stringify(queueUrl)}`,
      );
    // The config tells the streams, the table when each was last polled.
    ({ config, source: configSource } = await loadAlertsConfig(env, (text) =>
      logger.warn(`config: ${text}`),
    ));
    const dynamo = createDynamoClient({ endpoint: env.dynamodbEndpoint });
    if (env.dynamodbEndpoint) await ensureTable(dynamo, env.tableName);
    store = new StreamStore(dynamo, env.tableName, syncedClock(systemClock, dynamo));
    dispatches = new DispatchStore(dynamo, env.tableName);
    send = options.send ?? sqsSender();
  } catch (error) {
    throw startFailure(logger, name, error);
  }
  logger.info(`${name} ready`, { config: configSource });
  const invoke = async (_event?: unknown, _context?: InvocationContext): Promise<DispatchResult> => {
    const jobs: StreamJob[] = await dispatchStreams({ config, streams: store }, kind);
    // With a heartbeat, this dispatch and its jobs are the cycle (state/heartbeat.ts): the workers
    // ping when its last job ends. Written before any job goes out.
    let dispatch: string | undefined;
    if (config.heartbeat?.[kind] !== undefined && jobs.length) {
      dispatch = `${new Date().toISOString()}-${randomBytes(4).toString('hex')}`;
      await dispatches.open(kind, dispatch, jobs.length, Date.now());
    }
    let batches = 0;
    // One batch after the other, so the queue receives the streams in turn order (a standard
    // queue keeps roughly to it, and the workers take the longest-waiting streams first).
    for (let i = 0; i < jobs.length; i += SQS_BATCH) {
      const entries = jobs.slice(i, i + SQS_BATCH).map((job, j) => ({
        Id: String(i + j),
        MessageBody: JSON.stringify({
          kind: job.kind,
          stream: job.stream,
          ...(dispatch ? { dispatch, job: i + j } : {}),
        }),
      }));
      await sendAll(send, queueUrl, entries);
      batches += 1;
    }
    const streams = jobs.map((j) => j.stream);
    logger.info(`${name} enqueued ${streams.length} streams`, { streams, batches });
    return { kind, streams, batches };
  };
  // No metrics of its own; its log lines carry the invocation's request id (lib/invocation.ts).
  return withInvocation(invoke, []);
}
