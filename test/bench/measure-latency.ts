/**
 * 11. Match-to-chat latency (issue 40): from the moment the upstream matched an event
 * (`metadata.matched_at`) to its arrival at a destination, with the scale section's world (401
 * streams: the tenant, 100 identifier groups, 300 credential domains) at the real tiers and the
 * AWS schedule, time scaled by X (10) so the section takes minutes.
 *
 * As on AWS. The emulator (10 ms added to each request) enforces 4/s Basic and 1/s Search times X,
 * and the config's `upstream` rates say the same. A schedule tick every interval ÷ X dispatches
 * the event streams (`dispatchStreams`, in a worker) onto a queue; the hourly credentials run is
 * dispatched at the ticks a phase names. Three worker processes (the scale section's; the
 * deployment's default is two per kind, which changes little while the rate is the bound) each
 * hold an events and a credentials runtime and take one message at a time (SQS, batch size 1) as
 * functions/worker.ts does: a message whose stream was polled since it was sent is deleted
 * unpolled; otherwise the stream is polled and its delivery pass runs, with the deadlines of a
 * Lambda of the scaled timeout (infra/schedule.ts: interval − 5 s, at most 300 s; less the 10 s
 * safety margin, and the send's 12 s). Messages left from an earlier tick stay queued, as in SQS.
 * The product's own sleeps (a destination's pace, retry backoffs) last 1/X (latency.ts).
 *
 * Events are appended to the tenant (`POST /_emulator/events`: matched now) at seeded random
 * times across each phase's cycles; the emulator gives a fifth of them an identifier group's
 * identifier, and a tenth of the groups watch the tenant's own identifiers, so many events are
 * in several streams and the first to poll records them. Everything goes to a webhook stand-in
 * that notes each key's first arrival and its `matched_at`; events also go to a Slack stand-in
 * (one message a second, scaled; over 5 at once a digest, counted but not named).
 *
 * Phases, on one table: (1) the backlog: a fresh table holding the world's 11,190 items (10,790
 * credentials on 120 domains, 400 events), the hourly credentials run at the first tick, events
 * matched across 20 one-minute cycles: when newly matched events are back within 90 s; (2) 30
 * one-minute cycles with no backlog, the hourly credentials run at the 10th (twice its share of
 * an hour: the figure leans high); (3) the 5-minute schedule, 5 cycles. Every matched event must
 * reach the webhook exactly once, and Slack once (by name or in a digest's count).
 *
 * Measured latency × X is the real-time figure. What does not scale is the processes' own time
 * (dynalite, the workers' CPU on this loaded 2-core host, the emulator's 10 ms): it counts X times.
 * It shows in polling and delivery (a second or so each, mostly process time) and in the fan-out,
 * reported beside what the rate alone allows. A longer fan-out also spreads the polls over the
 * interval, which shortens the wait for the next poll of an event's streams, so the converted p99
 * is not simply an overstatement; BENCH_LATENCY_X=5 runs the same at half the speed to check it.
 * The product's wall-clock constants (the 20 s delivery reserve, a page's reserve, the lease's
 * 60 s) are unscaled; they matter only to a job cut short by its deadline (the backlog).
 */
import { SAFETY_MARGIN_MS } from '../../functions/worker.ts';
import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import { pollerTiming } from '../../infra/schedule.ts';
import { SETTLE_MARGIN_MS } from '../../lib/deliver/pass.ts';
import { DEFAULT_SEND_TIMEOUT_MS } from '../../lib/deliver/send-context.ts';
import { createRandom } from '../../lib/emulator/random.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import type { StreamJob } from '../../lib/poll/turn.ts';
import type { LatencyJobResult, LatencySetup, RecordTimes } from './latency.ts';
import { type Job, latencyFigures, type PhaseSummary, summarizePhase } from './latency-figures.ts';
import {
  BASIC,
  DOMAINS,
  domainPlan,
  EVENTS,
  GROUPS,
  KINDS,
  SEARCH,
  SEED,
  scaleTenant,
  startScaleEmulator,
  WORKERS,
} from './measure-scale.ts';
import {
  createTable,
  type EmulatorProcess,
  startDynaliteProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { type BenchReceiver, startBenchReceiver } from './receiver.ts';
import type { Figure } from './report.ts';
import { round } from './stats.ts';

/** Time runs this many times faster than real: 10, or BENCH_LATENCY_X (a check of what scaling does). */
const X = Number(process.env.BENCH_LATENCY_X ?? 10);
/** Ticks a phase may run past its cycles for the last matches to arrive. */
const EXTRA_TICKS = 8;

interface Phase {
  name: 'backlog' | 'steady' | 'five';
  /** The events schedule, real seconds. */
  intervalS: number;
  /** Cycles events are matched across. */
  cycles: number;
  /** Ticks at which the hourly credentials run is dispatched. */
  credentialsAt: number[];
  /** Events matched per real minute. */
  perMinute: number;
  /** Items besides the matched events each destination must get (the backlog). */
  expect?: { webhook: Set<string>; slack: Set<string> };
}

interface Ctx {
  workers: Worker[];
  emu: EmulatorProcess;
  hook: BenchReceiver;
  slack: BenchReceiver;
  log: (line: string) => void;
}

const until = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

async function appendEvent(emu: EmulatorProcess): Promise<string> {
  const res = await fetch(`${emu.url}/_emulator/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ tenant: 'acme', count: 1 }),
  });
  if (!res.ok) throw new Error(`latency: appending an event: HTTP ${res.status}`);
  return ((await res.json()) as { added: string[] }).added[0] as string;
}

/** A worker's budget for one message, scaled: the Lambda's timeout less its margins (functions/worker.ts). */
function budget(intervalS: number) {
  const timeout = pollerTiming(intervalS).timeout.toMilliseconds();
  const jobMs = (timeout - SAFETY_MARGIN_MS) / X;
  return { jobMs, sendsMs: jobMs - (DEFAULT_SEND_TIMEOUT_MS + SETTLE_MARGIN_MS) / X };
}

async function runPhase(ctx: Ctx, phase: Phase): Promise<PhaseSummary> {
  const { workers, hook, slack } = ctx;
  hook.reset();
  slack.reset();
  const tickMs = (phase.intervalS * 1000) / X;
  const budgets = { events: budget(phase.intervalS), credentials: budget(3600) };
  const queues: Record<PollKind, { job: StreamJob; sentAt: number }[]> = { events: [], credentials: [] };
  const jobs: Job[] = [];
  const failures: string[] = [];
  let stop = false;
  // The workers: each takes one message at a time from its kind's queue, as SQS hands them out.
  const consumers = workers.flatMap((w) =>
    KINDS.map(async (kind) => {
      while (!stop) {
        const next = queues[kind].shift();
        if (!next) {
          await until(Date.now() + 5);
          continue;
        }
        const r = await w.call<LatencyJobResult>({ type: 'latencyWork', ...next, ...budgets[kind] });
        if (r.exitCode !== 0) failures.push(`${r.stream}: exit ${r.exitCode} ${r.error ?? ''}`);
        jobs.push({ ...r, kind, sentAt: next.sentAt });
      }
    }),
  );
  // The upstream matches events at seeded random times across the cycles.
  const random = createRandom(`${SEED}:latency:${phase.name}`);
  const count = Math.round((phase.perMinute * phase.cycles * phase.intervalS) / 60);
  const offsets = Array.from({ length: count }, () => random.next() * phase.cycles * tickMs).sort(
    (a, b) => a - b,
  );
  const t0 = Date.now() + 100;
  const matched = new Map<string, number>();
  let matching = true;
  const matcher = (async () => {
    for (const offset of offsets) {
      await until(t0 + offset);
      matched.set(`event:${await appendEvent(ctx.emu)}`, Date.now());
    }
    matching = false;
  })();
  const expect = phase.expect ?? { webhook: new Set<string>(), slack: new Set<string>() };
  const arrived = () =>
    !matching &&
    [...matched.keys()].every((k) => hook.firstAt.has(k)) &&
    [...expect.webhook].every((k) => hook.keys.has(k)) &&
    slack.keys.size + slack.digested >= matched.size + expect.slack.size;
  // The schedule: each tick dispatches the event streams (and the hourly credentials run at its ticks).
  const ticks: number[] = [];
  for (let i = 0; i < phase.cycles + EXTRA_TICKS; i++) {
    await until(t0 + i * tickMs);
    if (i >= phase.cycles && arrived()) break;
    ticks.push(Date.now());
    const kinds = KINDS.filter((k) => k === 'events' || phase.credentialsAt.includes(i));
    await Promise.all(
      kinds.map(async (kind, k) => {
        const worker = workers[(i + k) % WORKERS] as Worker;
        const listed = await worker.call<StreamJob[]>({ type: 'dispatch', kind });
        const sentAt = Date.now();
        queues[kind].push(...listed.map((job) => ({ job, sentAt })));
      }),
    );
  }
  await matcher;
  stop = true;
  const leftQueued = queues.events.length + queues.credentials.length;
  await Promise.all(consumers);
  const summary = await summarizePhase(
    {
      name: phase.name,
      scale: X,
      t0,
      endedAt: Date.now(),
      ticks,
      matched,
      jobs,
      leftQueued,
      failures,
      hook,
      slack,
      expect,
    },
    (ids) => (workers[0] as Worker).call<Record<string, RecordTimes>>({ type: 'latencyRecords', ids }),
  );
  const l = summary.latency;
  ctx.log(
    `  latency ${phase.name}: ${summary.matched} events, ${summary.ticks} ticks, ${summary.wallS} s; in real s p50 ${l.p50}, p99 ${l.p99}, max ${l.max}`,
  );
  return summary;
}

export async function measureLatency(
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  if (!(Number.isInteger(X) && X >= 1))
    throw new Error('latency: BENCH_LATENCY_X must be a whole number, 1 or more');
  const plan = domainPlan(DOMAINS);
  const db = await startDynaliteProcess();
  const emu = await startScaleEmulator({
    basic: BASIC * X,
    search: SEARCH * X,
    events: EVENTS,
    groups: GROUPS,
  });
  const hook = await startBenchReceiver('webhook');
  const slack = await startBenchReceiver('slack');
  const workers: Worker[] = [];
  try {
    const tenant = scaleTenant(EVENTS, GROUPS);
    const initialEvents = new Set(tenant.events.map((e) => `event:${e.item.metadata.uid}`));
    const backlog = new Set(initialEvents);
    for (const { domain, credentials } of plan)
      if (credentials > 0)
        for (const id of await emu.appendCredentials(credentials, domain)) backlog.add(`credential:${id}`);
    const config = {
      sources: {
        tenantEvents: { lookback: 'P7D', firstRun: 'alert' },
        identifierGroups: tenant.groups.map((g) => ({ id: g.id, lookback: 'P7D', firstRun: 'alert' })),
        credentials: { domains: plan.map((d) => d.domain), lookback: 'P7D', firstRun: 'alert' },
      },
      destinations: { siem: { type: 'webhook', url: hook.url }, chat: { type: 'slack', url: slack.url } },
      routes: [
        { name: 'everything', match: {}, to: ['siem'] },
        { name: 'events-to-chat', match: { kind: 'event' }, to: ['chat'] },
      ],
      upstream: { requestsPerSecond: BASIC * X, searchRequestsPerSecond: SEARCH * X, quotaReserve: 100 },
    };
    const setup: LatencySetup = { apiUrl: emu.url, token: emu.token, dynamoEndpoint: db.url };
    for (let i = 0; i < WORKERS; i++)
      workers.push(await startWorker('latency', setup, { memorySize: POLLER_MEMORY_MB }));
    const table = await createTable(db.url, 'latency');
    await Promise.all(workers.map((w) => w.call({ type: 'latencyOpen', table, config, scale: X })));
    log(
      `  latency: x${X}, ${1 + tenant.groups.length + plan.length} streams, a backlog of ${backlog.size} items`,
    );
    const ctx: Ctx = { workers, emu, hook, slack, log };
    const started = Date.now();
    const expect = { webhook: backlog, slack: initialEvents };
    const first = await runPhase(ctx, {
      name: 'backlog',
      intervalS: 60,
      cycles: 20,
      credentialsAt: [0],
      perMinute: 8,
      expect,
    });
    const steady = await runPhase(ctx, {
      name: 'steady',
      intervalS: 60,
      cycles: 30,
      credentialsAt: [10],
      perMinute: 8,
    });
    const five = await runPhase(ctx, {
      name: 'five',
      intervalS: 300,
      cycles: 5,
      credentialsAt: [],
      perMinute: 6,
    });
    return {
      figures: latencyFigures(first, steady, five, X),
      raw: { scale: X, phasesS: round((Date.now() - started) / 1000, 1), phases: [first, steady, five] },
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await hook.close();
    await slack.close();
    await emu.stop();
    await db.stop();
  }
}
