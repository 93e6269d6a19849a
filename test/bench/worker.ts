/**
 * A bench worker: a child process that holds the product (or the bare client) and nothing else,
 * driven over IPC by run.ts. run.ts bundles this file as the CDK bundles a Lambda function and runs
 * the bundle with plain node (`BENCH_WORKER_TSX=1` runs the sources through tsx instead, to profile
 * them). The first message is `{type: 'init', data}`; every later one is a job answered by one
 * `result` (or `error`).
 *
 * Scenarios: `drain` (jobs `bare` and `product`, the latter with `optimisations` of its own when
 * given), `history` (jobs `page`, the bare client, and `walk`), `api` (serves the HTTP API; jobs
 * `take`), `scale` (jobs `open`, `dispatch`, `work`, `pass`, `stats`; several at once, each
 * answered with the `id` it came with), `latency` (jobs `latencyOpen`, `dispatch`, `latencyWork`,
 * `pass`, `latencyRecords`; several at once too).
 */

import type { PollKind } from '../../lib/poll/streams.ts';
import type { StreamJob } from '../../lib/poll/turn.ts';
import type { Optimisations } from '../../lib/runtime.ts';
import { type ApiServer, type ApiSetup, startApiServer } from './api-server.ts';
import { type DrainSetup, drainBare, drainProduct } from './drain.ts';
import { type HistorySetup, historyBare, historyWalk } from './history.ts';
import {
  type LatencySetup,
  latencyDispatch,
  latencyOpen,
  latencyPass,
  latencyRecords,
  latencyWork,
} from './latency.ts';
import { type ScaleSetup, scaleDispatch, scaleOpen, scalePass, scaleStats, scaleWork } from './scale.ts';

type Job =
  | { type: 'bare'; kinds: PollKind[] }
  | { type: 'product'; table: string; kinds: PollKind[]; optimisations?: Optimisations }
  | { type: 'walk'; table: string; firstRun: 'alert' | 'baseline' }
  | { type: 'page'; collect: boolean }
  | { type: 'take' }
  | { type: 'open'; table: string }
  | { type: 'dispatch'; kind: PollKind }
  | { type: 'work'; job: StreamJob; deadline: number }
  | { type: 'pass'; deadline: number }
  | { type: 'stats' }
  | { type: 'latencyOpen'; table: string; config: unknown; scale: number }
  | { type: 'latencyWork'; job: StreamJob; sentAt: number; jobMs: number; sendsMs: number }
  | { type: 'latencyRecords'; ids: string[] };

const scenario = process.argv[2];

function reply(message: unknown): void {
  process.send?.(message);
}

let setup: unknown;
let api: ApiServer | undefined;

async function handle(message: { type: string; data?: unknown }): Promise<unknown> {
  if (message.type === 'init') {
    setup = message.data;
    if (scenario === 'api') {
      api = await startApiServer(setup as ApiSetup);
      return { url: api.url };
    }
    return {};
  }
  const job = message as unknown as Job;
  if (scenario === 'drain' && job.type === 'bare') return drainBare(setup as DrainSetup, job.kinds);
  if (scenario === 'drain' && job.type === 'product')
    return drainProduct(setup as DrainSetup, job.table, job.kinds, job.optimisations);
  if (scenario === 'history' && job.type === 'page') return historyBare(setup as HistorySetup, job.collect);
  if (scenario === 'history' && job.type === 'walk')
    return historyWalk(setup as HistorySetup, job.table, job.firstRun);
  if (scenario === 'api' && job.type === 'take' && api) return api.take();
  if (scenario === 'scale' && job.type === 'open') return scaleOpen(setup as ScaleSetup, job.table);
  if (scenario === 'scale' && job.type === 'dispatch') return scaleDispatch(job.kind);
  if (scenario === 'scale' && job.type === 'work') return scaleWork(job.job, job.deadline);
  if (scenario === 'scale' && job.type === 'pass') return scalePass(job.deadline);
  if (scenario === 'scale' && job.type === 'stats') return scaleStats();
  if (scenario === 'latency' && job.type === 'latencyOpen')
    return latencyOpen(setup as LatencySetup, job.table, job.config, job.scale);
  if (scenario === 'latency' && job.type === 'dispatch') return latencyDispatch(job.kind);
  if (scenario === 'latency' && job.type === 'latencyWork')
    return latencyWork(job.job, job.sentAt, job.jobMs, job.sendsMs);
  if (scenario === 'latency' && job.type === 'pass') return latencyPass(job.deadline);
  if (scenario === 'latency' && job.type === 'latencyRecords') return latencyRecords(job.ids);
  throw new Error(`scenario ${scenario} has no job ${message.type}`);
}

process.on('message', (message: { type: string; data?: unknown; id?: number }) => {
  // A job sent with an `id` (several in flight at once) is answered with it.
  const id = message.id === undefined ? {} : { id: message.id };
  handle(message).then(
    (data) => reply({ type: message.type === 'init' ? 'ready' : 'result', data, ...id }),
    (error: unknown) => reply({ type: 'error', message: (error as Error)?.stack ?? String(error), ...id }),
  );
});
process.on('disconnect', () => {
  void api?.close();
  process.exit(0);
});
