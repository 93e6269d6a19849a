/**
 * Longer than 300 lines because the section's measurement, its derivation into per-use figures and
 * its report with the committed baseline read as one story; the month's arithmetic is cost-model.ts.
 *
 * The cost section (issue 40): the monthly bill of the default stack, computed from counts measured
 * in the scale world (measure-scale.ts: 401 streams, 300 credential domains, 100 identifier groups
 * and the tenant, three worker processes, ×10 tiers by default), at the list prices of prices.ts.
 *
 * Measured, after the scale section's sweep (every stream walked once from a fresh table, every
 * item delivered), on the same table and workers (`afterSweep`), each job counted in its worker
 * (scale.ts JobUsage: upstream requests and the time it waited for them, DynamoDB requests and
 * capacity units, log and EMF bytes, the metrics the EMF publishes):
 * 1. Storage: the table scanned, item sizes summed (with DynamoDB's per-item overhead and the
 *    index's copies): bytes per stream state, and per item delivered.
 * 2. An idle sweep: each kind dispatched (timed, its reads counted) and every stream visited once
 *    again; nothing is new. What a visit costs at steady state, per kind.
 * 3. A trickle sweep: one new credential on every tenth domain and ten new events on the tenant's
 *    feed, then every stream visited again, and a last pass. What one more delivered item costs
 *    beyond its visit, per kind: the sweep's counts less its visits at the idle sweep's mean (its
 *    time: the jobs that found new items, less the idle median each), over the items delivered.
 * The metrics: each job's EMF lines are read for the metrics they publish. An idle visit must
 * publish none with a `stream` dimension (lib/metrics.ts `countForStream`; `cost.idleStreamMetrics`
 * counts the idle visits that did). A trickle visit's are counted once for each item it fetched,
 * over the items delivered: a stream's own metrics per item, which the model bills an hour each
 * (cost-model.ts KindMeasure `streamMetricsPerItem`).
 * Durations on this machine stand for Lambda's (cost-model.ts says how they are billed), taken as
 * the median so a stall of this machine is not counted as Lambda's time.
 *
 * Billed (cost-model.ts): the default stack as `npx cdk synth` makes it with the example config
 * (functions' memory, schedules, event sources' concurrency, alarms, dashboards, the secret, log
 * retention: read from the synthesized template, bundling skipped), one month of 730 hours, at the
 * measured world's 401 streams and for 1, 10 and 100 tenants of 40 streams each (10 event streams,
 * 30 domains: the world's mix), extrapolated from the per-stream figures: one organization's rate
 * is shared by all its tenants, so where the streams need more requests than the paced rate allows,
 * the bill is of the schedule they would need (printed beside each).
 *
 * `cost.perStreamRatio`: this run's monthly cost per stream over the committed baseline's
 * (test/bench/cost-baseline.json, its measured per-use figures billed with the same prices and
 * model), at most 1.10: a change that raises the bill per stream by more than 10% fails the bench.
 * Refresh the baseline after a deliberate change, and commit it:
 * `BENCH_COST_BASELINE=write npm run bench -- --only cost`. docs/deploy.md's cost table is the
 * baseline's bill (cost-docs.ts: at the defaults, with the example config, the world's): written
 * with the baseline, checked on every run (`cost.docsTable`).
 *
 * `--only cost` runs the scale world itself (about 3 minutes at ×10; `--scale-load` makes it
 * shorter and the world smaller, `--scale-x` changes the tiers); it does not run the turns phase.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { type AttributeValue, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { StreamJob } from '../../lib/poll/turn.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { BASELINE_PATH, docsFigures } from './cost-docs.ts';
import {
  type Bill,
  bill,
  COST_KINDS,
  type Deployment,
  EMULATOR_LATENCY_MS,
  every,
  fmt,
  ITEM_OVERHEAD_BYTES,
  ITEMS_PER_STREAM_PER_DAY,
  type Kind,
  type KindMeasure,
  LINE_CONTEXT_BYTES,
  type Measured,
  tenantsDeployment,
  UPSTREAM_LATENCY_MS,
  type Use,
} from './cost-model.ts';
import { stackShape } from './cost-stack.ts';
import {
  consume,
  deliveries,
  flush,
  measureScale,
  type ScaleOptions,
  type ScaleWorld,
} from './measure-scale.ts';
import { PRICES_READ_ON, PRICES_REGION } from './prices.ts';
import { itemBytes } from './product.ts';
import { type Figure, figure, machine } from './report.ts';
import type { ScaleJobResult, ScaleStats } from './scale.ts';
import { median, round } from './stats.ts';

/** Lambda's longest timeout: a job's budget in the cost sweeps, which it never needs. */
const JOB_MS = 15 * 60_000;
const TENANT_COUNTS = [1, 10, 100];

const kindOf = (stream: string): Kind => (stream.startsWith('credentials:') ? 'credentials' : 'events');

/** A job as the cost section keeps it: what it used, and its time as Lambda would bill it. */
interface CostJob {
  stream: string;
  kind: Kind;
  status?: string;
  /** Items its pages held, new or not, and the new ones. */
  items: number;
  newItems: number;
  /** The job's own time on this machine with the real upstream's answers (see cost-model.ts). */
  lambdaMs: number;
  upstream: number;
  dynamoRequests: number;
  /** DynamoDB requests, and the units reported, by command. */
  dynamo: Record<string, number>;
  units: Record<string, number>;
  readUnits: number;
  writeUnits: number;
  logBytes: number;
  metrics: string[];
}

function costJob(r: ScaleJobResult): CostJob {
  const u = r.usage;
  const own = r.endedAt - r.startedAt - u.rateWaitMs;
  return {
    stream: r.stream,
    kind: kindOf(r.stream),
    ...(r.status ? { status: r.status } : {}),
    items: r.items,
    newItems: r.newItems,
    lambdaMs: Math.max(0, own - u.upstream * EMULATOR_LATENCY_MS) + u.upstream * UPSTREAM_LATENCY_MS,
    upstream: u.upstream,
    dynamoRequests: Object.values(u.dynamo).reduce((a, b) => a + b, 0),
    dynamo: u.dynamo,
    units: u.units,
    readUnits: u.capacity.readUnits,
    writeUnits: u.capacity.writeUnits + u.capacity.failedWrites + u.capacity.indexWriteUnits,
    logBytes: u.logBytes + u.logLines * LINE_CONTEXT_BYTES + u.emfBytes,
    metrics: u.metrics,
  };
}

/** The difference of two workers' counters (one process's), as a Use's counts. */
function statsDelta(before: ScaleStats, after: ScaleStats) {
  const sum = (s: ScaleStats) => Object.values(s.dynamo).reduce((a, b) => a + b, 0);
  const c = (s: ScaleStats) => s.capacity;
  return {
    dynamoRequests: sum(after) - sum(before),
    readUnits: c(after).readUnits - c(before).readUnits,
    writeUnits:
      c(after).writeUnits +
      c(after).failedWrites +
      c(after).indexWriteUnits -
      (c(before).writeUnits + c(before).failedWrites + c(before).indexWriteUnits),
    logBytes:
      after.output.logBytes +
      after.output.emfBytes +
      after.output.logLines * LINE_CONTEXT_BYTES -
      (before.output.logBytes + before.output.emfBytes + before.output.logLines * LINE_CONTEXT_BYTES),
  };
}

/** Scans the table: bytes of the stream states and of everything else, as DynamoDB stores them. */
async function tableBytes(endpoint: string, table: string) {
  const client = createDynamoClient({ endpoint });
  const bytes = { streams: 0, streamItems: 0, other: 0, items: 0 };
  try {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        const size =
          itemBytes(item as unknown as Record<string, Record<string, unknown>>) + ITEM_OVERHEAD_BYTES;
        // Projection ALL: an item in the index is stored again there.
        const stored = 'gsi1pk' in item ? 2 * size : size;
        bytes.items += 1;
        if (String(item.pk?.S).startsWith('stream#')) {
          bytes.streams += stored;
          bytes.streamItems += 1;
        } else bytes.other += stored;
      }
      start = page.LastEvaluatedKey;
    } while (start);
  } finally {
    client.destroy();
  }
  return bytes;
}

interface SweepRecord {
  jobs: CostJob[];
  /** Per kind, the dispatch: its time and counts (the kind's dispatcher runs in one process). */
  dispatch: Record<Kind, { ms: number; streams: number; dynamoRequests: number; readUnits: number }>;
  /** What the last delivery pass used (process 0), and its passes. */
  flush: ReturnType<typeof statsDelta> & { passes: number };
  ms: number;
}

/** Dispatches each kind (timed, counted), visits every stream once, and runs the last pass. */
async function sweepOnce(world: ScaleWorld): Promise<SweepRecord> {
  const t0 = Date.now();
  const queues = {} as Record<Kind, StreamJob[]>;
  const dispatch = {} as SweepRecord['dispatch'];
  for (const [i, kind] of COST_KINDS.entries()) {
    const w = world.workers[i] as ScaleWorld['workers'][number];
    const before = (await world.stats())[i] as ScaleStats;
    const start = performance.now();
    queues[kind] = await w.call<StreamJob[]>({ type: 'dispatch', kind });
    const ms = performance.now() - start;
    const d = statsDelta(before, (await world.stats())[i] as ScaleStats);
    dispatch[kind] = {
      ms,
      streams: queues[kind].length,
      dynamoRequests: d.dynamoRequests,
      readUnits: d.readUnits,
    };
  }
  const results = await consume(world.workers, queues, () => Date.now() + JOB_MS);
  const before = (await world.stats())[0] as ScaleStats;
  const passes = await flush(world.workers[0] as ScaleWorld['workers'][number]);
  const after = (await world.stats())[0] as ScaleStats;
  return {
    jobs: results.map(costJob),
    dispatch,
    flush: { ...statsDelta(before, after), passes },
    ms: Date.now() - t0,
  };
}

/** Adds items upstream for the trickle sweep: a credential on every tenth domain, ten tenant events. */
async function addItems(world: ScaleWorld): Promise<number> {
  let added = 0;
  for (const [i, { domain }] of world.plan.entries()) {
    if (i % 10 !== 5 && world.plan.length > 5) continue;
    for (const id of await world.emulator.appendCredentials(1, domain))
      world.expected.add(`credential:${id}`);
    added += 1;
  }
  const res = await fetch(`${world.emulator.url}/_emulator/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ tenant: 'acme', count: 10 }),
  });
  if (!res.ok) throw new Error(`cost: the emulator refused new events: HTTP ${res.status}`);
  for (const uid of ((await res.json()) as { added: string[] }).added) {
    world.expected.add(`event:${uid}`);
    added += 1;
  }
  return added;
}

/** The section's phases on the scale world (the header's 1 to 3). */
async function costPhases(world: ScaleWorld, log: (line: string) => void) {
  const storage = await tableBytes(world.dynamoEndpoint, world.table);
  const sweptItems = world.expected.size;
  const idle = await sweepOnce(world);
  log(`  cost: idle sweep, ${idle.jobs.length} visits in ${round(idle.ms / 1000, 1)} s`);
  const seen = new Set(world.receiver.keys.keys());
  const added = await addItems(world);
  const trickle = await sweepOnce(world);
  const fresh = [...world.receiver.keys.keys()].filter((k) => !seen.has(k));
  const delivered = {
    events: fresh.filter((k) => k.startsWith('event:')).length,
    credentials: fresh.filter((k) => k.startsWith('credential:')).length,
  };
  log(
    `  cost: trickle sweep, ${added} items added, ${fresh.length} delivered, in ${round(trickle.ms / 1000, 1)} s`,
  );
  return {
    world: {
      streams: world.streamCount,
      byKind: { events: 1 + world.groups, credentials: world.plan.length },
      limits: world.limits,
      sweepS: round(world.sweep.ms / 1000, 1),
    },
    storage: { ...storage, sweptItems },
    idle,
    trickle: { ...trickle, added, delivered, check: deliveries(world.receiver, world.expected) },
  };
}

type Phases = Awaited<ReturnType<typeof costPhases>>;

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
const COUNTS = ['upstream', 'dynamoRequests', 'readUnits', 'writeUnits', 'logBytes'] as const;

/** Whether a metric key, `Name{service=…,stream=…}`, has a `stream` dimension: a stream's own. */
const ofStream = (key: string) => /[{,]stream=/.test(key);
const streamMetrics = (j: CostJob) => j.metrics.filter(ofStream).length;

/** The metrics that are not a stream's own, by what they are per: a destination, or the service. */
function sharedMetrics(keys: Iterable<string>) {
  const out = { destination: new Set<string>(), service: new Set<string>() };
  for (const key of keys) {
    if (ofStream(key)) continue;
    (/[{,]destination=/.test(key) ? out.destination : out.service).add(key);
  }
  return out;
}

/** The per-use figures of one kind, from the two sweeps. */
function kindMeasure(p: Phases, kind: Kind): KindMeasure {
  const idle = p.idle.jobs.filter((j) => j.kind === kind);
  const trickle = p.trickle.jobs.filter((j) => j.kind === kind);
  const idleMean = Object.fromEntries(COUNTS.map((c) => [c, mean(idle.map((j) => j[c]))])) as Record<
    (typeof COUNTS)[number],
    number
  >;
  const idleMs = median(idle.map((j) => j.lambdaMs));
  const streams = p.world.byKind[kind];
  const visit: Use = { ...idleMean, lambdaMs: idleMs };
  // Beyond the visits: the trickle's counts less its visits at the idle mean, and the last pass's share.
  const items = Math.max(1, p.trickle.delivered[kind]);
  const share =
    p.trickle.delivered[kind] / Math.max(1, p.trickle.delivered.events + p.trickle.delivered.credentials);
  const extra = (c: (typeof COUNTS)[number]) => {
    const jobs = trickle.reduce((n, j) => n + j[c], 0) - trickle.length * idleMean[c];
    const pass = c === 'upstream' ? 0 : p.trickle.flush[c] * share;
    return Math.max(0, (jobs + pass) / items);
  };
  const found = trickle.filter((j) => j.newItems > 0);
  const idleStreamMetrics = mean(idle.map(streamMetrics));
  // A stream's own metrics an item brings, on every stream that fetched it: each trickle visit's
  // beyond an idle visit's, once for each item it fetched (items each in an hour of their own, the
  // model's assumption, would each have had a visit, and an hour of those metrics, of their own).
  const streamMetricsPerItem =
    trickle.reduce(
      (n, j) => n + Math.max(0, streamMetrics(j) - idleStreamMetrics) * Math.max(1, j.items),
      0,
    ) / items;
  const item: Use = {
    upstream: extra('upstream'),
    dynamoRequests: extra('dynamoRequests'),
    readUnits: extra('readUnits'),
    writeUnits: extra('writeUnits'),
    logBytes: extra('logBytes'),
    lambdaMs: Math.max(0, found.reduce((n, j) => n + j.lambdaMs - idleMs, 0) / items),
  };
  const service = `service=poll-${kind}`;
  const metrics = sharedMetrics(
    [...p.idle.jobs, ...p.trickle.jobs].flatMap((j) => j.metrics).filter((k) => k.includes(service)),
  );
  const d = p.idle.dispatch[kind];
  return {
    streams,
    visit,
    // The stream states a visit reads (lib/poll/cycle.ts streamsInTurn): one BatchGetItem.
    stateReadUnits: mean(idle.map((j) => j.units.BatchGetItem ?? 0)),
    item,
    idleStreamMetrics,
    streamMetricsPerItem,
    serviceMetrics: metrics.service.size,
    destinationMetrics: metrics.destination.size,
    dispatch: {
      msPerStream: d.ms / Math.max(1, d.streams),
      requestsPerStream: d.dynamoRequests / Math.max(1, d.streams),
      readUnitsPerStream: d.readUnits / Math.max(1, d.streams),
      // The dispatcher's line lists the streams it enqueued (functions/dispatch.ts).
      logBytesPerStream: mean(idle.map((j) => JSON.stringify(j.stream).length + 1)),
    },
  };
}

export function measuredOf(p: Phases): Measured {
  const s = p.storage;
  return {
    kinds: { events: kindMeasure(p, 'events'), credentials: kindMeasure(p, 'credentials') },
    storage: {
      bytesPerStream: s.streams / Math.max(1, s.streamItems),
      bytesPerItem: s.other / Math.max(1, s.sweptItems),
    },
    destinations: 1,
  };
}

interface Baseline {
  note: string;
  command: string;
  date: string;
  machine: string;
  pricesReadOn: string;
  monthlyUsd: number;
  streams: number;
  perStreamUsd: number;
  measured: Measured;
}

function readBaseline(): Baseline | undefined {
  try {
    return JSON.parse(readFileSync(BASELINE_PATH, 'utf8')) as Baseline;
  } catch {
    return undefined;
  }
}

/** Whether a baseline holds every figure the model bills (one written before a change may not). */
const billable = (b: Baseline) =>
  COST_KINDS.every((k) => typeof b.measured.kinds[k]?.streamMetricsPerItem === 'number');

const usd = (n: number) => round(n, n >= 100 ? 0 : 2);

/** A job for the raw output: its metrics' names left out, the count of its stream's own kept. */
const withoutMetrics = ({ metrics, ...j }: CostJob) => ({
  ...j,
  streamMetrics: metrics.filter(ofStream).length,
});

export async function measureCost(
  log: (line: string) => void,
  scale: Pick<ScaleOptions, 'multiplier' | 'load'> = { multiplier: 10, load: 1 },
): Promise<{ figures: Figure[]; raw: unknown }> {
  const stack = stackShape();
  log(
    `  cost: the default stack: workers ${stack.workerMemoryMb.events} MB, ${stack.alarms} alarms, events ${every(stack.intervalS.events)}, credentials ${every(stack.intervalS.credentials)}`,
  );
  const run = await measureScale(log, { ...scale, afterSweep: (world) => costPhases(world, log) });
  const phases = (run.raw as { afterSweep: Phases }).afterSweep;
  const measured = measuredOf(phases);
  const world: Deployment = {
    streams: { events: measured.kinds.events.streams, credentials: measured.kinds.credentials.streams },
    tenants: [],
    destinations: measured.destinations,
  };
  const streams = world.streams.events + world.streams.credentials;
  const here = bill(measured, stack, world);
  const fixed = bill(measured, stack, { ...world, streams: { events: 0, credentials: 0 } });
  const perStream = here.total / streams;
  const tiers = TENANT_COUNTS.map((n) => ({
    tenants: n,
    bill: bill(measured, stack, tenantsDeployment(n, 1)),
  }));

  // Written (on request) before the comparison, which then compares this run with itself: 1.
  let baseline = readBaseline();
  if (process.env.BENCH_COST_BASELINE === 'write') {
    const host = machine();
    const written: Baseline = {
      note: "The cost section's baseline (test/bench/measure-cost.ts): refresh with BENCH_COST_BASELINE=write npm run bench -- --only cost, and commit it.",
      // Where the figures were written changes none of them.
      command: `npm run bench -- ${process.argv
        .slice(2)
        .join(' ')
        .replace(/\s*--out(=|\s+)\S+/, '')}`.trim(),
      date: new Date().toISOString().slice(0, 10),
      machine: `${host.cpu}, ${host.cores} cores, Node ${host.node}`,
      pricesReadOn: PRICES_READ_ON,
      monthlyUsd: round(here.total, 2),
      streams,
      perStreamUsd: round(perStream, 4),
      measured,
    };
    writeFileSync(BASELINE_PATH, `${JSON.stringify(written, null, 2)}\n`);
    log(`  cost: baseline written to ${BASELINE_PATH}`);
    baseline = written;
  }
  const baselineBill = baseline && billable(baseline) ? bill(baseline.measured, stack, world) : undefined;
  const ratio = baselineBill ? here.total / baselineBill.total : Number.NaN;
  const tag = `${world.streams.events} event streams ${every(here.intervalS.events)}, ${world.streams.credentials} domains ${every(here.intervalS.credentials)}`;
  const lineOf = (b: Bill, id: string) => b.lines.find((l) => l.id === id);
  // Each sweep must visit every stream to the end, or its visits would look cheaper than they are.
  const notDone = [...phases.idle.jobs, ...phases.trickle.jobs]
    .filter((j) => j.status !== 'done')
    .map((j) => `${j.stream} ${j.status ?? 'not tried'}`);
  const k = measured.kinds;
  // A stream's own metrics: none at an idle visit; those of the trickle's visits that found items.
  const idleWithStreamMetrics = phases.idle.jobs.filter((j) => j.metrics.some(ofStream));
  const publishing = phases.trickle.jobs.filter((j) => j.metrics.some(ofStream));
  const names = [
    ...new Set(publishing.flatMap((j) => j.metrics.filter(ofStream).map((m) => m.slice(0, m.indexOf('{'))))),
  ].sort();
  const trickleStreamMetrics = publishing.reduce((n, j) => n + streamMetrics(j), 0);
  const trickleItems = phases.trickle.delivered.events + phases.trickle.delivered.credentials;
  const figures: Figure[] = [
    figure({
      section: 'cost',
      id: 'cost.monthly',
      label: `cost: the default stack a month, ${streams} streams (the scale world)`,
      value: usd(here.total),
      unit: '$',
      detail: `${tag}; ${ITEMS_PER_STREAM_PER_DAY} new item a stream a day; ${PRICES_REGION} list prices of ${PRICES_READ_ON}, no free tier; fixed part (no streams) $${usd(fixed.total)}`,
    }),
    ...here.lines.map((l) =>
      figure({
        section: 'cost',
        id: `cost.line.${l.id}`,
        label: `  ${l.label}`,
        value: usd(l.usd),
        unit: '$',
        detail: `${fmt(l.quantity)} ${l.unit}${l.detail ? `; ${l.detail}` : ''}`,
      }),
    ),
    // At the defaults and with the example config; docs/deploy.md's table checked (cost-docs.ts).
    ...docsFigures(measured, stack, baseline && baselineBill ? baseline : undefined, log),
    figure({
      section: 'cost',
      id: 'cost.per100Streams',
      label: '  per 100 streams (the bill less its fixed part)',
      value: usd(((here.total - fixed.total) / streams) * 100),
      unit: '$',
      detail: `an event stream visited ${every(here.intervalS.events)}: ${round(k.events.visit.upstream, 2)} requests, ${round(k.events.visit.writeUnits, 1)} write / ${round(k.events.visit.readUnits, 1)} read units (${round(k.events.stateReadUnits, 1)} its state), ${round(k.events.visit.lambdaMs)} ms; a domain ${every(here.intervalS.credentials)}: ${round(k.credentials.visit.upstream, 2)} searches, ${round(k.credentials.visit.writeUnits, 1)} / ${round(k.credentials.visit.readUnits, 1)} units (${round(k.credentials.stateReadUnits, 1)}), ${round(k.credentials.visit.lambdaMs)} ms`,
    }),
    figure({
      section: 'cost',
      id: 'cost.perTenant',
      label: '  per tenant of 40 streams (10 tenants, less the fixed part)',
      value: usd(((tiers.find((t) => t.tenants === 10)?.bill.total ?? Number.NaN) - fixed.total) / 10),
      unit: '$',
      detail: `10 event streams ${every(stack.intervalS.events)} and 30 domains ${every(stack.intervalS.credentials)} each; with tenants entries, a PollLagSeconds a tenant and kind in the hours its streams find items`,
    }),
    ...tiers.map(({ tenants, bill: b }) =>
      figure({
        section: 'cost',
        id: `cost.tenants${tenants}`,
        label: `  ${tenants} tenant${tenants > 1 ? 's' : ''} of 40 streams a month (extrapolated)`,
        value: usd(b.total),
        unit: '$',
        detail: `$${usd(b.total / tenants)} a tenant; events ${every(b.intervalS.events)}, credentials ${every(b.intervalS.credentials)}${b.intervalS.events > stack.intervalS.events || b.intervalS.credentials > stack.intervalS.credentials ? ' (the schedule the shared rate allows)' : ''}; ${round(b.rate.basic, 2)}/${round(b.rate.basicLimit, 1)} requests/s, ${round(b.rate.search, 2)}/${round(b.rate.searchLimit, 1)} searches/s; metrics $${usd(lineOf(b, 'metrics')?.usd ?? 0)}`,
      }),
    ),
    figure({
      section: 'cost',
      id: 'cost.perStreamRatio',
      label: '  cost per stream / the committed baseline',
      value: round(ratio, 3),
      unit: 'x',
      budget: { max: 1.1, holds: 'ratio' },
      detail:
        baseline && !baselineBill
          ? `the baseline of ${baseline.date} lacks figures this model bills: BENCH_COST_BASELINE=write npm run bench -- --only cost, then commit it`
          : baseline
            ? `$${round(perStream, 3)} vs $${round((baselineBill?.total ?? 0) / streams, 3)} a stream (baseline of ${baseline.date}, ${baseline.machine}); refresh: BENCH_COST_BASELINE=write npm run bench -- --only cost`
            : `no baseline at ${BASELINE_PATH}: BENCH_COST_BASELINE=write npm run bench -- --only cost, then commit it`,
    }),
    figure({
      section: 'cost',
      id: 'cost.idleStreamMetrics',
      label: '  idle visits that published a metric of their stream',
      value: idleWithStreamMetrics.length,
      unit: '',
      budget: { max: 0, holds: 'count' },
      detail: `${idleWithStreamMetrics.length ? `${idleWithStreamMetrics[0]?.metrics.filter(ofStream).join(', ')} at an idle visit; ` : ''}of ${phases.idle.jobs.length}; the trickle: ${trickleStreamMetrics} (${names.join(', ')}) at ${publishing.length} visits, ${publishing.filter((j) => j.newItems > 0).length} of them finding items, for ${trickleItems} items; billed per item, each in its own hour: ${round(k.events.streamMetricsPerItem, 1)} / ${round(k.credentials.streamMetricsPerItem, 1)} (event / credential)`,
    }),
    figure({
      section: 'cost',
      id: 'cost.sweepsOff',
      label: '  streams not polled to the end, items missing or repeated (cost sweeps)',
      value:
        notDone.length +
        phases.trickle.check.missing +
        phases.trickle.check.unexpected +
        phases.trickle.check.duplicates,
      unit: '',
      budget: { max: 0, holds: 'count' },
      detail: `${notDone.length ? `${notDone.slice(0, 3).join(', ')} not done; ` : ''}${phases.trickle.added} items added, ${phases.trickle.delivered.events} events and ${phases.trickle.delivered.credentials} credentials delivered: one more item ${round(k.events.item.writeUnits, 1)} / ${round(k.credentials.item.writeUnits, 1)} write units, ${round(k.events.item.lambdaMs)} / ${round(k.credentials.item.lambdaMs)} ms (event / credential)`,
    }),
  ];
  return {
    figures,
    raw: {
      stack,
      measured,
      phases: {
        ...phases,
        idle: { ...phases.idle, jobs: phases.idle.jobs.map(withoutMetrics) },
        trickle: { ...phases.trickle, jobs: phases.trickle.jobs.map(withoutMetrics) },
      },
      bill: here,
      fixed: fixed.total,
      tenants: tiers,
      baseline: baseline ? { date: baseline.date, monthlyUsd: baselineBill?.total } : undefined,
      ratio,
    },
  };
}
