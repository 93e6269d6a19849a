/**
 * 7. A stream's first walk over a long history (issue 12: "pages, time and DynamoDB requests for
 * 10,000 events of history", and "whether baseline items need a record or can simply be passed
 * over: measure it").
 *
 * Event requests carry no time bound (poll/walk.ts), so a tenant stream's first walk reads the
 * tenant's whole feed from its start, alerts on what was matched within the lookback and passes
 * over the rest without a record. The emulator (its own process, 10 ms added to every request, as
 * in the drain) holds 10,000 events for the tenant, spread over the 3 days before its start, plus
 * its default late matches (old content matched in the last hours), which the walk must alert on.
 * One bench worker (in the poller's memory cgroup, procs.ts), in turn, each round:
 * - bare: the upstream client pages through the feed with the tenant stream's request body;
 * - alert: on a fresh dynalite table, the real `events` poll cycle (lookback PT24H, firstRun
 *   alert, everything to one webhook receiver), run again as the scheduled Lambda would be, each
 *   run within the time an invocation gives it, until the stream reports `done`;
 * - baseline: the same with `firstRun: "baseline"`, which writes a baseline record per item.
 * Checked each round: the receiver got exactly the items matched since the walk's `alertFrom`
 * (read from the stream's state), each once; the baseline walk sent nothing and recorded every
 * item. One round warms up the worker and dynalite (JIT) and is not counted; then ROUNDS rounds,
 * medians reported.
 */

import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SAFETY_MARGIN_MS } from '../../functions/worker.ts';
import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import { pollerTiming } from '../../infra/schedule.ts';
import { CONTEXT_DEFAULTS, parseRate } from '../../infra/settings.ts';
import { DELIVERY_RESERVE_MS, PAGE_RESERVE_MS } from '../../lib/poll/cycle.ts';
import { parseDuration } from '../../lib/rules/duration.ts';
import { streamKey } from '../../lib/state/streams.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import type { FeedEntry, HistoryBare, HistorySetup, HistoryWalk } from './history.ts';
import {
  createTable,
  deleteTable,
  startDynaliteProcess,
  startEmulatorProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { type BenchReceiver, startBenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { median, round } from './stats.ts';

const ROUNDS = 3;
const EVENTS = 10_000;
const LOOKBACK = 'PT24H';
/**
 * The upstream's rate for every endpoint (the default `upstream.requestsPerSecond`, docs/configuration.md),
 * to say how many invocations this walk would take against the real service, where the page
 * fetches, not our work, set the pace.
 */
const UPSTREAM_RPS = 4;

/** What an events poller invocation gives its cycle: its timeout less the margin it keeps back. */
function invocationMs(): { timeoutS: number; runMs: number } {
  const timeoutS = pollerTiming(parseRate('eventsRate', CONTEXT_DEFAULTS.eventsRate)).timeout.toSeconds();
  return { timeoutS, runMs: timeoutS * 1000 - SAFETY_MARGIN_MS };
}

/** How long into a run of `runMs` pages may still be started (lib/poll/cycle.ts's reserves). */
function pageStartWindowMs(runMs: number): number {
  const polling = runMs - Math.min(DELIVERY_RESERVE_MS, runMs / 2);
  return polling - Math.min(PAGE_RESERVE_MS, polling / 4);
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`history: ${message}`);
}

const total = (requests: Record<string, number>) => Object.values(requests).reduce((a, b) => a + b, 0);
const byOperation = (requests: Record<string, number>) =>
  Object.entries(requests)
    .sort(([, a], [, b]) => b - a)
    .map(([op, n]) => `${op} ${n}`)
    .join(', ');

/** The stream's saved `alertFrom`: what its first walk alerted from (poll/walk.ts). */
async function savedAlertFrom(endpoint: string, table: string): Promise<string> {
  const client = createDynamoClient({ endpoint });
  try {
    const { pk, sk } = streamKey('tenant');
    const got = await client.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
    );
    const alertFrom = got.Item?.alertFrom?.S;
    if (!alertFrom) throw new Error(`history: the tenant stream in ${table} has no alertFrom`);
    return alertFrom;
  } finally {
    client.destroy();
  }
}

/**
 * Content matched this long after it was created counts as old content matched late (the
 * emulator's late matches are years old; its other events are matched within 2 hours).
 */
const LATE_MATCH_MS = 30 * 86_400_000;

interface Expected {
  alerted: Set<string>;
  passedOver: number;
  /** Alerted items of old content matched late, which a time bound on creation would have hidden. */
  lateOld: number;
}

/** What a first `alert` walk that alerts from `alertFrom` must do with the feed. */
function expectedFor(feed: FeedEntry[], alertFrom: string): Expected {
  const from = Date.parse(alertFrom);
  const alerted = new Set<string>();
  let lateOld = 0;
  for (const [uid, matchedAt, createdAt] of feed) {
    if (Date.parse(matchedAt) < from) continue;
    alerted.add(uid);
    if (Date.parse(matchedAt) - Date.parse(createdAt) > LATE_MATCH_MS) lateOld += 1;
  }
  return { alerted, passedOver: feed.length - alerted.size, lateOld };
}

async function historyRound(
  worker: Worker,
  dynamo: string,
  hook: BenchReceiver,
  feed: FeedEntry[],
  name: string,
) {
  const bare = await worker.request<HistoryBare>({ type: 'page', collect: false });
  check(bare.items === feed.length, `bare paging saw ${bare.items} events, the feed holds ${feed.length}`);

  hook.reset();
  const alertTable = await createTable(dynamo, `${name}-alert`);
  const alert = await worker.request<HistoryWalk>({ type: 'walk', table: alertTable, firstRun: 'alert' });
  const alertFrom = await savedAlertFrom(dynamo, alertTable);
  await deleteTable(dynamo, alertTable);
  const lookbackMs = parseDuration(LOOKBACK) as number;
  const lastRunEnd = alert.startedAt + alert.ms;
  // The walk fixes alertFrom when it starts: now minus the lookback, at its first run.
  check(
    Date.parse(alertFrom) >= alert.startedAt - lookbackMs && Date.parse(alertFrom) <= lastRunEnd - lookbackMs,
    `alertFrom ${alertFrom} is not the walk's start minus ${LOOKBACK}`,
  );
  const expected = expectedFor(feed, alertFrom);
  check(
    expected.alerted.size > 0 && expected.passedOver > 0,
    'the feed has nothing on one side of alertFrom',
  );
  check(expected.lateOld > 0, 'no old content was matched within the lookback: the late matches are missing');
  check(alert.items === feed.length, `the alert walk read ${alert.items} of ${feed.length} items`);
  check(
    alert.baseline === expected.passedOver,
    `the alert walk passed over ${alert.baseline}, expected ${expected.passedOver}`,
  );
  check(
    alert.newItems === expected.alerted.size && alert.sent === expected.alerted.size,
    `the alert walk: ${alert.newItems} new, ${alert.sent} sent, expected ${expected.alerted.size}`,
  );
  check(hook.duplicates() === 0, `the receiver got ${hook.duplicates()} items twice`);
  const unexpected = [...hook.keys.keys()].filter((k) => !expected.alerted.has(k.replace(/^event:/, '')));
  check(
    hook.keys.size === expected.alerted.size && unexpected.length === 0,
    `the receiver got ${hook.keys.size} items (${unexpected.length} not matched since ${alertFrom}), expected ${expected.alerted.size}`,
  );

  hook.reset();
  const baselineTable = await createTable(dynamo, `${name}-baseline`);
  const baseline = await worker.request<HistoryWalk>({
    type: 'walk',
    table: baselineTable,
    firstRun: 'baseline',
  });
  await deleteTable(dynamo, baselineTable);
  check(baseline.items === feed.length, `the baseline walk read ${baseline.items} of ${feed.length} items`);
  check(
    baseline.baseline === feed.length && baseline.newItems === feed.length,
    `the baseline walk: ${baseline.baseline} baseline, ${baseline.newItems} recorded, expected ${feed.length}`,
  );
  check(baseline.sent === 0 && hook.keys.size === 0, `the baseline walk sent ${baseline.sent} items`);
  return { bare, alert, baseline, alertFrom, expected: { ...expected, alerted: expected.alerted.size } };
}

export async function measureHistory(
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const { timeoutS, runMs } = invocationMs();
  const db = await startDynaliteProcess();
  // The emulator's default late matches stay in: the walk must alert on them, and a real feed has them.
  const emu = await startEmulatorProcess({ events: EVENTS, credentials: 0, latencyMs: 10 });
  const hook = await startBenchReceiver('webhook');
  let worker: Worker | undefined;
  try {
    const setup: HistorySetup = {
      apiUrl: emu.url,
      token: emu.token,
      dynamoEndpoint: db.url,
      destinations: { siem: { type: 'webhook', url: hook.url } },
      lookback: LOOKBACK,
      runMs,
      // Far more than a walk at 10 ms a page needs: beyond it the walk is stuck, not slow.
      maxRuns: 50,
    };
    worker = await startWorker('history', setup, { memorySize: POLLER_MEMORY_MB });
    const reference = await worker.request<HistoryBare>({ type: 'page', collect: true });
    const feed = reference.feed ?? [];
    check(feed.length >= EVENTS, `the emulator's feed holds ${feed.length} events, fewer than ${EVENTS}`);
    check(new Set(feed.map(([uid]) => uid)).size === feed.length, 'the feed repeats an item');

    type Round = Awaited<ReturnType<typeof historyRound>>;
    const rounds: Round[] = [];
    let warmup: Round | undefined;
    for (let i = 0; i <= ROUNDS; i++) {
      const r = await historyRound(worker, db.url, hook, feed, `history-${i}`);
      log(
        `  history ${i === 0 ? 'warm-up' : `round ${i}`}: bare ${round(r.bare.ms / 1000)} s; alert walk ${round(r.alert.ms / 1000)} s in ${r.alert.runs.length} run(s), ${total(r.alert.requests)} DynamoDB requests; baseline walk ${round(r.baseline.ms / 1000)} s, ${total(r.baseline.requests)} requests`,
      );
      if (i > 0) rounds.push(r);
      else warmup = r;
    }
    const med = (f: (r: Round) => number) => median(rounds.map(f));
    const each = (f: (r: Round) => number, digits = 2) => rounds.map((r) => round(f(r), digits)).join(', ');
    const first = rounds[0] as Round;
    const pages = med((r) => r.alert.pages);
    const windowMs = pageStartWindowMs(runMs);
    // Pages started at UPSTREAM_RPS within one run's page window (the first at once).
    const pagesPerRun = Math.floor((windowMs / 1000) * UPSTREAM_RPS) + 1;
    const runsAtRate = Math.ceil(pages / pagesPerRun);
    const exampleRequests = (walk: HistoryWalk) => `round 1: ${byOperation(walk.requests)}`;
    const figures: Figure[] = [
      figure({
        section: 'history',
        id: 'history.feedItems',
        label: `tenant feed: ${EVENTS.toLocaleString('en-US')} events over 3 days + late matches`,
        value: feed.length,
        unit: 'items',
        detail: `round 1: ${first.expected.alerted} matched in the 24 h before its walk (${first.expected.lateOld} of them old content matched late), ${first.expected.passedOver} before`,
      }),
      figure({
        section: 'history',
        id: 'history.bareS',
        label: 'bare client paging the whole feed, same body (median)',
        value: round(med((r) => r.bare.ms) / 1000),
        unit: 's',
        detail: `${first.bare.pages} pages; rounds ${each((r) => r.bare.ms / 1000)}`,
      }),
      figure({
        section: 'history',
        id: 'history.alertS',
        label: `first walk, firstRun alert, lookback ${LOOKBACK}: time (median)`,
        value: round(med((r) => r.alert.ms) / 1000),
        unit: 's',
        detail: `sum of its runs, delivery included; rounds ${each((r) => r.alert.ms / 1000)}`,
      }),
      figure({
        section: 'history',
        id: 'history.alertRatio',
        label: '  product / bare',
        value: round(med((r) => r.alert.ms / r.bare.ms)),
        unit: 'x',
        detail: `rounds ${each((r) => r.alert.ms / r.bare.ms)}; warm-up, not counted: ${warmup ? round(warmup.alert.ms / warmup.bare.ms) : 'n/a'}`,
      }),
      figure({
        section: 'history',
        id: 'history.alertRuns',
        label: `  runs until done (${runMs / 1000} s each: ${timeoutS} s Lambda timeout less ${SAFETY_MARGIN_MS / 1000} s)`,
        value: med((r) => r.alert.runs.length),
        unit: '',
        detail: `pages per run, round 1: ${first.alert.runs.map((r) => r.pages).join(', ')}`,
      }),
      figure({
        section: 'history',
        id: 'history.alertPages',
        label: '  pages',
        value: pages,
        unit: '',
      }),
      figure({
        section: 'history',
        id: 'history.alertPassedOver',
        label: '  items passed over, no record (baseline)',
        value: med((r) => r.alert.baseline),
        unit: '',
        // The window slides with each round's start, so the split moves by an item or two.
        detail: `rounds ${each((r) => r.alert.baseline, 0)}`,
      }),
      figure({
        section: 'history',
        id: 'history.alertSent',
        label: '  items alerted (new, sent once each)',
        value: med((r) => r.alert.sent),
        unit: '',
        detail: `rounds ${each((r) => r.alert.sent, 0)}; each exactly those matched since its alertFrom`,
      }),
      figure({
        section: 'history',
        id: 'history.alertRequests',
        label: '  DynamoDB requests (median)',
        value: med((r) => total(r.alert.requests)),
        unit: '',
        detail: `rounds ${each((r) => total(r.alert.requests), 0)}; ${exampleRequests(first.alert)}`,
      }),
      figure({
        section: 'history',
        id: 'history.baselineS',
        label: 'same walk, firstRun baseline (a record per item): time (median)',
        value: round(med((r) => r.baseline.ms) / 1000),
        unit: 's',
        detail: `${med((r) => r.baseline.runs.length)} run(s); rounds ${each((r) => r.baseline.ms / 1000)}`,
      }),
      figure({
        section: 'history',
        id: 'history.baselineRatio',
        label: '  product / bare',
        value: round(med((r) => r.baseline.ms / r.bare.ms)),
        unit: 'x',
      }),
      figure({
        section: 'history',
        id: 'history.baselineRecords',
        label: '  baseline records written',
        value: med((r) => r.baseline.newItems),
        unit: '',
      }),
      figure({
        section: 'history',
        id: 'history.baselineRequests',
        label: '  DynamoDB requests (median)',
        value: med((r) => total(r.baseline.requests)),
        unit: '',
        detail: `rounds ${each((r) => total(r.baseline.requests), 0)}; ${exampleRequests(first.baseline)}`,
      }),
      figure({
        section: 'history',
        id: 'history.requestsBaselineVsPassedOver',
        label: 'DynamoDB requests: a record per item (baseline) / passing over (alert)',
        value: round(med((r) => total(r.baseline.requests) / total(r.alert.requests))),
        unit: 'x',
        detail: 'the baseline walk writes every item; the alert walk only the last 24 h',
      }),
      figure({
        section: 'history',
        id: 'history.runsAtUpstreamRate',
        label: `estimate: runs for this walk at the real upstream's ${UPSTREAM_RPS} requests/s`,
        value: runsAtRate,
        unit: '',
        detail: `${pages} pages / ${pagesPerRun} per run (pages start for ${windowMs / 1000} s of each); ~${round(pages / UPSTREAM_RPS / 60, 1)} min of paging`,
      }),
    ];
    return {
      figures,
      raw: {
        feedItems: feed.length,
        runMs,
        warmup,
        rounds: rounds.map((r) => ({
          alertFrom: r.alertFrom,
          expected: r.expected,
          bare: r.bare,
          alert: r.alert,
          baseline: r.baseline,
        })),
      },
    };
  } finally {
    await worker?.stop();
    await hook.close();
    await emu.stop();
    await db.stop();
  }
}
