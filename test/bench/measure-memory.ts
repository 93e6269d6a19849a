/**
 * 3. Memory: peak RSS of a process that drains 10,000 credentials, against one that drains 100,000.
 *
 * The emulator (no added latency) holds 100,000 credentials of one domain and 10,000 of another.
 * For each size, a fresh bench worker (the product bundled as for Lambda, and nothing else, in a
 * memory cgroup of the poller's memory, as on Lambda: procs.ts) runs the
 * real `credentials` poll cycle into a fresh dynalite table with delivery to a webhook receiver (the
 * receiver, dynalite and the emulator live in other processes), then reports its own peak RSS
 * (`process.resourceUsage().maxRSS`), then, for scale, the V8 heap still in use after one full GC.
 * Every item must have reached the receiver once.
 */

import { POLLER_MEMORY_MB } from '../../infra/function.ts';
import type { DrainRun, DrainSetup } from './drain.ts';
import {
  createTable,
  deleteTable,
  startDynaliteProcess,
  startEmulatorProcess,
  startWorker,
  type Worker,
} from './procs.ts';
import { startBenchReceiver } from './receiver.ts';
import { type Figure, figure } from './report.ts';
import { round } from './stats.ts';

const SIZES = [
  { count: 10_000, domain: 'globex.test' },
  { count: 100_000, domain: 'acme.test' },
] as const;

export async function measureMemory(
  log: (line: string) => void,
): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulatorProcess({ events: 10, credentials: 0, latencyMs: 0 });
  const hook = await startBenchReceiver('webhook');
  const runs: {
    count: number;
    maxRssKb: number;
    heapAfterGc?: number;
    memoryAtEnd: NodeJS.MemoryUsage;
    rssMbEachSecond?: number[];
    seconds: number;
    run: DrainRun;
  }[] = [];
  try {
    // The big domain first: the small one's pages then start past it (the feed is in id order).
    for (const { count, domain } of [...SIZES].reverse()) await emu.appendCredentials(count, domain);
    for (const { count, domain } of SIZES) {
      const setup: DrainSetup = {
        apiUrl: emu.url,
        token: emu.token,
        dynamoEndpoint: db.url,
        destinations: { siem: { type: 'webhook', url: hook.url } },
        domain,
        eventsLookback: 'PT1H',
        credentialsLookback: 'P1D',
      };
      hook.reset();
      const table = await createTable(db.url, `memory-${count}`);
      let worker: Worker | undefined;
      try {
        // --expose-gc only lets the worker run one full GC at the end, after its peak RSS is read.
        worker = await startWorker('drain', setup, {
          memorySize: POLLER_MEMORY_MB,
          nodeOptions: ['--expose-gc'],
        });
        const run = await worker.request<DrainRun>({ type: 'product', table, kinds: ['credentials'] });
        const cycle = run.kinds[0];
        if (cycle?.sent !== count || hook.keys.size !== count || hook.duplicates() > 0) {
          throw new Error(
            `memory: ${count} credentials, but ${cycle?.sent} sent and ${hook.keys.size} received (${hook.duplicates()} twice)`,
          );
        }
        runs.push({
          count,
          maxRssKb: run.maxRssKb,
          heapAfterGc: run.heapAfterGc,
          memoryAtEnd: run.memoryAtEnd,
          rssMbEachSecond: run.rssMbEachSecond,
          seconds: run.totalMs / 1000,
          run,
        });
        log(
          `  memory: ${count} credentials in ${round(run.totalMs / 1000)} s, peak RSS ${round(run.maxRssKb / 1024, 1)} MB`,
        );
      } finally {
        await worker?.stop();
        await deleteTable(db.url, table);
      }
    }
  } finally {
    await hook.close();
    await emu.stop();
    await db.stop();
  }
  const [small, big] = runs as [(typeof runs)[number], (typeof runs)[number]];
  const mb = (kb: number) => round(kb / 1024, 1);
  return {
    figures: [
      figure({
        section: 'memory',
        id: 'memory.rss10kMb',
        label: 'peak RSS draining 10,000 credentials',
        value: mb(small.maxRssKb),
        unit: 'MB',
      }),
      figure({
        section: 'memory',
        id: 'memory.rss100kMb',
        label: 'peak RSS draining 100,000 credentials',
        value: mb(big.maxRssKb),
        unit: 'MB',
        budget: { max: 200, holds: 'count' },
      }),
      figure({
        section: 'memory',
        id: 'memory.retainedMb',
        label: 'V8 heap still in use after a full GC at the end, 100,000',
        value: mb((big.heapAfterGc ?? Number.NaN) / 1024),
        unit: 'MB',
        detail: `10,000: ${mb((small.heapAfterGc ?? Number.NaN) / 1024)} MB`,
      }),
      figure({
        section: 'memory',
        id: 'memory.ratio',
        label: 'peak RSS 100,000 / 10,000',
        value: round(big.maxRssKb / small.maxRssKb),
        unit: 'x',
        budget: { max: 1.2, holds: 'ratio' },
      }),
    ],
    raw: { runs: runs.map(({ run: _run, ...rest }) => rest) },
  };
}
