/**
 * 1. Drain overhead and 2. DynamoDB requests per new item.
 *
 * The emulator (its own process, 10 ms added to every request) holds 2,000 tenant events (200
 * pages of 10, no late matches) and 20,000 credentials of one domain (200 pages of 100, the
 * product's default). Both sides send the product's request bodies: events with the configured
 * filters and no time bound (the whole feed), credentials bounded by `imported_at`.
 * One bench worker (in the poller's memory cgroup, procs.ts), in turn:
 * - bare: the upstream client pages through both feeds with the product's request bodies and
 *   nothing else, events then credentials;
 * - product: on a fresh dynalite table (its own process), the real poll cycle of `events`, then of
 *   `credentials`, each ending with its delivery pass, everything routed to one webhook receiver.
 *   Timed from the start of the first cycle to the end of the second, when every delivery is
 *   recorded sent. The receiver must have got each of the 22,000 items exactly once.
 * One round of both warms up the worker and dynalite (JIT) and is not counted; then ROUNDS rounds.
 * The ratio is the median of the rounds' ratios; requests per new item count every DynamoDB request
 * of a cycle (leases, cursors, records, the delivery pass), at the client.
 */

import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import type { Optimisations } from '../../lib/runtime.ts';
import type { DrainRun, DrainSetup, KindRun } from './drain.ts';
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

const ROUNDS = 5;
const EVENTS = 2_000;
const CREDENTIALS = 20_000;
const DOMAIN = 'acme.test';
const KINDS: PollKind[] = ['events', 'credentials'];

function kindOf(run: DrainRun, kind: PollKind): KindRun {
  const found = run.kinds.find((k) => k.kind === kind);
  if (!found) throw new Error(`the drain did not run ${kind}`);
  return found;
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`drain: ${message}`);
}

async function drainRound(worker: Worker, dynamo: string, hook: BenchReceiver, name: string) {
  const bare = await worker.request<DrainRun>({ type: 'bare', kinds: KINDS });
  check(kindOf(bare, 'events').items === EVENTS, `bare paging saw ${kindOf(bare, 'events').items} events`);
  check(
    kindOf(bare, 'credentials').items === CREDENTIALS,
    `bare paging saw ${kindOf(bare, 'credentials').items} credentials`,
  );
  hook.reset();
  const table = await createTable(dynamo, name);
  const product = await worker.request<DrainRun>({ type: 'product', table, kinds: KINDS });
  await deleteTable(dynamo, table);
  for (const [kind, count] of [
    ['events', EVENTS],
    ['credentials', CREDENTIALS],
  ] as const) {
    const run = kindOf(product, kind);
    check(run.exitCode === 0, `the ${kind} cycle exited ${run.exitCode}`);
    check(run.newItems === count && run.sent === count, `${kind}: ${run.newItems} new, ${run.sent} sent`);
  }
  check(hook.keys.size === EVENTS + CREDENTIALS, `the receiver got ${hook.keys.size} distinct items`);
  check(hook.duplicates() === 0, `the receiver got ${hook.duplicates()} items twice`);
  return { bare, product, webhookMessages: hook.arrivals.length };
}

export async function measureDrain(
  log: (line: string) => void,
  optimisations: Optimisations = {},
): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  // No late matches (the emulator's 3 per tenant of old content matched in the last hours): the
  // drain keeps exactly 2,000 events in 200 pages, so its figures compare with runs from before
  // the emulator had them, and the checks stay exact. A first walk over history with late
  // matches in it is the `history` section's subject.
  const emu = await startEmulatorProcess({ events: EVENTS, lateMatches: 0, credentials: 0, latencyMs: 10 });
  const hook = await startBenchReceiver('webhook');
  let worker: Worker | undefined;
  try {
    await emu.appendCredentials(CREDENTIALS, DOMAIN);
    const setup: DrainSetup = {
      apiUrl: emu.url,
      token: emu.token,
      dynamoEndpoint: db.url,
      destinations: { siem: { type: 'webhook', url: hook.url } },
      domain: DOMAIN,
      // The events lie over the 3 days before the emulator started, the credentials were just added.
      eventsLookback: 'P4D',
      credentialsLookback: 'P1D',
      optimisations,
    };
    worker = await startWorker('drain', setup, { memorySize: POLLER_MEMORY_MB });
    const rounds: Awaited<ReturnType<typeof drainRound>>[] = [];
    let warmup: Awaited<ReturnType<typeof drainRound>> | undefined;
    for (let i = 0; i <= ROUNDS; i++) {
      const r = await drainRound(worker, db.url, hook, `drain-${i}`);
      log(
        `  drain ${i === 0 ? 'warm-up' : `round ${i}`}: bare ${round(r.bare.totalMs / 1000)} s, product ${round(r.product.totalMs / 1000)} s`,
      );
      if (i > 0) rounds.push(r);
      else warmup = r;
    }
    const warmupRatio = warmup ? warmup.product.totalMs / warmup.bare.totalMs : Number.NaN;
    const ratios = rounds.map((r) => r.product.totalMs / r.bare.totalMs);
    const kindRatio = (kind: PollKind) =>
      median(rounds.map((r) => kindOf(r.product, kind).ms / kindOf(r.bare, kind).ms));
    const perItem = (kind: PollKind) =>
      median(
        rounds.map((r) => {
          const run = kindOf(r.product, kind);
          return Object.values(run.requests).reduce((a, b) => a + b, 0) / run.newItems;
        }),
      );
    const figures: Figure[] = [
      figure({
        section: 'drain',
        id: 'drain.bareS',
        label: 'bare client paging 2,000 events + 20,000 credentials (median)',
        value: round(median(rounds.map((r) => r.bare.totalMs)) / 1000),
        unit: 's',
      }),
      figure({
        section: 'drain',
        id: 'drain.productS',
        label: 'poll cycles into dynalite + webhook delivery (median)',
        value: round(median(rounds.map((r) => r.product.totalMs)) / 1000),
        unit: 's',
      }),
      figure({
        section: 'drain',
        id: 'drain.eventsRatio',
        label: '  events alone: product / bare',
        value: round(kindRatio('events')),
        unit: 'x',
      }),
      figure({
        section: 'drain',
        id: 'drain.credentialsRatio',
        label: '  credentials alone: product / bare',
        value: round(kindRatio('credentials')),
        unit: 'x',
      }),
      figure({
        section: 'drain',
        id: 'drain.ratio',
        label: `drain overhead: product / bare (median of ${ROUNDS})`,
        value: round(median(ratios)),
        unit: 'x',
        budget: { max: 1.1 },
        detail: `rounds ${ratios.map((r) => round(r)).join(', ')}; warm-up round, not counted: ${round(warmupRatio)}`,
      }),
      figure({
        section: 'requests',
        id: 'requests.events',
        label: 'DynamoDB requests per new event',
        value: round(perItem('events'), 3),
        unit: '',
        budget: { max: 2.5 },
      }),
      figure({
        section: 'requests',
        id: 'requests.credentials',
        label: 'DynamoDB requests per new credential',
        value: round(perItem('credentials'), 3),
        unit: '',
        budget: { max: 1.5 },
      }),
    ];
    return {
      figures,
      raw: {
        warmup,
        rounds: rounds.map((r) => ({
          ratio: r.product.totalMs / r.bare.totalMs,
          webhookMessages: r.webhookMessages,
          bare: r.bare,
          product: r.product,
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
