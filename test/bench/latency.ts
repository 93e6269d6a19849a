/**
 * The latency section's worker side (measure-latency.ts), and the arithmetic of its figures.
 *
 * In a bench worker process, one runtime per kind on one table, as scale.ts has them, but each job
 * runs as functions/worker.ts runs a message: a message whose stream finished a poll after the
 * message was sent is deleted unpolled ("Already polled" there); otherwise the stream is polled
 * and its delivery pass runs, with the deadlines of a Lambda invocation of the (scaled) timeout,
 * counted from the job's start.
 *
 * Time runs `scale` times faster than real: the orchestrator ticks the schedule and the emulator
 * enforces the tiers at that factor. The product's own waits are taken on a clock whose `sleep`
 * lasts 1/scale of what it is asked (its `now` is the real one), so a destination's pace (Slack's
 * one message a second) and retry backoffs shrink with the schedule. The shared rate governor
 * keeps real time (runtime.ts) and paces at the config's rates, which are scaled instead.
 * The figures' arithmetic is in latency-figures.ts.
 */
import { FAILED_STATUSES } from '../../functions/worker.ts';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import type { DeliveryPassOptions } from '../../lib/deliver/types.ts';
import { workStreams } from '../../lib/poll/dispatch.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import { dispatchStreams, type StreamJob } from '../../lib/poll/turn.ts';
import type { Runtime } from '../../lib/runtime.ts';
import type { DynamoDBClient } from '../../lib/state/sdk.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { benchRuntime } from './product.ts';

export interface LatencySetup {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
}

export interface LatencyJobResult {
  stream: string;
  /** Deleted unpolled: the stream finished a poll after the message was sent. */
  skipped: boolean;
  status?: string;
  pages: number;
  newItems: number;
  exitCode: number;
  error?: string;
  /** ms since the epoch: the job's start, its delivery pass's start, its end. */
  startedAt: number;
  polledAt: number;
  endedAt: number;
}

/** A delivery record as the figures need it: which stream created it, and when. */
export interface RecordTimes {
  source: string;
  createdAt: number;
  status: string;
}

const KINDS: PollKind[] = ['events', 'credentials'];
let runtimes: Map<PollKind, { runtime: Runtime; dynamo: DynamoDBClient }> | undefined;

/** The real clock, whose sleeps last 1/`scale` of what they are asked. */
export function scaledSleepClock(scale: number): Clock {
  return { now: () => Date.now(), sleep: (ms, signal) => systemClock.sleep(ms / scale, signal) };
}

export async function latencyOpen(
  setup: LatencySetup,
  table: string,
  config: unknown,
  scale: number,
): Promise<Record<string, never>> {
  for (const r of runtimes?.values() ?? []) r.dynamo.destroy();
  const built = new Map<PollKind, { runtime: Runtime; dynamo: DynamoDBClient }>();
  for (const kind of KINDS) {
    const dynamo = createDynamoClient({ endpoint: setup.dynamoEndpoint });
    const runtime = await benchRuntime({ ...setup, table, config, dynamo, clock: scaledSleepClock(scale) });
    built.set(kind, { runtime, dynamo });
  }
  runtimes = built;
  return {};
}

function runtimeOf(kind: PollKind): Runtime {
  const found = runtimes?.get(kind)?.runtime;
  if (!found) throw new Error('latency: no table opened');
  return found;
}

export function latencyDispatch(kind: PollKind): Promise<StreamJob[]> {
  const { config, poll } = runtimeOf(kind).cycle;
  return dispatchStreams({ config, streams: poll.streams }, kind);
}

/**
 * One SQS message, as functions/worker.ts takes it: `jobMs` is the invocation's time less its
 * safety margin, `sendsMs` the last moment a send may start (both from the start, scaled).
 */
export async function latencyWork(
  job: StreamJob,
  sentAt: number,
  jobMs: number,
  sendsMs: number,
): Promise<LatencyJobResult> {
  const runtime = runtimeOf(job.kind);
  const startedAt = Date.now();
  const last = (await runtime.streams.lastPolled([job.stream])).get(job.stream);
  const none = { stream: job.stream, pages: 0, newItems: 0, exitCode: 0, startedAt };
  if (last?.at !== undefined && Date.parse(last.at) > sentAt && !FAILED_STATUSES.has(last.result ?? ''))
    return { ...none, skipped: true, polledAt: Date.now(), endedAt: Date.now() };
  let polledAt = 0;
  const pass = (options: DeliveryPassOptions) => {
    polledAt = Date.now();
    return runDeliveryPass(runtime.deliver, options);
  };
  const summary = await workStreams({ ...runtime.cycle, pass }, [job], {
    deadline: startedAt + jobMs,
    sendsStartBy: startedAt + sendsMs,
  });
  const endedAt = Date.now();
  const result = summary.streams.find((s) => s.stream === job.stream);
  return {
    ...none,
    skipped: false,
    ...(result ? { status: result.status } : {}),
    pages: result?.pages ?? 0,
    newItems: result?.newItems ?? 0,
    exitCode: summary.exitCode,
    ...(result?.error ? { error: `${result.error.code}: ${result.error.message}` } : {}),
    polledAt: polledAt || endedAt,
    endedAt,
  };
}

/** A delivery pass for every destination, within `deadline`. */
export async function latencyPass(deadline: number): Promise<{ sent: number; left: number }> {
  const summary = await runDeliveryPass(runtimeOf('events').deliver, { deadline });
  return { sent: summary.sent, left: summary.left };
}

/** The records of `ids` (`<destination>~<kind>~<key>`) that exist: who created them, and when. */
export async function latencyRecords(ids: string[]): Promise<Record<string, RecordTimes>> {
  const out: Record<string, RecordTimes> = {};
  for (let i = 0; i < ids.length; i += 100) {
    const found = await runtimeOf('events').deliveries.getMany(ids.slice(i, i + 100));
    for (const [id, r] of found)
      out[id] = { source: r.source, createdAt: Date.parse(r.createdAt), status: r.status };
  }
  return out;
}
