/**
 * Many streams under the shared rate, run inside a bench worker (measure-scale.ts): one worker
 * process stands for one instance of each worker function of the deployment (functions/worker.ts),
 * events and credentials, each with its own runtime (its own shared rate governor and DynamoDB
 * client, as two Lambdas have), on one table. The orchestrator hands out the streams a dispatcher
 * listed (lib/poll/dispatch.ts `dispatchStreams`, run here too) one at a time, as SQS does with
 * a batch size of 1; a worker polls each with `workStreams`, its delivery pass included.
 */
import { lastSendStart, runDeliveryPass } from '../../lib/deliver/pass.ts';
import type { DeliveryPassOptions } from '../../lib/deliver/types.ts';
import { workStreams } from '../../lib/poll/dispatch.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import { dispatchStreams, type StreamJob } from '../../lib/poll/turn.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { benchRuntime, type CountingDynamo, countingDynamo } from './product.ts';

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
}

interface Worker {
  runtime: Runtime;
  dynamo: CountingDynamo;
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
    const dynamo = countingDynamo(setup.dynamoEndpoint);
    const runtime = await benchRuntime({
      apiUrl: setup.apiUrl,
      token: setup.token,
      dynamoEndpoint: setup.dynamoEndpoint,
      table,
      config: setup.config,
      dynamo: dynamo.client,
    });
    built.set(kind, { runtime, dynamo });
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

/** A worker's turn on one stream, within `deadline` (ms since the epoch), as functions/worker.ts does it. */
export async function scaleWork(job: StreamJob, deadline: number): Promise<ScaleJobResult> {
  const { runtime } = worker(job.kind);
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
  for (const kind of KINDS) {
    const w = worker(kind);
    governor[kind] = { ...w.runtime.governor.stats };
    for (const [op, n] of Object.entries(w.dynamo.counts)) dynamo[op] = (dynamo[op] ?? 0) + n;
  }
  return { governor, dynamo };
}
