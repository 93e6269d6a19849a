/**
 * A stream's first walk over a long history, run inside a bench worker (measure-history.ts):
 * either the product (the real `events` poll cycle, run again and again as a scheduled Lambda
 * would be, each run within one invocation's time, until the tenant stream reports `done`: its
 * walk reached the end of the feed) or the bare upstream client paging the same feed with the
 * same request body and doing nothing with the items.
 */
import { lastSendStart } from '../../lib/deliver/pass.ts';
import { readEnvironment } from '../../lib/env.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { EVENT_PAGE_SIZE } from '../../lib/poll/streams.ts';
import type { EventFilters } from '../../lib/upstream/client.ts';
import { createUpstreamClient } from '../../lib/upstream/index.ts';
import { benchConfig, benchRuntime, countingDynamo } from './product.ts';

export interface HistorySetup {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
  /** Destinations by name; every item is routed to all of them. */
  destinations: Record<string, unknown>;
  lookback: string;
  /** The time one run may take, as a poller Lambda's deadline gives it (ms). */
  runMs: number;
  /** Runs after which a walk that has not reached the end is a failure, not a slow walk. */
  maxRuns: number;
}

export interface HistoryRun {
  ms: number;
  status: string;
  exitCode: number;
  pages: number;
  items: number;
  newItems: number;
  baseline: number;
  sent: number;
  /** DynamoDB requests of this run (its delivery pass included). */
  requests: number;
}

export interface HistoryWalk {
  firstRun: 'alert' | 'baseline';
  /** The sum of the runs' times: the walk's wall time without the waits between scheduled runs. */
  ms: number;
  /** ms since the epoch when the first run started (bounds the walk's `alertFrom`). */
  startedAt: number;
  runs: HistoryRun[];
  pages: number;
  items: number;
  newItems: number;
  baseline: number;
  sent: number;
  /** DynamoDB requests of the whole walk by command, counted at the client. */
  requests: Record<string, number>;
}

/** One item of the feed as the checks need it. */
export type FeedEntry = [uid: string, matchedAt: string, estimatedCreatedAt: string];

export interface HistoryBare {
  ms: number;
  pages: number;
  items: number;
  /** The feed in order, when asked for (the checks' reference). */
  feed?: FeedEntry[];
}

export function historyConfig(setup: HistorySetup, firstRun: 'alert' | 'baseline') {
  return {
    sources: { tenantEvents: { lookback: setup.lookback, firstRun } },
    destinations: setup.destinations,
    routes: [{ name: 'everything', match: {}, to: Object.keys(setup.destinations) }],
  };
}

/** The product: `events` poll cycles on `table`, one per invocation, until the walk is done. */
export async function historyWalk(
  setup: HistorySetup,
  table: string,
  firstRun: 'alert' | 'baseline',
): Promise<HistoryWalk> {
  const dynamo = countingDynamo(setup.dynamoEndpoint);
  try {
    // One runtime for every run: a warm Lambda keeps what it built at cold start.
    const runtime = await benchRuntime({
      apiUrl: setup.apiUrl,
      token: setup.token,
      dynamoEndpoint: setup.dynamoEndpoint,
      table,
      config: historyConfig(setup, firstRun),
      dynamo: dynamo.client,
    });
    dynamo.reset();
    const runs: HistoryRun[] = [];
    const startedAt = Date.now();
    for (;;) {
      if (runs.length >= setup.maxRuns)
        throw new Error(`the ${firstRun} walk did not reach the end of the feed in ${runs.length} runs`);
      const before = dynamo.total();
      const t0 = performance.now();
      // What functions/worker.ts gives a cycle: the invocation's time less its margin, and sends
      // that start early enough to finish and be recorded inside it.
      const deadline = Date.now() + setup.runMs;
      const summary = await runPollCycle(runtime.cycle, 'events', {
        deadline,
        sendsStartBy: lastSendStart(runtime.deliver, deadline),
      });
      const stream = summary.streams.find((s) => s.stream === 'tenant');
      if (!stream) throw new Error('the events cycle did not poll the tenant stream');
      runs.push({
        ms: performance.now() - t0,
        status: stream.status,
        exitCode: summary.exitCode,
        pages: stream.pages,
        items: stream.items,
        newItems: stream.newItems,
        baseline: stream.baseline,
        sent: summary.delivery.sent,
        requests: dynamo.total() - before,
      });
      if (summary.exitCode !== 0 || (stream.status !== 'budget' && stream.status !== 'done'))
        throw new Error(
          `run ${runs.length} of the ${firstRun} walk: exit ${summary.exitCode}, stream ${stream.status} ${stream.error?.message ?? ''}`,
        );
      if (stream.status === 'done') break;
    }
    const sum = (key: keyof HistoryRun) => runs.reduce((n, r) => n + (r[key] as number), 0);
    return {
      firstRun,
      ms: sum('ms'),
      startedAt,
      runs,
      pages: sum('pages'),
      items: sum('items'),
      newItems: sum('newItems'),
      baseline: sum('baseline'),
      sent: sum('sent'),
      requests: { ...dynamo.counts },
    };
  } finally {
    dynamo.client.destroy();
  }
}

/** The bare client: the tenant stream's request (lib/poll/streams.ts), pages read and dropped. */
export async function historyBare(setup: HistorySetup, collect: boolean): Promise<HistoryBare> {
  const env = readEnvironment({ EXPOSURE_API_URL: setup.apiUrl, EXPOSURE_API_TOKEN: setup.token });
  const client = createUpstreamClient(env, {});
  const filters = benchConfig(historyConfig(setup, 'alert')).sources.tenantEvents?.filters ?? {};
  const feed: FeedEntry[] = [];
  let pages = 0;
  let items = 0;
  const t0 = performance.now();
  for await (const page of client.tenantEventPages({
    size: EVENT_PAGE_SIZE,
    order: 'asc',
    filters: filters as EventFilters,
  })) {
    pages += 1;
    items += page.items.length;
    if (collect)
      for (const { metadata } of page.items)
        feed.push([metadata.uid, metadata.matched_at, metadata.estimated_created_at]);
  }
  return { ms: performance.now() - t0, pages, items, ...(collect ? { feed } : {}) };
}
