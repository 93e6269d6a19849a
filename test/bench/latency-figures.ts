/**
 * The latency section's arithmetic (measure-latency.ts): each matched event's time from its
 * `matched_at` to its first arrival, split into where it went, a phase's summary, and the figures.
 * Times are measured on the run's clock and multiplied by the time scale into real seconds.
 */
import type { PollKind } from '../../lib/poll/streams.ts';
import { PACE_SHARE } from '../../lib/state/governor.ts';
import { deliveryId } from '../../lib/state/records/record.ts';
import type { LatencyJobResult, RecordTimes } from './latency.ts';
import { BASIC } from './measure-scale.ts';
import type { BenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { median, percentile, round } from './stats.ts';

/** The budget: p99 of match to arrival on the one-minute schedule, real seconds. */
export const LIMIT_S = 90;

export type Job = LatencyJobResult & { kind: PollKind; sentAt: number };

/** p50, p95, p99 and max of `values`, each times `factor`, to 0.1. */
export function spread(factor: number, values: readonly number[]) {
  const at = (p: number) => round(percentile(values, p) * factor, 1);
  return { n: values.length, p50: at(50), p95: at(95), p99: at(99), max: at(100) };
}

/** Where one event's time went, in ms of the run's clock. */
export interface Breakdown {
  /** From the match to the next dispatch (or to the job, when one already dispatched found it first). */
  tick: number;
  /** From there to the start of the job that recorded it: behind other streams, for a worker. */
  queued: number;
  /** From the job's start to the record: the lease, the governor's turn, the page, the write. */
  polling: number;
  /** From the record to the webhook's receipt: waiting for a pass, the pass, the send. */
  delivery: number;
}

interface Arrived {
  key: string;
  matchedAt: number;
  arrivedAt: number;
}

/** Splits each event's time by the record that took it in and the job that wrote that record. */
export function breakdowns(
  events: readonly Arrived[],
  records: Readonly<Record<string, RecordTimes>>,
  recordId: (key: string) => string,
  jobs: readonly LatencyJobResult[],
  ticks: readonly number[],
): { parts: (Breakdown & { latency: number })[]; unplaced: number; bySource: Record<string, number> } {
  const parts: (Breakdown & { latency: number })[] = [];
  const bySource: Record<string, number> = {};
  let unplaced = 0;
  for (const e of events) {
    const record = records[recordId(e.key)];
    const job =
      record &&
      jobs.find(
        (j) => j.stream === record.source && j.startedAt <= record.createdAt && record.createdAt <= j.endedAt,
      );
    if (!record || !job) {
      unplaced += 1;
      continue;
    }
    const source = record.source.startsWith('group:') ? 'a group' : `the ${record.source}`;
    bySource[source] = (bySource[source] ?? 0) + 1;
    const reached = Math.min(ticks.find((t) => t >= e.matchedAt) ?? Number.POSITIVE_INFINITY, job.startedAt);
    parts.push({
      tick: Math.max(0, reached - e.matchedAt),
      queued: job.startedAt - reached,
      polling: record.createdAt - job.startedAt,
      delivery: e.arrivedAt - record.createdAt,
      latency: e.arrivedAt - e.matchedAt,
    });
  }
  return { parts, unplaced, bySource };
}

/**
 * When newly matched events were back within `limitMs`: the match after which every event arrived
 * within it, in ms from `start`; 0 when none was over, undefined when the last one was still over.
 */
export function recoveredAt(
  events: readonly { matchedAt: number; latency: number }[],
  limitMs: number,
  start: number,
): number | undefined {
  const sorted = [...events].sort((a, b) => a.matchedAt - b.matchedAt);
  const lastOver = sorted.findLastIndex((e) => e.latency > limitMs);
  if (lastOver < 0) return 0;
  const after = sorted[lastOver + 1];
  return after ? after.matchedAt - start : undefined;
}

/** What one phase left to count. */
export interface PhaseRun {
  name: string;
  scale: number;
  t0: number;
  endedAt: number;
  /** When each tick dispatched. */
  ticks: number[];
  /** Matched event keys, with when the append returned. */
  matched: Map<string, number>;
  jobs: Job[];
  leftQueued: number;
  failures: string[];
  hook: BenchReceiver;
  slack: BenchReceiver;
  /** Items besides the matched events each destination must get (a backlog). */
  expect: { webhook: ReadonlySet<string>; slack: ReadonlySet<string> };
}

export async function summarizePhase(
  run: PhaseRun,
  readRecords: (ids: string[]) => Promise<Record<string, RecordTimes>>,
) {
  const { hook, slack, scale: x } = run;
  const real = x / 1000;
  const events = [...run.matched.keys()]
    .filter((k) => hook.firstAt.has(k))
    .map((key) => {
      const arrivedAt = hook.firstAt.get(key) as number;
      const matchedAt = hook.matchedAt.get(key) ?? (run.matched.get(key) as number);
      return { key, matchedAt, arrivedAt, latency: arrivedAt - matchedAt };
    });
  const latencies = events.map((e) => e.latency);
  const id = (key: string) => deliveryId('siem', 'event', key.slice('event:'.length));
  const records = await readRecords(events.map((e) => id(e.key)));
  const polled = run.jobs.filter((j) => !j.skipped);
  const split = breakdowns(events, records, id, polled, run.ticks);
  const inSlack = events.filter((e) => slack.firstAt.has(e.key));
  const toSlack = inSlack.map((e) => (slack.firstAt.get(e.key) as number) - e.matchedAt);
  const afterWebhook = inSlack.map((e) => (slack.firstAt.get(e.key) as number) - e.arrivedAt);
  // From each tick to the start of the last events job it dispatched: the fan-out.
  const perTick: number[] = [];
  const fanout = run.ticks.flatMap((t, i) => {
    const next = run.ticks[i + 1] ?? Number.POSITIVE_INFINITY;
    const own = run.jobs.filter((j) => j.kind === 'events' && j.sentAt >= t && j.sentAt < next);
    perTick.push(own.length);
    return own.length ? [Math.max(...own.map((j) => j.startedAt)) - t] : [];
  });
  // Had no group watched an event: the wait for the tenant stream's next poll after its match.
  const tenantStarts = polled.filter((j) => j.stream === 'tenant').map((j) => j.startedAt);
  const tenantWait = events.flatMap((e) => {
    const next = Math.min(...tenantStarts.filter((t) => t >= e.matchedAt));
    return Number.isFinite(next) ? [next - e.matchedAt] : [];
  });
  const quiet = polled.filter((j) => j.kind === 'events' && j.newItems === 0 && j.pages === 1);
  const expected = new Set([...run.matched.keys(), ...run.expect.webhook]);
  const singles = [...slack.keys.keys()];
  const lateAt = recoveredAt(events, (LIMIT_S * 1000) / x, run.t0);
  const backlogDone = Math.max(...[...run.expect.webhook].map((k) => hook.firstAt.get(k) ?? run.endedAt));
  // The median of each part, over all events and over the slowest 5% (what makes the p99).
  const slow = percentile(latencies, 95);
  const medians = (parts: readonly Breakdown[]) => {
    const m = (key: keyof Breakdown) => round(median(parts.map((p) => p[key])) * real, 1);
    return { tick: m('tick'), queued: m('queued'), polling: m('polling'), delivery: m('delivery') };
  };
  return {
    phase: run.name,
    wallS: round((run.endedAt - run.t0) / 1000, 1),
    ticks: run.ticks.length,
    matched: run.matched.size,
    latency: spread(real, latencies),
    slack: { ...spread(real, toSlack), afterWebhook: spread(real, afterWebhook), digested: slack.digested },
    parts: medians(split.parts),
    slowParts: medians(split.parts.filter((p) => p.latency >= slow)),
    unplaced: split.unplaced,
    bySource: split.bySource,
    fanoutS: spread(real, fanout),
    tenantOnlyWait: spread(real, tenantWait),
    fanoutByTickS: fanout.map((t) => round(t * real, 1)),
    jobsPerTick: median(perTick),
    quietJobMs: round(median(quiet.map((j) => j.endedAt - j.startedAt)), 1),
    jobs: { polled: polled.length, skipped: run.jobs.length - polled.length, leftQueued: run.leftQueued },
    failures: run.failures,
    webhook: {
      expected: expected.size,
      duplicates: hook.duplicates(),
      missing: [...expected].filter((k) => !hook.keys.has(k)).length,
      unexpected: [...hook.keys.keys()].filter((k) => !expected.has(k)).length,
    },
    slackDelivery: {
      expected: run.matched.size + run.expect.slack.size,
      received: singles.length + slack.digested,
      duplicates: slack.duplicates(),
      strangers: singles.filter((k) => !run.matched.has(k) && !run.expect.slack.has(k)).length,
    },
    /** Real minutes from the start until every later match arrived within the limit. */
    recoveredMin: lateAt === undefined ? Number.POSITIVE_INFINITY : round((lateAt * x) / 60_000, 1),
    /** Real minutes from the start until the last backlog item arrived. */
    backlogDoneMin: run.expect.webhook.size ? round(((backlogDone - run.t0) * x) / 60_000, 1) : 0,
    /** Each matched event's latency, real seconds, in the order they were matched. */
    latenciesS: events.sort((a, b) => a.matchedAt - b.matchedAt).map((e) => round(e.latency * real, 1)),
  };
}

const PART_LABELS: Record<keyof Breakdown, string> = {
  tick: '  median: match to the next tick (or a job of this tick)',
  queued: '  median: then queued behind other streams',
  polling: '  median: then polling (lease, governor turn, page, record)',
  delivery: '  median: then to the webhook (the delivery pass)',
};

export type PhaseSummary = Awaited<ReturnType<typeof summarizePhase>>;

export function latencyFigures(
  backlog: PhaseSummary,
  steady: PhaseSummary,
  five: PhaseSummary,
  x: number,
): Figure[] {
  const l = steady.latency;
  const p = steady.parts;
  const q = steady.slowParts;
  const phases = [backlog, steady, five];
  const sum = (of: (r: PhaseSummary) => number) => phases.reduce((n, r) => n + of(r), 0);
  const twice = sum((r) => r.webhook.duplicates + r.slackDelivery.duplicates);
  const slackOff = (r: PhaseSummary) =>
    Math.abs(r.slackDelivery.received - r.slackDelivery.expected) + r.slackDelivery.strangers;
  const off = sum((r) => r.webhook.missing + r.webhook.unexpected + slackOff(r));
  const d = steady.slackDelivery;
  const f = (id: string, label: string, value: number, unit: string, detail?: string, max?: number) =>
    figure({
      section: 'latency',
      id: `latency.${id}`,
      label,
      value,
      unit,
      ...(detail ? { detail } : {}),
      // The p99's budget is a wait made mostly of the schedule; the others (0) count items.
      ...(max !== undefined
        ? { budget: { max, holds: max > 0 ? ('percentile' as const) : ('count' as const) } }
        : {}),
    });
  // The fan-out if the Basic tier alone bounded it: a request a job, at the governor's pace.
  const sources = Object.entries(steady.bySource)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const rateFanout = round(steady.jobsPerTick / (BASIC * PACE_SHARE), 1);
  return [
    f(
      'p50S',
      `latency (x${x}, in real s): match to webhook, 1-minute schedule, p50`,
      l.p50,
      's',
      `${l.n} events over ${steady.ticks} cycles, the hourly credentials run in one`,
    ),
    f('p95S', '  p95', l.p95, 's'),
    f('p99S', '  p99', l.p99, 's', `max ${l.max} s`, LIMIT_S),
    ...(['tick', 'queued', 'polling', 'delivery'] as const).map((k) =>
      f(`${k}S`, PART_LABELS[k], p[k], 's', `slowest 5%: ${q[k]} s`),
    ),
    f(
      'tenantOnlyP99S',
      "  had no group watched: wait for the tenant stream's next poll, p99",
      steady.tenantOnlyWait.p99,
      's',
      `p50 ${steady.tenantOnlyWait.p50} s, max ${steady.tenantOnlyWait.max} s; here ${sources} recorded them first`,
    ),
    f(
      'slackP99S',
      '  match to Slack (paced 1 message a second), p99',
      steady.slack.p99,
      's',
      `p50 ${steady.slack.p50} s; Slack after the webhook median ${steady.slack.afterWebhook.p50} s, p99 ${steady.slack.afterWebhook.p99} s (its pace, its lease); ${steady.slack.digested} of ${d.expected} in digests`,
    ),
    f(
      'fanoutS',
      "  a tick's fan-out: to the start of its last events job, median",
      steady.fanoutS.p50,
      's',
      `p99 ${steady.fanoutS.p99} s; the rate alone: ${steady.jobsPerTick} requests at ${PACE_SHARE * 100}% of ${BASIC}/s, ${rateFanout} s; the rest is process time counted x${x} (a quiet job ${steady.quietJobMs} ms, its governor turn included)`,
    ),
    f(
      'fiveP50S',
      'latency, 5-minute schedule: p50',
      five.latency.p50,
      's',
      `${five.latency.n} events over ${five.ticks} cycles; p95 ${five.latency.p95} s`,
    ),
    f(
      'fiveP99S',
      '  p99',
      five.latency.p99,
      's',
      `max ${five.latency.max} s; medians: tick ${five.parts.tick} s, queued ${five.parts.queued} s, polling ${five.parts.polling} s, delivery ${five.parts.delivery} s`,
    ),
    f(
      'backlogRecoveredMin',
      `latency with a backlog of ${backlog.webhook.expected - backlog.matched} items: minutes until new events are within ${LIMIT_S} s`,
      backlog.recoveredMin,
      'min',
      `${backlog.recoveredMin === 0 ? 'none was over; ' : ''}backlog delivered by ${backlog.backlogDoneMin} min; events matched meanwhile p50 ${backlog.latency.p50} s, p99 ${backlog.latency.p99} s, max ${backlog.latency.max} s`,
    ),
    f(
      'duplicates',
      '  events delivered more than once (webhook and Slack, all phases)',
      twice,
      '',
      undefined,
      0,
    ),
    f(
      'missing',
      '  items missing or unexpected (webhook; Slack by uid or digest count)',
      off,
      '',
      `failed jobs ${sum((r) => r.failures.length)}; messages deleted as already polled ${phases.map((r) => r.jobs.skipped).join(', ')}`,
      0,
    ),
  ];
}
