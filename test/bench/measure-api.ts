/**
 * 6. API: `POST /assets/{id}/toggle` against the emulator with no added latency, 2,000 requests one
 * after another, then 2,000 with 32 in flight. The API runs in a bench worker (the app as
 * functions/api.ts builds it: bearer auth, audit records in dynalite before and after, the upstream
 * call); this process sends the requests. The API's own time is measured inside the worker: the
 * time `app.fetch` takes for each request (and, shown beside it, that time less the wait for the
 * upstream's answer). p50 and p99 by nearest rank.
 */
import { createHash } from 'node:crypto';
import { API_MEMORY_MB } from '../../infra/function.ts';
import type { ApiSetup, ApiTimings } from './api-server.ts';
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
const IN_FLIGHT = 32;
/** An asset of the emulator's demo tenant. */
const ASSET = 10011;

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
  try {
    const token = 'bench-api-client-token';
    const setup: ApiSetup = {
      apiUrl: emu.url,
      token: emu.token,
      dynamoEndpoint: db.url,
      table: await createTable(db.url, 'api'),
      clientDigest: createHash('sha256').update(token).digest('hex'),
    };
    worker = await startWorker('api', setup, { memorySize: API_MEMORY_MB });
    const url = (worker.ready as { url: string }).url;
    const phases: Record<string, ApiTimings & { wallS: number }> = {};
    let t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) await toggle(url, token, i);
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
    }
    return {
      figures,
      raw: Object.fromEntries(
        Object.entries(phases).map(([name, t]) => [
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
      ),
    };
  } finally {
    await worker?.stop();
    await emu.stop();
    await db.stop();
  }
}
