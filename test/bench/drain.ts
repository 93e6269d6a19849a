/**
 * Draining a backlog, run inside a bench worker: either the product (the real poll cycle of each
 * kind, each ending with its delivery pass, on a fresh table) or the bare upstream client paging
 * through the same feeds with the same request bodies and doing nothing with the items.
 */
import { readEnvironment } from '../../lib/env.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { EVENT_PAGE_SIZE, type PollKind } from '../../lib/poll/streams.ts';
import { parseDuration } from '../../lib/rules/duration.ts';
import type { Optimisations } from '../../lib/runtime.ts';
import { createUpstreamClient } from '../../lib/upstream/index.ts';
import { benchConfig, benchRuntime, countingDynamo } from './product.ts';

export interface DrainSetup {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
  /** Destinations by name (the alert config's `destinations`); every item is routed to all of them. */
  destinations: Record<string, unknown>;
  /** The one credential domain polled. */
  domain: string;
  eventsLookback: string;
  credentialsLookback: string;
  /** Optimisations turned off (`npm run bench -- --without packs,inline`). */
  optimisations?: Optimisations;
  /** The config's `identity` (the identity section's providers); none by default. */
  identity?: unknown;
  /** The secret object (the identity providers' secrets); none by default. */
  secrets?: Record<string, string>;
}

export interface KindRun {
  kind: PollKind;
  ms: number;
  pages: number;
  items: number;
  newItems: number;
  sent: number;
  /** Sent per destination, with the messages it took. */
  destinations: { destination: string; sent: number; messages: number }[];
  /** DynamoDB requests by command, counted at the client. */
  requests: Record<string, number>;
  exitCode: number;
  /** Share of the time the worker's event loop was busy (1: the worker's own CPU was the limit). */
  busy?: number;
}

export interface DrainRun {
  totalMs: number;
  kinds: KindRun[];
  /** Peak resident set size of this process so far, in KB. */
  maxRssKb: number;
  /** V8 heap in use after a full GC at the end, in bytes (only when node runs with --expose-gc). */
  heapAfterGc?: number;
  /** process.memoryUsage() at the end, before that GC. */
  memoryAtEnd: NodeJS.MemoryUsage;
  /** RSS in MB every second of the product run, to see whether it levels off. */
  rssMbEachSecond?: number[];
}

function heapAfterGc(): number | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return undefined;
  gc();
  return process.memoryUsage().heapUsed;
}

/** Lambda's longest timeout: the most time a poller could get. */
const DEADLINE_MS = 15 * 60_000;

/** The alert config of a drain: the tenant feed and one credential domain, everything to every destination. */
export function drainConfig(setup: DrainSetup) {
  return {
    sources: {
      tenantEvents: { lookback: setup.eventsLookback, firstRun: 'alert' },
      credentials: { domains: [setup.domain], lookback: setup.credentialsLookback, firstRun: 'alert' },
    },
    destinations: setup.destinations,
    routes: [{ name: 'everything', match: {}, to: Object.keys(setup.destinations) }],
    ...(setup.identity ? { identity: setup.identity } : {}),
  };
}

/**
 * The product: one poll cycle per kind, in order, each with its delivery pass, on `table`;
 * `optimisations` in place of the setup's (the drain's second product, without the alert index).
 */
export async function drainProduct(
  setup: DrainSetup,
  table: string,
  kinds: PollKind[],
  optimisations = setup.optimisations,
): Promise<DrainRun> {
  const dynamo = countingDynamo(setup.dynamoEndpoint);
  try {
    const runtime = await benchRuntime({
      apiUrl: setup.apiUrl,
      token: setup.token,
      dynamoEndpoint: setup.dynamoEndpoint,
      table,
      config: drainConfig(setup),
      dynamo: dynamo.client,
      ...(optimisations ? { optimisations } : {}),
      ...(setup.secrets ? { secrets: setup.secrets } : {}),
    });
    const runs: KindRun[] = [];
    const rssMbEachSecond: number[] = [];
    const sampler = setInterval(
      () => rssMbEachSecond.push(Math.round(process.memoryUsage.rss() / 2 ** 20)),
      1_000,
    );
    const started = performance.now();
    for (const kind of kinds) {
      dynamo.reset();
      const t0 = performance.now();
      const elu = performance.eventLoopUtilization();
      const summary = await runPollCycle(runtime.cycle, kind, { deadline: Date.now() + DEADLINE_MS });
      const busy = performance.eventLoopUtilization(elu).utilization;
      runs.push({
        kind,
        ms: performance.now() - t0,
        pages: summary.streams.reduce((n, s) => n + s.pages, 0),
        items: summary.streams.reduce((n, s) => n + s.items, 0),
        newItems: summary.streams.reduce((n, s) => n + s.newItems, 0),
        sent: summary.delivery.sent,
        destinations: summary.delivery.destinations.map((d) => ({
          destination: d.destination,
          sent: d.sent,
          messages: d.messages,
        })),
        requests: { ...dynamo.counts },
        exitCode: summary.exitCode,
        busy,
      });
    }
    const totalMs = performance.now() - started;
    clearInterval(sampler);
    const memoryAtEnd = process.memoryUsage();
    return {
      totalMs,
      kinds: runs,
      maxRssKb: process.resourceUsage().maxRSS,
      memoryAtEnd,
      rssMbEachSecond,
      heapAfterGc: heapAfterGc(),
    };
  } finally {
    dynamo.client.destroy();
  }
}

/** The bare client: the requests the product's streams send, with the same bodies; pages read and dropped. */
export async function drainBare(setup: DrainSetup, kinds: PollKind[]): Promise<DrainRun> {
  const env = readEnvironment({ EXPOSURE_API_URL: setup.apiUrl, EXPOSURE_API_TOKEN: setup.token });
  const client = createUpstreamClient(env, {});
  // The page size and filters the product's streams ask with: the config's defaults.
  const config = benchConfig(drainConfig(setup));
  const pageSize = config.sources.credentials?.pageSize;
  const runs: KindRun[] = [];
  const started = performance.now();
  for (const kind of kinds) {
    const t0 = performance.now();
    let pages = 0;
    let items = 0;
    const since = new Date(Date.now() - (parseDuration(setup.credentialsLookback) as number)).toISOString();
    // Events: the tenant stream's body (lib/poll/streams.ts), the configured filters and no time
    // bound, so the bare client reads the whole feed as the product's first walk does.
    const iterator =
      kind === 'events'
        ? client.tenantEventPages({
            size: EVENT_PAGE_SIZE,
            order: 'asc',
            filters: config.sources.tenantEvents?.filters ?? {},
          })
        : client.globalCredentialPages({
            query: { type: 'domain', fqdn: setup.domain },
            filters: { imported_at: { gte: since } },
            size: pageSize,
            order: 'asc',
          });
    for await (const page of iterator) {
      pages += 1;
      items += page.items.length;
    }
    runs.push({
      kind,
      ms: performance.now() - t0,
      pages,
      items,
      newItems: 0,
      sent: 0,
      destinations: [],
      requests: {},
      exitCode: 0,
    });
  }
  return {
    totalMs: performance.now() - started,
    kinds: runs,
    maxRssKb: process.resourceUsage().maxRSS,
    memoryAtEnd: process.memoryUsage(),
  };
}
