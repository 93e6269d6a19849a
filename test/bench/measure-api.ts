/**
 * 6. API: `POST /assets/{id}/toggle` against the emulator with no added latency, 2,000 requests one
 * after another, then 2,000 with 32 in flight. Then the console's `GET /alerts` over 1,000 alerts
 * in the table (written as a poll writes them: records and the alert index, each alert to two
 * destinations whose records are read for their state) and 50 tenants' 60 each, 200 first pages one
 * after another, 200 pages of a filter nothing matches (a page read to its bounds), and 200 first
 * pages of a client bound to one of the tenants (full, from its own copy); beside them, as a baseline of
 * the same run, `GET /silences` (one Query). The API runs in a bench worker (the app as
 * functions/api.ts builds it: bearer auth, audit records in dynalite before and after, its turn
 * from the shared governor, the upstream call); this process sends the requests. The API's own
 * time is measured inside the worker: the time `app.fetch` takes for each request (and, shown
 * beside it, that time less the wait for the upstream's answer). p50 and p99 by nearest rank.
 *
 * The budget, on our own time per toggle (sequential, p99), holds as a ratio: whatever a busy host
 * adds to that tail it adds to any round trip, so the figure budgeted is its ratio to the p99 of a
 * bare Hono app's round trip (one trivial route, api-server.ts BARE_PATH, in a second worker of the
 * same kind, asked once after each toggle so that both live through the same moments). On the
 * 2-core bench machine (2026-11-26) the ratio was 1.55 and 1.58 with the host nearly idle (load
 * under 1.5: our p99 6.8 and 7.0 ms, the bare one's 4.4 ms) and 1.2 to 1.8 with it busy (our p99 7
 * to 12.8 ms, over the old budget of 10 ms in most such runs). MAX_OWN_RATIO, 3, is about twice the
 * quiet figure: a change that doubles our own tail breaks it, a busy host alone does not.
 *
 * Unpaced, as the other sections run: the API paces at the rates pollers store in the table, so a
 * poller's unlimited rates are stored first (at the real tiers 4,000 toggles would take 1,000 s).
 * The pacing itself is the second figure: how long an API call waits for its turn while three
 * pollers keep the shared lanes busy at the real tiers (4 requests and 1 search a second), in this
 * process, against the same dynalite.
 */
import { createHash } from 'node:crypto';
import { API_MEMORY_MB } from '../../infra/function.ts';
import { systemClock } from '../../lib/clock.ts';
import { PAGE_ITEMS } from '../../lib/state/alert-list.ts';
import { CatalogStore } from '../../lib/state/catalog.ts';
import { DEFAULT_RATES, DynamoRateGovernor } from '../../lib/state/governor.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { type ApiSetup, type ApiTimings, BARE_PATH } from './api-server.ts';
import {
  createTable,
  startDynaliteProcess,
  startEmulatorProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { type Figure, figure } from './report.ts';
import { percentile, round } from './stats.ts';

const REQUESTS = 2_000;
/** The budget of api.sequential.p99OwnRatio: see the header. */
const MAX_OWN_RATIO = 3;
const IN_FLIGHT = 32;
/** An asset of the emulator's demo tenant. */
const ASSET = 10011;
/** A poller's rates where nothing limits them: the emulator here has no rate limit. */
const UNPACED = { requestsPerSecond: 100_000, searchRequestsPerSecond: 10_000 };
/** API turns measured behind the busy pollers, one every 250 ms. */
const API_TURNS = 20;
/** Alerts in the table for `GET /alerts`, and the pages read. */
const ALERTS = 1_000;
const PAGES = 200;
/**
 * Tenants, and alerts of each, beside the top level's: a client bound to one of them reads its
 * own alerts' pages (issue 49: "a client bound to 1 of 50 tenants gets 50 of its alerts a page").
 */
const TENANTS = 50;
const ALERTS_PER_TENANT = 60;
const BOUND_TENANT = 2001;

/**
 * Each of 50 tenants' 60 alerts as their streams record them, 10 a page, the tenants' pages
 * interleaved in time, each to one destination; and the catalog naming the tenants, as the pollers
 * publish it for the API.
 */
async function seedTenantAlerts(endpoint: string, table: string): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    const start = Date.now() - 2 * 3_600_000;
    let page = 0;
    for (let round = 0; round < ALERTS_PER_TENANT / 10; round++)
      for (let t = 0; t < TENANTS; t++, page++) {
        const tenant = BOUND_TENANT + t;
        const at = start + page * 1_000;
        const clock = { ...systemClock, now: () => at };
        const deliveries: NewDelivery[] = Array.from({ length: 10 }, (_, i) => {
          const uid = `leak/tenant/${tenant}/${round * 10 + i}`;
          return {
            destination: 'soc',
            kind: 'event',
            key: `${tenant}:${uid}`,
            source: `tenant:${tenant}`,
            routes: ['all'],
            status: 'pending',
            item: {
              metadata: { uid, type: 'leak', severity: 'high', matched_at: new Date(at - i).toISOString() },
            },
          };
        });
        await new DeliveryRecords(client, table, clock).recordPage(deliveries, { exclusive: true });
      }
    await new CatalogStore({ client, tableName: table, clock: systemClock }).write({
      streams: [],
      destinations: ['soc', 'siem'],
      configSilences: [],
      followUps: [],
      tenants: Array.from({ length: TENANTS }, (_, t) => ({ id: BOUND_TENANT + t, name: `Tenant ${t + 1}` })),
    });
  } finally {
    client.destroy();
  }
}

/** 1,000 alerts as a poll records them, 100 a page, each to two destinations (pending: read for their state). */
async function seedAlerts(endpoint: string, table: string): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    const records = new DeliveryRecords(client, table, systemClock);
    for (let page = 0; page < ALERTS / 100; page++) {
      const deliveries: NewDelivery[] = [];
      for (let i = page * 100; i < (page + 1) * 100; i++) {
        const item = {
          metadata: {
            uid: `leak/bench/${i}`,
            type: i % 3 ? 'leak' : 'paste',
            severity: i % 2 ? 'high' : 'medium',
            matched_at: new Date(Date.now() - (ALERTS - i) * 60_000).toISOString(),
            estimated_created_at: new Date().toISOString(),
          },
          identifiers: [{ id: 1, name: 'Acme' }],
        };
        for (const destination of ['soc', 'siem'])
          deliveries.push({
            destination,
            kind: 'event',
            key: item.metadata.uid,
            source: 'tenant',
            routes: ['all'],
            status: 'pending',
            item,
          });
      }
      await records.recordPage(deliveries, { exclusive: true });
    }
  } finally {
    client.destroy();
  }
}

async function read(url: string, token: string, path: string): Promise<void> {
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`api: ${path} answered ${res.status}`);
}

/** Stores `rates` in the table's governor item, as a poller's first booking does. */
async function storeRates(endpoint: string, table: string, rates: typeof UNPACED): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    await new DynamoRateGovernor(client, table, systemClock, { rates, searching: false }).take('basic', {});
  } finally {
    client.destroy();
  }
}

/**
 * Three pollers booking turns back to back at the real tiers (basic and search alike), and the API
 * taking a turn every 250 ms: how long each API turn waited, in ms.
 */
async function waitBehindPollers(endpoint: string): Promise<number[]> {
  const table = await createTable(endpoint, 'api-turns');
  const clients = Array.from({ length: 4 }, () => createDynamoClient({ endpoint }));
  const [apiClient, ...pollerClients] = clients as [
    ReturnType<typeof createDynamoClient>,
    ...ReturnType<typeof createDynamoClient>[],
  ];
  let busy = true;
  const pollers = pollerClients.map((client) => {
    const g = new DynamoRateGovernor(client, table, systemClock, { rates: DEFAULT_RATES, searching: true });
    return Promise.all(
      (['basic', 'search'] as const).map(async (tier) => {
        while (busy) await g.take(tier, {});
      }),
    );
  });
  const api = new DynamoRateGovernor(apiClient, table, systemClock);
  const waits: number[] = [];
  try {
    // Let the pollers fill the lanes first.
    await new Promise((r) => setTimeout(r, 2_000));
    for (let i = 0; i < API_TURNS; i++) {
      const t0 = performance.now();
      await api.take('basic', {});
      waits.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    busy = false;
    await Promise.all(pollers);
    for (const c of clients) c.destroy();
  }
  return waits;
}

/** One round trip to the bare Hono route of the API's process, in ms, timed here. */
async function bareRoundTrip(url: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}${BARE_PATH}`);
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`api: the bare route answered ${res.status}`);
  return ms;
}

async function toggle(url: string, token: string, i: number): Promise<number> {
  const res = await fetch(`${url}/assets/${ASSET}/toggle`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ is_disabled: i % 2 === 0 }),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`api: toggle answered ${res.status}`);
  return res.status;
}

export async function measureApi(): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulatorProcess({ events: 10, latencyMs: 0 });
  let worker: Worker | undefined;
  let bareWorker: Worker | undefined;
  try {
    const token = 'bench-api-client-token';
    const boundToken = 'bench-api-analyst-token';
    const setup: ApiSetup = {
      boundDigest: createHash('sha256').update(boundToken).digest('hex'),
      boundTenant: BOUND_TENANT,
      apiUrl: emu.url,
      token: emu.token,
      dynamoEndpoint: db.url,
      table: await createTable(db.url, 'api'),
      clientDigest: createHash('sha256').update(token).digest('hex'),
    };
    await storeRates(db.url, setup.table, UNPACED);
    worker = await startWorker('api', setup, { memorySize: API_MEMORY_MB });
    const url = (worker.ready as { url: string }).url;
    // The baseline: a process of the same kind whose bare route alone is asked (api-server.ts).
    bareWorker = await startWorker('api', setup, { memorySize: API_MEMORY_MB });
    const bareUrl = (bareWorker.ready as { url: string }).url;
    for (let i = 0; i < 200; i++) await bareRoundTrip(bareUrl);
    const phases: Record<string, ApiTimings & { wallS: number }> = {};
    // Each toggle followed by a round trip to the bare route: the baseline lives through the same moments.
    const bare: number[] = [];
    let t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      await toggle(url, token, i);
      bare.push(await bareRoundTrip(bareUrl));
    }
    phases.sequential = {
      ...(await worker.request<ApiTimings>({ type: 'take' })),
      wallS: (performance.now() - t0) / 1000,
    };
    let next = 0;
    t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < REQUESTS) await toggle(url, token, next++);
      }),
    );
    phases.concurrent = {
      ...(await worker.request<ApiTimings>({ type: 'take' })),
      wallS: (performance.now() - t0) / 1000,
    };
    const figures: Figure[] = [];
    for (const [name, timings] of Object.entries(phases)) {
      if (timings.server.length !== REQUESTS)
        throw new Error(`api: ${timings.server.length} requests timed in ${name}`);
      const own = timings.server.map((ms, i) => ms - (timings.upstream[i] ?? 0));
      for (const p of [50, 99]) {
        figures.push(
          figure({
            section: 'api',
            id: `api.${name}.p${p}Ms`,
            label: `toggle, ${name === 'sequential' ? 'sequential' : `${IN_FLIGHT} in flight`}: p${p} time in the API`,
            value: round(percentile(timings.server, p)),
            unit: 'ms',
            detail: `less the upstream wait: ${round(percentile(own, p))} ms`,
          }),
        );
      }
      if (name === 'sequential') {
        const bareP99 = percentile(bare, 99);
        figures.push(
          figure({
            section: 'api',
            id: 'api.sequential.p99OwnMs',
            label:
              'toggle, sequential: p99 of our own time (the upstream wait excluded, the booking included)',
            value: round(percentile(own, 99)),
            unit: 'ms',
            detail: `p50 ${round(percentile(own, 50))} ms`,
          }),
          figure({
            section: 'api',
            id: 'api.sequential.bareP99Ms',
            label: '  bare Hono round trip to a process of the same kind, between the toggles, p99',
            value: round(bareP99),
            unit: 'ms',
            detail: `p50 ${round(percentile(bare, 50))} ms; ${bare.length} round trips`,
          }),
          figure({
            section: 'api',
            id: 'api.sequential.p99OwnRatio',
            label: 'toggle, sequential: p99 of our own time / p99 of the bare round trip',
            value: round(percentile(own, 99) / bareP99),
            unit: 'x',
            budget: { max: MAX_OWN_RATIO, holds: 'ratio' },
          }),
        );
      }
    }
    await seedAlerts(db.url, setup.table);
    await seedTenantAlerts(db.url, setup.table);
    const reads: Record<string, number[]> = {};
    for (const [name, path, as] of [
      ['silences', '/silences', token],
      ['alerts', '/alerts', token],
      ['alertsNoMatch', '/alerts?q=nothing-matches-this', token],
      ['alertsBound', '/alerts', boundToken],
    ] as const) {
      for (let i = 0; i < PAGES; i++) await read(url, as, path);
      reads[name] = (await worker.request<ApiTimings>({ type: 'take' })).server;
    }
    // What a page of each holds: the bound client's page must be full of its own alerts.
    const itemsOf = async (as: string) =>
      (
        (await (await fetch(`${url}/alerts`, { headers: { Authorization: `Bearer ${as}` } })).json()) as {
          items: { key: string }[];
        }
      ).items;
    const boundPage = await itemsOf(boundToken);
    if (boundPage.some((i) => !i.key.startsWith(`${BOUND_TENANT}:`)))
      throw new Error('api: the bound client was shown another tenant’s alert');
    figures.push(
      figure({
        section: 'api',
        id: 'api.alertsBound.pageShort',
        label: `GET /alerts as a client bound to 1 of ${TENANTS} tenants (${ALERTS_PER_TENANT} alerts each): its first page's items short of a full page (50)`,
        value: PAGE_ITEMS - boundPage.length,
        unit: 'items',
        budget: { max: 0, holds: 'count' },
        detail: `${boundPage.length} of its own; unbound: ${(await itemsOf(token)).length} a page`,
      }),
    );
    const base = percentile(reads.silences ?? [], 50);
    for (const [name, label] of [
      [
        'alerts',
        `GET /alerts over ${(ALERTS + TENANTS * ALERTS_PER_TENANT).toLocaleString('en')} alerts: the first page (50 items, their records read)`,
      ],
      ['alertsNoMatch', 'GET /alerts with a filter nothing matches: a page read to its bounds'],
      [
        'alertsBound',
        `GET /alerts as a client bound to 1 of ${TENANTS} tenants: its first page (its own copy of the list)`,
      ],
    ] as const) {
      const times = reads[name] ?? [];
      for (const p of [50, 99]) {
        figures.push(
          figure({
            section: 'api',
            id: `api.${name}.p${p}Ms`,
            label: `${label}, p${p}`,
            value: round(percentile(times, p)),
            unit: 'ms',
            ...(p === 50
              ? {
                  detail: `${round(percentile(times, 50) / base)}x GET /silences (one Query, p50 ${round(base)} ms) in this run`,
                }
              : {}),
          }),
        );
      }
    }
    // The console's page, script and stylesheet as a browser downloads them (gzipped).
    const { PAGE_FILES } = await import('../../lib/console/page-packed.ts');
    const pageBytes = Object.values(PAGE_FILES).reduce((n, f) => n + Buffer.from(f.gzip, 'base64').length, 0);
    figures.push(
      figure({
        section: 'api',
        id: 'api.consoleGzipBytes',
        label: 'the console (page, script, stylesheet) as served, gzipped',
        value: pageBytes,
        unit: 'B',
        budget: { max: 150 * 1024, holds: 'count' },
        detail: `${Object.keys(PAGE_FILES).length} files`,
      }),
    );
    const waits = await waitBehindPollers(db.url);
    for (const p of [50, 99]) {
      figures.push(
        figure({
          section: 'api',
          id: `api.turnWait.p${p}Ms`,
          label: `an API call's wait for its turn behind 3 busy pollers at the real tiers, p${p}`,
          value: round(percentile(waits, p)),
          unit: 'ms',
          detail: `${API_TURNS} calls; each poller holds at most one booking at a time`,
        }),
      );
    }
    return {
      figures,
      raw: Object.fromEntries([
        ['bareRoundTrip', { p50: percentile(bare, 50), p99: percentile(bare, 99), count: bare.length }],
        ...Object.entries(reads).map(([name, t]) => [
          name,
          { p50: percentile(t, 50), p99: percentile(t, 99) },
        ]),
        ...Object.entries(phases).map(([name, t]) => [
          name,
          {
            wallS: t.wallS,
            statuses: t.statuses,
            serverP50: percentile(t.server, 50),
            serverP99: percentile(t.server, 99),
            upstreamP50: percentile(t.upstream, 50),
            upstreamP99: percentile(t.upstream, 99),
          },
        ]),
      ]),
    };
  } finally {
    await worker?.stop();
    await bareWorker?.stop();
    await emu.stop();
    await db.stop();
  }
}
