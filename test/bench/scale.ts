/**
 * Many streams under the shared rate, run inside a bench worker (measure-scale.ts): one worker
 * process stands for one instance of each worker function of the deployment (functions/worker.ts),
 * events and credentials, each with its own runtime (its own shared rate governor and DynamoDB
 * client, as two Lambdas have), on one table. The orchestrator hands out the streams a dispatcher
 * listed (lib/poll/dispatch.ts `dispatchStreams`, run here too) one at a time, as SQS does with
 * a batch size of 1; a worker polls each with `workStreams`, its delivery pass included.
 *
 * What each job used is counted for the cost section (measure-cost.ts): its upstream requests
 * (the governor's turns) and the time it waited for them, its DynamoDB requests by command and
 * their capacity units, the log and EMF lines it wrote (the runtime's logger and metrics write as
 * a worker function's do, under its `service`, and are counted instead of discarded), and the
 * metrics those lines publish. Each kind's runtime runs one job at a time, so a job's usage is the
 * difference of its runtime's counters around it.
 */
import { polledFields } from '../../functions/worker.ts';
import { lastSendStart, runDeliveryPass } from '../../lib/deliver/pass.ts';
import type { DeliveryPassOptions } from '../../lib/deliver/types.ts';
import { workStreams } from '../../lib/poll/dispatch.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import { dispatchStreams, type StreamJob } from '../../lib/poll/turn.ts';
import type { Runtime } from '../../lib/runtime.ts';
import {
  benchRuntime,
  type CapacityCount,
  type CountingDynamo,
  countingDynamo,
  type ProductOutput,
  productOutput,
} from './product.ts';

export interface ScaleSetup {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
  /** The alert config (sources, the webhook, `upstream` rates). */
  config: unknown;
}

/** One job's outcome, as the orchestrator needs it. */
export interface ScaleJobResult {
  stream: string;
  /** Absent when the cycle had no time left to try the stream. */
  status?: string;
  pages: number;
  items: number;
  newItems: number;
  /** Sent by the job's delivery pass and inline. */
  sent: number;
  exitCode: number;
  error?: string;
  /** ms since the epoch: the job's start, its polling's end (the pass's start), its end. */
  startedAt: number;
  polledAt: number;
  endedAt: number;
  /** What the job used (the cost section's counts). */
  usage: JobUsage;
}

/** What one job used, counted in its worker. */
export interface JobUsage {
  /** Upstream requests: the governor's turns (retries and token exchanges included). */
  upstream: number;
  /** Time spent taking those turns: waiting for the shared rate, and booking the slot. */
  rateWaitMs: number;
  /** DynamoDB requests by command. */
  dynamo: Record<string, number>;
  /** Their capacity units, and the units DynamoDB reported by command. */
  capacity: CapacityCount;
  units: Record<string, number>;
  logLines: number;
  logBytes: number;
  emfLines: number;
  emfBytes: number;
  /** The metrics its EMF lines published (product.ts ProductOutput.metrics). */
  metrics: string[];
}

export interface GovernorCount {
  turns: number;
  reads: number;
  writes: number;
  /** Conditional writes refused (a lost race, or a turn refused for its deadline). */
  failedWrites: number;
  /** Slots booked again because the request was too late for its own. */
  late: number;
}

export interface ScaleStats {
  /** Per kind (one runtime each): the governor's own counters. */
  governor: Record<PollKind, GovernorCount>;
  /** Every DynamoDB request of the process, by command, counted at the client. */
  dynamo: Record<string, number>;
  /** Their capacity units, both kinds summed. */
  capacity: CapacityCount;
  /** Log and EMF lines and bytes, both kinds summed. */
  output: { logLines: number; logBytes: number; emfLines: number; emfBytes: number };
}

interface Worker {
  runtime: Runtime;
  dynamo: CountingDynamo;
  output: ProductOutput;
  /** ms spent in the governor's `take` so far. */
  rateWaitMs: number;
}

const KINDS: PollKind[] = ['events', 'credentials'];
let workers: Map<PollKind, Worker> | undefined;

function close(): void {
  for (const w of workers?.values() ?? []) w.dynamo.client.destroy();
  workers = undefined;
}

/** Builds one runtime per kind on `table` (a fresh governor each: its counters start at 0). */
export async function scaleOpen(setup: ScaleSetup, table: string): Promise<Record<string, never>> {
  close();
  const built = new Map<PollKind, Worker>();
  for (const kind of KINDS) {
    const dynamo = countingDynamo(setup.dynamoEndpoint, { capacity: true });
    const output = productOutput();
    const runtime = await benchRuntime({
      apiUrl: setup.apiUrl,
      token: setup.token,
      dynamoEndpoint: setup.dynamoEndpoint,
      table,
      config: setup.config,
      dynamo: dynamo.client,
      output,
      service: `poll-${kind}`,
    });
    const built1: Worker = { runtime, dynamo, output, rateWaitMs: 0 };
    // Timed on the instance: the upstream client calls the governor's `take` through it.
    const governor = runtime.governor;
    const take = governor.take.bind(governor);
    governor.take = async (...args: Parameters<typeof take>) => {
      const t0 = performance.now();
      try {
        return await take(...args);
      } finally {
        built1.rateWaitMs += performance.now() - t0;
      }
    };
    built.set(kind, built1);
  }
  workers = built;
  return {};
}

function worker(kind: PollKind): Worker {
  const found = workers?.get(kind);
  if (!found) throw new Error('scale: no table opened');
  return found;
}

/** The dispatcher: the streams of `kind` in turn, the one that waited longest first. */
export function scaleDispatch(kind: PollKind): Promise<StreamJob[]> {
  const { config, poll } = worker(kind).runtime.cycle;
  return dispatchStreams({ config, streams: poll.streams }, kind);
}

/** The counters of one runtime, to tell what a job used. */
function snapshot(w: Worker) {
  return {
    upstream: w.runtime.governor.stats.turns,
    rateWaitMs: w.rateWaitMs,
    dynamo: { ...w.dynamo.counts },
    units: { ...w.dynamo.units },
    capacity: { ...w.dynamo.capacity },
    logLines: w.output.logLines,
    logBytes: w.output.logBytes,
    emfLines: w.output.emfLines,
    emfBytes: w.output.emfBytes,
    metrics: new Map(w.output.metrics),
  };
}

function usageSince(w: Worker, before: ReturnType<typeof snapshot>): JobUsage {
  const now = snapshot(w);
  const since = (now: Record<string, number>, then: Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const [op, n] of Object.entries(now)) if (n - (then[op] ?? 0)) out[op] = n - (then[op] ?? 0);
    return out;
  };
  const capacity = { ...now.capacity };
  for (const key of Object.keys(capacity) as (keyof CapacityCount)[]) capacity[key] -= before.capacity[key];
  return {
    upstream: now.upstream - before.upstream,
    rateWaitMs: Math.round(now.rateWaitMs - before.rateWaitMs),
    dynamo: since(now.dynamo, before.dynamo),
    capacity,
    units: since(now.units, before.units),
    logLines: now.logLines - before.logLines,
    logBytes: now.logBytes - before.logBytes,
    emfLines: now.emfLines - before.emfLines,
    emfBytes: now.emfBytes - before.emfBytes,
    metrics: [...now.metrics].filter(([key, n]) => n > (before.metrics.get(key) ?? 0)).map(([key]) => key),
  };
}

/** A worker's turn on one stream, within `deadline` (ms since the epoch), as functions/worker.ts does it. */
export async function scaleWork(job: StreamJob, deadline: number): Promise<ScaleJobResult> {
  const w = worker(job.kind);
  const { runtime } = w;
  const before = snapshot(w);
  const startedAt = Date.now();
  let polledAt = 0;
  const pass = (options: DeliveryPassOptions) => {
    polledAt = Date.now();
    return runDeliveryPass(runtime.deliver, options);
  };
  const summary = await workStreams({ ...runtime.cycle, pass }, [job], {
    deadline,
    sendsStartBy: lastSendStart(runtime.deliver, deadline),
  });
  const endedAt = Date.now();
  const result = summary.streams.find((s) => s.stream === job.stream);
  // The line functions/worker.ts writes after each invocation's streams, for the log's size.
  runtime.logger.info(
    `poll-${job.kind} streams polled`,
    polledFields(summary, 0, result ? [] : [job.stream]),
  );
  return {
    stream: job.stream,
    ...(result ? { status: result.status } : {}),
    pages: result?.pages ?? 0,
    items: result?.items ?? 0,
    newItems: result?.newItems ?? 0,
    sent: summary.delivery.sent,
    exitCode: summary.exitCode,
    ...(result?.error ? { error: `${result.error.code}: ${result.error.message}` } : {}),
    startedAt,
    polledAt: polledAt || endedAt,
    endedAt,
    usage: usageSince(w, before),
  };
}

/** One delivery pass for every destination (what the next scheduled run would send). */
export async function scalePass(deadline: number): Promise<{ sent: number; left: number }> {
  const summary = await runDeliveryPass(worker('events').runtime.deliver, { deadline });
  return { sent: summary.sent, left: summary.left };
}

export function scaleStats(): ScaleStats {
  const dynamo: Record<string, number> = {};
  const governor = {} as Record<PollKind, GovernorCount>;
  const capacity: CapacityCount = { readUnits: 0, writeUnits: 0, failedWrites: 0, indexWriteUnits: 0 };
  const output = { logLines: 0, logBytes: 0, emfLines: 0, emfBytes: 0 };
  for (const kind of KINDS) {
    const w = worker(kind);
    governor[kind] = { ...w.runtime.governor.stats };
    for (const [op, n] of Object.entries(w.dynamo.counts)) dynamo[op] = (dynamo[op] ?? 0) + n;
    for (const key of Object.keys(capacity) as (keyof CapacityCount)[])
      capacity[key] += w.dynamo.capacity[key];
    for (const key of Object.keys(output) as (keyof typeof output)[]) output[key] += w.output[key];
  }
  return { governor, dynamo, capacity, output };
}
