/**
 * What the two worker functions share (docs/architecture.md): an SQS event source hands a worker
 * stream messages (`{kind, stream}`, from functions/dispatch.ts); it polls those streams within the
 * invocation's remaining time (lib/poll/dispatch.ts workStreams: each stream its share, then one
 * delivery pass) and reports the messages of the streams whose poll failed as batch item failures,
 * so SQS offers only those again and, after the queue's maxReceiveCount, moves them to the
 * dead-letter queue.
 *
 * Not failures, so their messages are deleted: a stream skipped because another worker holds its
 * lease, stopped by the shared rate or its time share (it resumes from its cursor), paused by the
 * quota reserve, no longer in the config, or already polled since its message was sent (below).
 *
 * Already polled. Each dispatch enqueues every stream, so when the workers fall behind, or a failed
 * message comes back after its visibility timeout, a stream can have a second message waiting. A
 * message whose stream finished a poll (anything but failed) after the message was sent asks for
 * work that is done: it is deleted unpolled, for one read, instead of spending another request of
 * the shared rate (and, for credentials, another global search of the monthly quota).
 *
 * Slack work. With `actions.slack`, the API hands what a request from Slack leaves for after its
 * answer (a click's action, a lookup's answer) to the events queue: the worker does it first, and
 * when there is nothing to poll, runs a delivery pass so the click's follow-ups go at once. An
 * account action the API recorded (`identity-action`: only the workers read the identity
 * providers' secrets) comes the same way, with or without `actions.slack`.
 *
 * The metrics go out under the same `service` as the poller functions did (`poll-events`,
 * `poll-credentials`), so the stack's alarms on them keep watching; they are flushed after every
 * invocation, whatever it did, and its log lines carry its request id (lib/invocation.ts).
 */
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { isSlackWork, type SlackWork } from '../lib/actions/slack-work-shape.ts';
import type { Clock } from '../lib/clock.ts';
import { lastSendStart, runDeliveryPass } from '../lib/deliver/pass.ts';
import { readEnvironment } from '../lib/env.ts';
import { type InvocationContext, withInvocation } from '../lib/invocation.ts';
import { lazily } from '../lib/lazy.ts';
import { createLogger, startFailure } from '../lib/log.ts';
import { EmfMetrics } from '../lib/metrics.ts';
import type { CycleSummary } from '../lib/poll/cycle.ts';
import { workStreams } from '../lib/poll/dispatch.ts';
import type { JobsBeat } from '../lib/poll/jobs-heartbeat.ts';
import type { PollKind } from '../lib/poll/streams.ts';
import type { StreamStatus } from '../lib/poll/types.ts';
import { createRuntime } from '../lib/runtime.ts';
import type { DispatchRef } from '../lib/state/heartbeat.ts';

/** Time kept back at the end of an invocation for the last writes and the metrics flush. */
export const SAFETY_MARGIN_MS = 10_000;

/** Stream outcomes that ask for the message again. Every other outcome is a stream that took its turn. */
export const FAILED_STATUSES: ReadonlySet<StreamStatus | string> = new Set(['failed', 'unauthorized']);

export interface WorkerOptions {
  /** Where the EMF metric lines go; stdout (Lambda's log) by default. */
  emfWrite?: (line: string) => void;
  /** The runtime's clock (tests: retries' backoffs without the real wait); the table's timeline by default. */
  clock?: Clock;
}

/** The Slack work (actions/worker-slack.ts), loaded with the first piece of it: most invocations have none. */
const slackWorker = lazily(
  'the Slack work of the events worker (actions/worker-slack.ts)',
  () => import('../lib/actions/worker-slack.ts'),
);

interface Message {
  messageId: string;
  stream: string;
  sentAt: number;
  /** The dispatch it is a job of, when the config has a heartbeat (state/heartbeat.ts). */
  dispatch?: DispatchRef;
}

/** The Slack work a record carries (the API's hand-off), if that is what it is. */
function slackWorkIn(record: SQSRecord): SlackWork | undefined {
  try {
    const body = JSON.parse(record.body) as unknown;
    return isSlackWork(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

/** The stream a record asks for, or why it cannot be read (a message our dispatcher did not write). */
function readRecord(record: SQSRecord, kind: PollKind): Message | string {
  let body: unknown;
  try {
    body = JSON.parse(record.body);
  } catch {
    return 'its body is not JSON';
  }
  const {
    kind: k,
    stream,
    dispatch,
    job,
  } = (body ?? {}) as { kind?: unknown; stream?: unknown; dispatch?: unknown; job?: unknown };
  if (k !== kind || typeof stream !== 'string' || stream === '')
    return `its body is not {"kind":"${kind}","stream":"..."}`;
  // Without a send time, nothing can be known to have happened after it: the stream is polled.
  const sentAt = Number(record.attributes?.SentTimestamp);
  return {
    messageId: record.messageId,
    stream,
    sentAt: Number.isFinite(sentAt) ? sentAt : Number.POSITIVE_INFINITY,
    ...(typeof dispatch === 'string' && Number.isInteger(job)
      ? { dispatch: { id: dispatch, job: job as number } }
      : {}),
  };
}

export async function createWorkerHandler(kind: PollKind, options: WorkerOptions = {}) {
  const service = `poll-${kind}`;
  let logger = createLogger({ name: service });
  let runtime: Awaited<ReturnType<typeof createRuntime>>;
  // The heartbeat of the dispatches these messages are jobs of (poll/jobs-heartbeat.ts).
  let heartbeat = (_messages: readonly Message[]): JobsBeat => ({ ended: async () => {} });
  // Flushed after every invocation (lib/invocation.ts), whatever path it took.
  const metrics = new EmfMetrics({ service, ...(options.emfWrite ? { write: options.emfWrite } : {}) });
  try {
    const env = readEnvironment();
    logger = createLogger({ level: env.logLevel, name: service });
    runtime = await createRuntime({
      env,
      logger,
      metrics,
      // A dispatch and its jobs are the heartbeat's cycle here, not each invocation's streams.
      cycleHeartbeat: false,
      kinds: [kind],
      ...(options.clock ? { clock: options.clock } : {}),
    });
    // Loaded only for a config with this kind's heartbeat.
    const pings = runtime.heartbeat(kind);
    if (pings) {
      const { jobsHeartbeat } = await import('../lib/poll/jobs-heartbeat.ts');
      heartbeat = jobsHeartbeat({
        kind,
        service,
        logger,
        pings,
        io: { client: runtime.dynamo, tableName: runtime.env.tableName },
      });
    }
  } catch (error) {
    throw startFailure(logger, `${service} worker`, error);
  }
  logger.info(`${service} worker ready`, {
    config: runtime.configSource,
    destinations: [...runtime.destinations.keys()],
  });

  /** Each piece of Slack work, in turn (actions/worker-slack.ts). */
  let slackWork: ((work: readonly SlackWork[]) => Promise<void>) | undefined;
  const doSlackWork = async (work: readonly SlackWork[]) => {
    slackWork ??= (await slackWorker()).slackWorker(runtime, service, logger);
    await slackWork(work);
  };

  const invoke = async (
    event: Pick<SQSEvent, 'Records'>,
    context: Pick<Context, 'getRemainingTimeInMillis'> & InvocationContext,
  ): Promise<SQSBatchResponse> => {
    // Counted from the start, before any read: the cycle's budget is what is left of the invocation.
    const deadline = Date.now() + context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS;
    const failures: SQSBatchItemFailure[] = [];
    const messages: Message[] = [];
    const slackWork: SlackWork[] = [];
    for (const record of event.Records) {
      const work = slackWorkIn(record);
      if (work) {
        slackWork.push(work);
        continue;
      }
      const read = readRecord(record, kind);
      if (typeof read === 'string') {
        // Offered again and then dead-lettered, where an operator sees it.
        logger.error(`${service}: message ${record.messageId} is not a stream message: ${read}`);
        failures.push({ itemIdentifier: record.messageId });
      } else messages.push(read);
    }

    // The heartbeat: the first job of a dispatch pings its start, beside the work.
    const beat = heartbeat(messages);
    // What a request from Slack left for after its answer (the API hands it over by this queue).
    if (slackWork.length) await doSlackWork(slackWork);
    const polled = await runtime.streams.lastPolled([...new Set(messages.map((m) => m.stream))]);
    const done = (m: Message) => {
      const last = polled.get(m.stream);
      return (
        last?.at !== undefined && Date.parse(last.at) > m.sentAt && !FAILED_STATUSES.has(last.result ?? '')
      );
    };
    const todo = messages.filter((m) => !done(m));
    const streams = [...new Set(todo.map((m) => m.stream))];
    if (streams.length === 0) {
      // A click's (or an account action's) follow-ups go now, not with the next dispatch.
      if (slackWork.some((w) => w.kind === 'slack-action' || w.kind === 'identity-action'))
        await runDeliveryPass(runtime.deliver, { deadline: lastSendStart(runtime.deliver, deadline) });
      logger.info(`${service}: nothing to poll`, {
        alreadyPolled: messages.length,
        unreadable: failures.length,
      });
      await beat.ended(new Map());
      return { batchItemFailures: failures };
    }

    const summary = await workStreams(
      runtime.cycle,
      streams.map((stream) => ({ kind, stream })),
      // A send that starts must be able to finish and be recorded before the invocation ends.
      { deadline, sendsStartBy: lastSendStart(runtime.deliver, deadline) },
    );
    const failed = new Set(summary.streams.filter((s) => FAILED_STATUSES.has(s.status)).map((s) => s.stream));
    const polledHere = new Set(summary.streams.map((s) => s.stream));
    // Not in the config any more (changed since the dispatch), or not reached within the budget.
    const notPolled = streams.filter((s) => !polledHere.has(s));
    logger.info(`${service} streams polled`, polledFields(summary, messages.length - todo.length, notPolled));
    const firstError = summary.streams.find((s) => s.error && FAILED_STATUSES.has(s.status))?.error;
    // Each job of a dispatch ends here, once, well or not (before anything below throws).
    await beat.ended(
      new Map(
        summary.streams
          .filter((s) => FAILED_STATUSES.has(s.status))
          .map((s) => [
            s.stream,
            `${s.stream}: ${s.status}${s.error ? ` (${s.error.code}: ${s.error.message})` : ''}`,
          ]),
      ),
    );
    // Failures of the whole invocation, not of a stream: the function's error alarm must hear of
    // them. Every message is offered again, and those whose stream was polled are then deleted
    // unpolled (see "Already polled").
    if (summary.exitCode === 3)
      throw new Error(`the upstream rejected the credentials: ${firstError?.message ?? ''}`);
    const destination = summary.delivery.destinations.find((d) => d.status === 'failed');
    if (destination) throw new Error(`poll ${kind}: the delivery pass failed for ${destination.destination}`);

    for (const m of todo) if (failed.has(m.stream)) failures.push({ itemIdentifier: m.messageId });
    if (failed.size > 0)
      logger.warn(`${service}: ${failed.size} streams failed; SQS offers their messages again`, {
        streams: [...failed],
        error: firstError?.message,
      });
    return { batchItemFailures: failures };
  };
  return withInvocation(invoke, [metrics]);
}

/** What a worker logs after an invocation's streams (the bench writes the same line, for its size). */
export function polledFields(summary: CycleSummary, alreadyPolled: number, notPolled: readonly string[]) {
  return {
    exitCode: summary.exitCode,
    streams: summary.streams.map((s) => ({
      stream: s.stream,
      status: s.status,
      items: s.items,
      newItems: s.newItems,
    })),
    alreadyPolled,
    notPolled,
    sent: summary.delivery.sent,
    retrying: summary.delivery.retrying,
    dead: summary.delivery.dead,
  };
}
