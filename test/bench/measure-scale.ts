/**
 * Longer than 300 lines because the world, its two phases and their figures share one setup.
 *
 * 8. Scale (issue 14, "Measure"; docs/architecture.md): many streams, one organization's rate,
 * concurrent workers.
 *
 * The load. The emulator (its own process, 10 ms added to every request, as in the drain) enforces
 * the upstream's tiers, 4 requests/s Basic and 1/s Search (the searches count in both), times the
 * section's multiplier (`--scale-x`, default 10, so a run stays short: the ratios are what count;
 * the config's `upstream` rates are raised to match). The config polls 300 credential domains
 * (a tenth with a backlog of 350 credentials, four pages of 100; a third of the rest a few
 * credentials; the others none), 100 identifier groups (the emulator's `--groups 100`: a tenth
 * return a good share of the tenant's 400 events, a backlog of pages of 10; the rest a few
 * events or none) and the tenant stream, everything to one webhook receiver (`--scale-load`
 * scales the domains, groups and events, for a shorter run at the real limits).
 *
 * The workers. Three bench worker processes (the poller's memory cgroup, procs.ts), each standing
 * for one instance of each of the deployment's worker functions: an events worker and a
 * credentials worker, each with its own runtime (its own shared rate governor), all on one
 * dynalite table. So the governor is shared through DynamoDB between six runtimes in three OS
 * processes. A dispatcher (`dispatchStreams`, in a worker) lists each kind's streams in turn; the
 * workers take them one at a time (SQS with a batch size of 1) and poll each with `workStreams`,
 * its delivery pass included.
 *
 * 1. The sweep, on a fresh table: every stream visited once, each job with a Lambda's longest
 *    time. Timed from the dispatch to the end of the last job. The physical minimum is the larger
 *    of the searches the emulator served ÷ the search rate and all the requests it served ÷ the
 *    basic rate. A final delivery pass sends what the jobs' passes left (a destination's lease
 *    keeps one pass at a time); then the receiver must have every item exactly once.
 * 2. Turns, on another fresh table: runs with a time budget of a quarter of the sweep. Each run
 *    dispatches again (the streams that waited longest first) and the workers poll until the
 *    run's deadline; the jobs not started by then are dropped, as the run ended. Counted: the run
 *    in which each stream was first visited (it read a page); every stream must be within
 *    ceil(sweep ÷ budget) + 1 runs. Then the streams a budget cut short finish, a last pass
 *    sends, and the receiver must again have every item exactly once.
 * Throughout: the emulator's rate stats (the most requests in any sliding second of each tier, and
 * its 429s), and each worker runtime's governor counters (DynamoDB reads and writes per turn).
 *
 * `afterSweep` (the cost section, measure-cost.ts): after the sweep and its last pass, the caller
 * runs phases of its own on the sweep's table and workers (ScaleWorld); the measurement then ends
 * there, with no turns phase and no figures, its result in `raw.afterSweep`.
 */

import { readFileSync } from 'node:fs';
import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import { Dataset } from '../../lib/emulator/dataset.ts';
import { type RateStats, REAL_RATE_LIMITS } from '../../lib/emulator/limits.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import type { StreamJob } from '../../lib/poll/turn.ts';
import { PACE_SHARE } from '../../lib/state/governor.ts';
import {
  createTable,
  type EmulatorProcess,
  startDynaliteProcess,
  startEmulatorProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { type BenchReceiver, startBenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import type { GovernorCount, ScaleJobResult, ScaleSetup, ScaleStats } from './scale.ts';
import { round } from './stats.ts';

export interface ScaleOptions {
  /** The emulator's tiers and the config's rates, as a multiple of the real ones (4/s, 1/s). */
  multiplier: number;
  /** The share of the load (domains, groups, events) to run; 1 is the issue's. */
  load: number;
  /** Runs after the sweep instead of the turns phase (see the header); its result is `raw.afterSweep`. */
  afterSweep?: (world: ScaleWorld) => Promise<unknown>;
}

/** The sweep's world, as `afterSweep` gets it. */
export interface ScaleWorld {
  workers: Worker[];
  emulator: EmulatorProcess;
  receiver: BenchReceiver;
  dynamoEndpoint: string;
  /** The sweep's table, every stream visited once and every item delivered. */
  table: string;
  plan: { domain: string; credentials: number }[];
  groups: number;
  streamCount: number;
  /** Every item the receiver has (`event:<uid>`, `credential:<id>`). */
  expected: Set<string>;
  limits: { basic: number; search: number };
  sweep: {
    ms: number;
    results: ScaleJobResult[];
    stats: ScaleStats[];
    served: { searches: number; requests: number };
  };
  /** Each worker process's counters now. */
  stats(): Promise<ScaleStats[]>;
}

/** The real tiers, requests a second. */
export const BASIC = REAL_RATE_LIMITS.basicPerSecond;
export const SEARCH = REAL_RATE_LIMITS.searchPerSecond;
export const SEED = 42;
export const DOMAINS = 300;
export const GROUPS = 100;
export const EVENTS = 400;
/** A backlogged domain's credentials: four pages of 100 (the product's page size). */
export const BACKLOG = 350;
export const WORKERS = 3;
/** A run's budget in the turns phase, as a share of the sweep. */
const BUDGET_SHARE = 0.25;
/** Lambda's longest timeout: a sweep job's budget, which it never needs. */
const JOB_MS = 15 * 60_000;
export const KINDS: PollKind[] = ['events', 'credentials'];

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`scale: ${message}`);
}

/** The scale world's emulator: its own process, 10 ms added to every answer, the tiers given. */
export function startScaleEmulator(world: {
  basic: number;
  search: number;
  events: number;
  groups: number;
}): Promise<EmulatorProcess> {
  return startEmulatorProcess({
    seed: SEED,
    events: world.events,
    lateMatches: 0,
    credentials: 0,
    groups: world.groups,
    quota: 10_000_000,
    latencyMs: 10,
    rateLimits: { basicPerSecond: world.basic, searchPerSecond: world.search },
  });
}

/** The scale world's tenant as the emulator holds it (its events and identifier groups). */
export function scaleTenant(events: number, groups: number) {
  return new Dataset({
    seed: SEED,
    eventsPerTenant: events,
    lateMatchesPerTenant: 0,
    credentials: 0,
    groupsPerTenant: groups,
  }).tenant('acme');
}

/** The credential domains: every tenth with a backlog, a third of the rest with a few, the others none. */
export function domainPlan(count: number): { domain: string; credentials: number }[] {
  return Array.from({ length: count }, (_, i) => ({
    domain: `d${String(i).padStart(3, '0')}.scale.test`,
    credentials: i % 10 === 0 ? BACKLOG : i % 3 === 1 ? 1 + (i % 5) : 0,
  }));
}

interface Phase {
  results: ScaleJobResult[];
  /** Each worker process's counters at the end of the phase. */
  stats: ScaleStats[];
  delivery: { expected: number; received: number; duplicates: number; missing: number; unexpected: number };
  flushPasses: number;
}

/** The three workers take the streams of each kind from its queue, one at a time, until `stopAt`. */
export async function consume(
  workers: Worker[],
  queues: Record<PollKind, StreamJob[]>,
  deadlineFor: () => number,
  stopAt = Number.POSITIVE_INFINITY,
): Promise<ScaleJobResult[]> {
  const results: ScaleJobResult[] = [];
  await Promise.all(
    workers.flatMap((worker) =>
      KINDS.map(async (kind) => {
        const queue = queues[kind];
        for (let job = queue.shift(); job && Date.now() < stopAt; job = queue.shift()) {
          const result = await worker.call<ScaleJobResult>({ type: 'work', job, deadline: deadlineFor() });
          check(result.exitCode === 0, `${job.stream}: exit ${result.exitCode} ${result.error ?? ''}`);
          results.push(result);
        }
      }),
    ),
  );
  return results;
}

export async function dispatch(workers: Worker[]): Promise<Record<PollKind, StreamJob[]>> {
  const [events, credentials] = await Promise.all(
    KINDS.map((kind, i) => (workers[i] as Worker).call<StreamJob[]>({ type: 'dispatch', kind })),
  );
  return { events: events as StreamJob[], credentials: credentials as StreamJob[] };
}

/** Delivery passes until nothing is left (a pass that met another's lease leaves the rest). */
export async function flush(worker: Worker): Promise<number> {
  for (let pass = 1; pass <= 20; pass++) {
    const out = await worker.call<{ sent: number; left: number }>({
      type: 'pass',
      deadline: Date.now() + 60_000,
    });
    if (out.sent === 0 && out.left === 0) return pass;
  }
  throw new Error('scale: deliveries still left after 20 passes');
}

export function deliveries(hook: BenchReceiver, expected: ReadonlySet<string>): Phase['delivery'] {
  const keys = [...hook.keys.keys()];
  return {
    expected: expected.size,
    received: keys.length,
    duplicates: hook.duplicates(),
    missing: [...expected].filter((k) => !hook.keys.has(k)).length,
    unexpected: keys.filter((k) => !expected.has(k)).length,
  };
}

function sumGovernor(stats: ScaleStats[]): GovernorCount {
  const sum: GovernorCount = { turns: 0, reads: 0, writes: 0, failedWrites: 0, late: 0 };
  for (const s of stats)
    for (const kind of KINDS)
      for (const key of Object.keys(sum) as (keyof GovernorCount)[]) sum[key] += s.governor[kind][key];
  return sum;
}

type LogEntry = { at: string; endpoint: string; status: number };
const SEARCH_ENDPOINTS = new Set(['globalCredentials', 'legacySearch']);

/**
 * Where the sweep's time went, from the emulator's request log: the time between searches beyond
 * the governor's pacing (the search tier stood idle), while event streams were still being polled
 * (before `eventsEnd`) and after, and the ends.
 */
function searchTimeline(log: LogEntry[], t0: number, eventsEnd: number, end: number, searchRate: number) {
  const served = log.filter((r) => r.status !== 429);
  const searches = served.filter((r) => SEARCH_ENDPOINTS.has(r.endpoint)).map((r) => Date.parse(r.at));
  const all = served.map((r) => Date.parse(r.at));
  const paced = 1000 / (searchRate * PACE_SHARE);
  let whileEvents = 0;
  let afterEvents = 0;
  for (let i = 1; i < searches.length; i++) {
    const idle = Math.max(0, (searches[i] as number) - (searches[i - 1] as number) - paced);
    if ((searches[i - 1] as number) < eventsEnd) whileEvents += idle;
    else afterEvents += idle;
  }
  return {
    firstRequestMs: all.length ? Math.min(...all) - t0 : Number.NaN,
    firstSearchMs: searches.length ? (searches[0] as number) - t0 : Number.NaN,
    lastSearchMs: searches.length ? (searches.at(-1) as number) - t0 : Number.NaN,
    lastRequestMs: all.length ? Math.max(...all) - t0 : Number.NaN,
    eventsEndMs: eventsEnd - t0,
    endMs: end - t0,
    /** Time between searches beyond the governor's pacing: the search tier stood idle. */
    searchIdleMs: whileEvents + afterEvents,
    searchIdleWhileEventsMs: whileEvents,
    searchIdleAfterEventsMs: afterEvents,
  };
}

/**
 * Each 429 of the limiter in the log, with the requests of its tier the emulator served in the
 * second before it (ms before the 429, and the gaps between them): what crowded the window.
 */
function refusals(log: LogEntry[]) {
  return log
    .filter((r) => r.status === 429)
    .map((r) => {
      const at = Date.parse(r.at);
      const tier = SEARCH_ENDPOINTS.has(r.endpoint) ? 'search' : 'basic';
      const before = log
        .filter(
          (e) =>
            e.status !== 429 &&
            (tier === 'basic' || SEARCH_ENDPOINTS.has(e.endpoint)) &&
            Date.parse(e.at) > at - 1_000 &&
            Date.parse(e.at) <= at,
        )
        .map((e) => Date.parse(e.at));
      return {
        at: r.at,
        endpoint: r.endpoint,
        tier,
        servedInSecondBefore: before.map((t) => at - t),
        gapsMs: before.slice(1).map((t, i) => t - (before[i] as number)),
      };
    });
}

/**
 * Stalls of this process's event loop, which does little (IPC, the receiver): a stall of 100 ms
 * here means the machine stopped running us, and then likely the others too. That is what a
 * pacing margin of 10% (111 ms in a second) has to absorb.
 */
function stallMonitor(thresholdMs = 100) {
  const tick = 20;
  let last = performance.now();
  let max = 0;
  const stalls: number[] = [];
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - tick;
    last = now;
    max = Math.max(max, late);
    if (late >= thresholdMs) stalls.push(Math.round(late));
  }, tick);
  return () => {
    clearInterval(timer);
    return { maxMs: Math.round(max), overThreshold: stalls.length, thresholdMs, stalls: stalls.slice(0, 50) };
  };
}

/** CPU time the hypervisor took from this VM so far (steal, /proc/stat), in s; undefined off Linux. */
function stealSeconds(): number | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/);
    const steal = Number(cpu?.[8]);
    return Number.isFinite(steal) ? steal / 100 : undefined;
  } catch {
    return undefined;
  }
}

export async function measureScale(
  log: (line: string) => void,
  options: ScaleOptions,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const x = options.multiplier;
  const basic = BASIC * x;
  const search = SEARCH * x;
  const domainCount = Math.max(1, Math.round(DOMAINS * options.load));
  const groups = Math.max(2, Math.round(GROUPS * options.load));
  const events = Math.max(10, Math.round(EVENTS * options.load));
  const plan = domainPlan(domainCount);
  const db = await startDynaliteProcess();
  const emu: EmulatorProcess = await startScaleEmulator({ basic, search, events, groups });
  const hook = await startBenchReceiver('webhook');
  const workers: Worker[] = [];
  try {
    // What the receiver must get: every event of the tenant's feed (the tenant stream reads it
    // all; the groups' searches return some of the same, delivered once), every credential added.
    const tenant = scaleTenant(events, groups);
    const expected = new Set(tenant.events.map((e) => `event:${e.item.metadata.uid}`));
    for (const { domain, credentials } of plan) {
      if (credentials === 0) continue;
      for (const id of await emu.appendCredentials(credentials, domain)) expected.add(`credential:${id}`);
    }
    const streamCount = 1 + tenant.groups.length + plan.length;
    const config = {
      sources: {
        tenantEvents: { lookback: 'P7D', firstRun: 'alert' },
        identifierGroups: tenant.groups.map((g) => ({ id: g.id, lookback: 'P7D', firstRun: 'alert' })),
        credentials: { domains: plan.map((p) => p.domain), lookback: 'P7D', firstRun: 'alert' },
      },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'everything', match: {}, to: ['siem'] }],
      upstream: { requestsPerSecond: basic, searchRequestsPerSecond: search, quotaReserve: 100 },
    };
    const setup: ScaleSetup = { apiUrl: emu.url, token: emu.token, dynamoEndpoint: db.url, config };
    for (let i = 0; i < WORKERS; i++)
      workers.push(await startWorker('scale', setup, { memorySize: POLLER_MEMORY_MB }));
    const open = async (name: string) => {
      const table = await createTable(db.url, name);
      await Promise.all(workers.map((w) => w.call({ type: 'open', table })));
    };
    const stats = () => Promise.all(workers.map((w) => w.call<ScaleStats>({ type: 'stats' })));
    log(
      `  scale: ${streamCount} streams (${plan.length} domains, ${tenant.groups.length} groups, the tenant), ${expected.size} items; limits ${basic}/s basic, ${search}/s search`,
    );

    const stealBefore = stealSeconds();
    const stopStalls = stallMonitor();
    // 1. The sweep.
    await open('scale-sweep');
    await emu.resetRateStats();
    await emu.clearRequests();
    const t0 = Date.now();
    const sweepResults = await consume(workers, await dispatch(workers), () => Date.now() + JOB_MS);
    const sweepEnd = Math.max(...sweepResults.map((r) => r.endedAt));
    const sweepMs = sweepEnd - t0;
    const sweepRate = await emu.rateStats();
    const eventsEnd = Math.max(
      t0,
      ...sweepResults.filter((r) => !r.stream.startsWith('credentials:')).map((r) => r.endedAt),
    );
    const timeline = searchTimeline(await emu.requests(), t0, eventsEnd, sweepEnd, search);
    const sweepFlush = await flush(workers[0] as Worker);
    const sweep: Phase = {
      results: sweepResults,
      stats: await stats(),
      delivery: deliveries(hook, expected),
      flushPasses: sweepFlush,
    };
    const org = (s: RateStats) => s.organizations[0];
    const served = {
      searches: org(sweepRate)?.search.admitted ?? 0,
      requests: org(sweepRate)?.basic.admitted ?? 0,
    };
    if (options.afterSweep) {
      const afterSweep = await options.afterSweep({
        workers,
        emulator: emu,
        receiver: hook,
        dynamoEndpoint: db.url,
        table: 'scale-sweep',
        plan,
        groups: tenant.groups.length,
        streamCount,
        expected,
        limits: { basic, search },
        sweep: { ms: sweepMs, results: sweepResults, stats: sweep.stats, served },
        stats,
      });
      return { figures: [], raw: { options: { multiplier: x, load: options.load }, afterSweep } };
    }
    const minimumMs = Math.max(served.searches / search, served.requests / basic) * 1000;
    const visitedOnce = new Map<string, number>();
    for (const r of sweepResults)
      if (r.pages > 0) visitedOnce.set(r.stream, (visitedOnce.get(r.stream) ?? 0) + 1);
    const notDone = sweepResults.filter((r) => r.status !== 'done');
    log(
      `  scale sweep: ${round(sweepMs / 1000)} s for ${served.requests} requests (${served.searches} searches); minimum ${round(minimumMs / 1000)} s; ratio ${round(sweepMs / minimumMs, 3)}`,
    );

    // 2. Turns: runs with a budget of a quarter of the sweep.
    hook.reset();
    await open('scale-turns');
    // Rounded up, so the budget is never below its share and the bound is ceil(1 / share) + 1.
    const budgetMs = Math.ceil(sweepMs * BUDGET_SHARE);
    const bound = Math.ceil(sweepMs / budgetMs) + 1;
    const firstVisit = new Map<string, number>();
    const lastStatus = new Map<string, string>();
    const perRun: { visited: number; firstVisits: number; ms: number }[] = [];
    const turnResults: ScaleJobResult[] = [];
    while (firstVisit.size < streamCount && perRun.length < bound * 3) {
      const run = perRun.length + 1;
      const start = Date.now();
      const deadline = start + budgetMs;
      const results = await consume(workers, await dispatch(workers), () => deadline, deadline);
      let firsts = 0;
      for (const r of results) {
        if (r.status) lastStatus.set(r.stream, r.status);
        if (r.pages > 0 && !firstVisit.has(r.stream)) {
          firstVisit.set(r.stream, run);
          firsts += 1;
        }
      }
      turnResults.push(...results);
      perRun.push({
        visited: results.filter((r) => r.pages > 0).length,
        firstVisits: firsts,
        ms: Date.now() - start,
      });
      log(
        `  scale turns: run ${run} (budget ${round(budgetMs / 1000)} s) visited ${perRun.at(-1)?.visited} streams, ${firsts} for the first time, ${firstVisit.size}/${streamCount}`,
      );
    }
    const waited = Math.max(
      ...[...firstVisit.values()],
      firstVisit.size < streamCount ? Number.POSITIVE_INFINITY : 0,
    );
    // The streams a budget cut short finish (the next runs would), then the last pass.
    const unfinished = [...lastStatus].filter(([, s]) => s !== 'done').map(([stream]) => stream);
    const jobsOf = (kind: PollKind) =>
      unfinished
        .filter((s) => (kind === 'credentials') === s.startsWith('credentials:'))
        .map((stream) => ({ kind, stream }));
    const finish = await consume(
      workers,
      { events: jobsOf('events'), credentials: jobsOf('credentials') },
      () => Date.now() + JOB_MS,
    );
    const turns: Phase = {
      results: [...turnResults, ...finish],
      stats: await stats(),
      delivery: { expected: 0, received: 0, duplicates: 0, missing: 0, unexpected: 0 },
      flushPasses: await flush(workers[0] as Worker),
    };
    turns.delivery = deliveries(hook, expected);
    const rate = await emu.rateStats();
    const o = org(rate);
    const refused = refusals(await emu.requests());
    const stalls = stopStalls();
    const stealAfter = stealSeconds();
    const steal =
      stealBefore === undefined || stealAfter === undefined ? undefined : round(stealAfter - stealBefore, 1);
    const refusedNotes = refused
      .slice(0, 3)
      .map(
        (r) =>
          `${r.tier}: ${r.servedInSecondBefore.length} served in the ${r.servedInSecondBefore[0] ?? 0} ms before`,
      );
    const machineNote = `this process stalled >= 100 ms ${stalls.overThreshold} times (max ${stalls.maxMs} ms); CPU steal ${steal ?? 'n/a'} s`;

    const governor = sumGovernor(sweep.stats);
    const perProcess = sweep.stats.map((s) => {
      const g = sumGovernor([s]);
      return `${round((g.reads + g.writes) / g.turns, 2)}`;
    });
    const allDynamo = sweep.stats.reduce((n, s) => n + Object.values(s.dynamo).reduce((a, b) => a + b, 0), 0);
    const turnsGovernor = sumGovernor(turns.stats);
    const offDelivery = (p: Phase) => p.delivery.missing + p.delivery.unexpected;
    const tag = `x${x}: ${basic}/s, ${search}/s`;
    const figures: Figure[] = [
      figure({
        section: 'scale',
        id: 'scale.sweepS',
        label: `scale (${tag}): time to visit all ${streamCount} streams once, 3 workers`,
        value: round(sweepMs / 1000, 1),
        unit: 's',
        detail: `${plan.length} domains, ${tenant.groups.length} groups, tenant; ${expected.size} items; served ${served.requests} requests, ${served.searches} searches; last page at ${round((Math.max(...sweepResults.map((r) => r.polledAt)) - t0) / 1000, 1)} s`,
      }),
      figure({
        section: 'scale',
        id: 'scale.minimumS',
        label: '  physical minimum: max(searches / search rate, requests / basic rate)',
        value: round(minimumMs / 1000, 1),
        unit: 's',
        detail: `${served.searches}/${search} = ${round(served.searches / search, 1)} s, ${served.requests}/${basic} = ${round(served.requests / basic, 1)} s`,
      }),
      figure({
        section: 'scale',
        id: 'scale.ratio',
        label: '  sweep / physical minimum',
        value: round(sweepMs / minimumMs, 3),
        unit: 'x',
        budget: { max: 1.15, holds: 'ratio' },
        detail: `pacing at ${PACE_SHARE * 100}% alone gives ${round(1 / PACE_SHARE, 3)}; search tier idle beyond pacing ${round(timeline.searchIdleMs / 1000, 1)} s (${round(timeline.searchIdleWhileEventsMs / 1000, 1)} s while event streams were polled, to ${round(timeline.eventsEndMs / 1000, 1)} s); first search at ${round(timeline.firstSearchMs / 1000, 2)} s, last at ${round(timeline.lastSearchMs / 1000, 1)} s`,
      }),
      figure({
        section: 'scale',
        id: 'scale.sweepStreams',
        label: '  streams not visited exactly once, to the end, in the sweep',
        value:
          notDone.length +
          [...visitedOnce.values()].filter((n) => n !== 1).length +
          (streamCount - visitedOnce.size),
        unit: '',
        budget: { max: 0, holds: 'count' },
        detail: notDone.length
          ? notDone
              .slice(0, 3)
              .map((r) => `${r.stream} ${r.status}`)
              .join(', ')
          : undefined,
      }),
      figure({
        section: 'scale',
        id: 'scale.maxBasic',
        label: `  most requests in any sliding 1 s, Basic (both phases)`,
        value: o?.basic.maxAdmittedPerWindow ?? 0,
        unit: '',
        budget: { max: basic, holds: 'count' },
        detail: `arrivals ${o?.basic.maxArrivalsPerWindow ?? 0}; sweep alone ${org(sweepRate)?.basic.maxAdmittedPerWindow ?? 0}`,
      }),
      figure({
        section: 'scale',
        id: 'scale.maxSearch',
        label: `  most requests in any sliding 1 s, Search (both phases)`,
        value: o?.search.maxAdmittedPerWindow ?? 0,
        unit: '',
        budget: { max: search, holds: 'count' },
        detail: `arrivals ${o?.search.maxArrivalsPerWindow ?? 0}; sweep alone ${org(sweepRate)?.search.maxAdmittedPerWindow ?? 0}`,
      }),
      figure({
        section: 'scale',
        id: 'scale.refused',
        label: '  429s received (both phases)',
        value: rate.refused,
        unit: '',
        budget: { max: 0, holds: 'count' },
        detail: [...refusedNotes, machineNote].join('; '),
      }),
      figure({
        section: 'scale',
        id: 'scale.duplicates',
        label: '  items delivered more than once (both phases)',
        value: sweep.delivery.duplicates + turns.delivery.duplicates,
        unit: '',
        budget: { max: 0, holds: 'count' },
        detail: `each phase ${expected.size} items (${tenant.events.length} events, ${expected.size - tenant.events.length} credentials) to one webhook`,
      }),
      figure({
        section: 'scale',
        id: 'scale.missing',
        label: '  items missing or unexpected at the receiver (both phases)',
        value: offDelivery(sweep) + offDelivery(turns),
        unit: '',
        budget: { max: 0, holds: 'count' },
        detail: `received ${sweep.delivery.received} then ${turns.delivery.received} distinct; a last pass sent what the jobs' passes left (${sweep.flushPasses} and ${turns.flushPasses} passes)`,
      }),
      figure({
        section: 'scale',
        id: 'scale.turnsRuns',
        label: `  runs until every stream was visited, budget ${BUDGET_SHARE * 100}% of a sweep (${round(budgetMs / 1000, 1)} s)`,
        value: waited,
        unit: '',
        budget: { max: bound, holds: 'count' },
        detail: `bound ceil(sweep / budget) + 1; streams visited per run ${perRun.map((r) => r.visited).join(', ')}`,
      }),
      figure({
        section: 'scale',
        id: 'scale.governorCost',
        label: '  governor: DynamoDB requests per upstream request (sweep, 6 runtimes summed)',
        value: round((governor.reads + governor.writes) / governor.turns, 3),
        unit: '',
        detail: `${governor.turns} turns: ${governor.reads} reads, ${governor.writes} writes, of which ${governor.writes - governor.failedWrites} booked a slot (${round((governor.writes - governor.failedWrites) / governor.turns, 2)} a request; ${governor.late} booked again, too late for their own) and ${governor.failedWrites} were refused (lost races); per process ${perProcess.join(', ')}; turns phase ${round((turnsGovernor.reads + turnsGovernor.writes) / turnsGovernor.turns, 2)}; all DynamoDB requests per upstream request ${round(allDynamo / served.requests, 1)}`,
      }),
    ];
    return {
      figures,
      raw: {
        options,
        limits: { basic, search },
        streams: { total: streamCount, domains: plan.length, groups: tenant.groups.length },
        items: expected.size,
        sweep: {
          ms: sweepMs,
          minimumMs,
          served,
          rate: sweepRate,
          timeline,
          delivery: sweep.delivery,
          flushPasses: sweep.flushPasses,
          governor: sweep.stats,
          notDone: notDone.map((r) => ({ stream: r.stream, status: r.status, error: r.error })),
          jobs: sweepResults.map(({ usage: _usage, ...r }) => ({
            ...r,
            startedAt: r.startedAt - t0,
            polledAt: r.polledAt - t0,
            endedAt: r.endedAt - t0,
          })),
        },
        turns: {
          budgetMs,
          bound,
          waited,
          perRun,
          firstVisit: Object.fromEntries(firstVisit),
          finished: finish.length,
          delivery: turns.delivery,
          flushPasses: turns.flushPasses,
          governor: turns.stats,
        },
        rate,
        refusals: refused,
        stalls,
        stealSeconds: steal,
      },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await hook.close();
    await emu.stop();
    await db.stop();
  }
}
