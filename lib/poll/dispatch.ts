/**
 * Fanning streams out over concurrent workers (docs/architecture.md): a dispatcher lists the
 * streams of a kind in turn (turn.ts), least recently polled first, and hands each out as a job; a worker
 * polls the streams of its jobs (cycle.ts, then one delivery pass). On AWS the jobs travel over SQS
 * (functions/dispatch.ts, functions/worker.ts); `npm start` runs the same two functions with a
 * queue in memory and a few workers in the process.
 *
 * What keeps this safe is not the transport: a stream's lease keeps two workers off one stream (the
 * second skips it), a destination's lease keeps one pass per destination at a time, and the shared
 * governor keeps every worker together within the organization's rate.
 */
import type { DestinationResult } from '../deliver/types.ts';
import { type CycleDeps, type CycleSummary, exitCodeOf, runPollCycle } from './cycle.ts';
import type { PollKind } from './streams.ts';
import type { StreamJob } from './turn.ts';
import type { PollBudget } from './types.ts';

/** Polls the streams of `jobs` (all of one kind), then one delivery pass: a worker's turn. */
export function workStreams(
  deps: CycleDeps,
  jobs: readonly StreamJob[],
  budget: PollBudget,
): Promise<CycleSummary> {
  const kind = jobs[0]?.kind ?? 'events';
  return runPollCycle(deps, kind, budget, { streams: jobs.map((j) => j.stream) });
}

/**
 * One summary for several workers' cycles: every stream's result, and each distinct delivery pass
 * counted once (`npm start`'s workers share their passes).
 */
export function combineSummaries(kind: PollKind, summaries: readonly CycleSummary[]): CycleSummary {
  const passes = [...new Set(summaries.map((s) => s.delivery))];
  const destinations = mergeByDestination(passes.flatMap((p) => p.destinations));
  const sum = (key: 'sent' | 'retrying' | 'dead' | 'left') => passes.reduce((n, p) => n + (p[key] ?? 0), 0);
  const streams = summaries.flatMap((s) => s.streams);
  const delivery = {
    destinations,
    sent: sum('sent'),
    retrying: sum('retrying'),
    dead: sum('dead'),
    left: sum('left'),
  };
  // From all the streams at once: a worker whose streams were all one refused tenant's is not all.
  return { kind, streams, delivery, exitCode: exitCodeOf(streams, delivery) };
}

/** One result per destination: the counts of its passes added up, the last pass's state. */
function mergeByDestination(results: readonly DestinationResult[]): DestinationResult[] {
  const merged = new Map<string, DestinationResult>();
  for (const r of results) {
    const seen = merged.get(r.destination);
    if (!seen) {
      merged.set(r.destination, { ...r });
      continue;
    }
    const add = (key: 'messages' | 'sent' | 'retrying' | 'dead' | 'silenced') =>
      (seen[key] ?? 0) + (r[key] ?? 0);
    merged.set(r.destination, {
      ...r,
      status: seen.status === 'failed' ? 'failed' : r.status,
      messages: add('messages'),
      sent: add('sent'),
      retrying: add('retrying'),
      dead: add('dead'),
      ...(seen.silenced || r.silenced ? { silenced: add('silenced') } : {}),
      passes: (seen.passes ?? 1) + 1,
    });
  }
  return [...merged.values()];
}

/**
 * Runs `jobs` on `workers` workers sharing one queue in memory, each job as its own cycle: the
 * local stand-in for SQS and the worker function.
 */
export async function runWorkers(
  deps: CycleDeps,
  jobs: readonly StreamJob[],
  workers: number,
  budget: () => PollBudget,
): Promise<CycleSummary[]> {
  const queue = [...jobs];
  const done: CycleSummary[] = [];
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(workers, queue.length)) }, async () => {
      for (let job = queue.shift(); job; job = queue.shift())
        done.push(await workStreams(deps, [job], budget()));
    }),
  );
  return done;
}
