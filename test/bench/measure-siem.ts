/**
 * Part of the delivery section: 1,000 new events to one Splunk HEC and one Microsoft Sentinel
 * destination (the stand-ins of the tests, real local HTTP servers that refuse a body over 1 MB),
 * through the product's poll cycle and delivery passes. Reported for each: the requests sent, the
 * largest request's bytes (at most 1 MB), and that every event arrived exactly once (by its key).
 */

import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { startEmulator } from '../../lib/emulator/index.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { skipClock } from '../helpers/clock.ts';
import { SENTINEL_APP, startSentinel } from '../helpers/sentinel.ts';
import { HEC_TOKEN, startHec } from '../helpers/splunk.ts';
import { createTable, startDynaliteProcess } from './procs.ts';
import { benchRuntime } from './product.ts';
import { type Figure, figure } from './report.ts';

const EVENTS = 1_000;
const MB = 1_000_000;

export async function measureSiem(): Promise<{ figures: Figure[]; raw: unknown }> {
  const db = await startDynaliteProcess();
  const emu = await startEmulator({
    seed: 42,
    eventsPerTenant: EVENTS,
    lateMatchesPerTenant: 0,
    credentials: 0,
  });
  const hec = await startHec();
  const sentinel = await startSentinel();
  try {
    const table = await createTable(db.url, 'siem');
    const clock = skipClock();
    const runtime = await benchRuntime({
      apiUrl: emu.url,
      token: 'emu-acme-token',
      dynamoEndpoint: db.url,
      table,
      dynamo: createDynamoClient({ endpoint: db.url }),
      config: {
        sources: { tenantEvents: { lookback: 'P30D' } },
        destinations: {
          hec: { type: 'splunk', url: hec.url, token: { secret: 'hec' } },
          logs: {
            type: 'sentinel',
            ...SENTINEL_APP,
            clientSecret: { secret: 'entra' },
            endpoint: sentinel.url,
            ruleId: 'dcr-bench',
            stream: 'Custom-ExposureAlerts_CL',
            loginUrl: sentinel.url,
          },
        },
        routes: [{ name: 'all', to: ['hec', 'logs'] }],
        digest: { threshold: 5, maxItems: 20 },
      },
      secrets: { hec: HEC_TOKEN, entra: SENTINEL_APP.clientSecret },
      clock,
    });
    const events = emu.emulator.dataset.tenant('acme').events.length;
    const startedAt = Date.now();
    await runPollCycle(runtime.cycle, 'events', { deadline: clock.now() + 600_000 });
    for (let pass = 0; pass < 20; pass++) {
      if (hec.events.length >= events && sentinel.records.length >= events) break;
      await runDeliveryPass(runtime.deliver, { deadline: clock.now() + 600_000 });
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const hecKeys = hec.events.map((e) => String(e.event.key));
    const sentinelKeys = sentinel.records.map((r) => String(r.Key));
    const once = (keys: string[]) => keys.length === events && new Set(keys).size === events;
    if (!once(hecKeys) || !once(sentinelKeys))
      throw new Error(
        `siem: Splunk got ${hecKeys.length} events (${new Set(hecKeys).size} keys), Sentinel ${sentinelKeys.length} records (${new Set(sentinelKeys).size} keys), of ${events}`,
      );
    const largest = (sizes: number[]) => Math.max(...sizes);
    const hecBytes = hec.requests.map((r) => r.bytes);
    const sentinelBytes = sentinel.uploads.map((u) => u.bytes);
    const kind = (name: string, id: string, requests: number, bytes: number): Figure[] => [
      figure({
        section: 'delivery',
        id: `delivery.${id}Requests`,
        label: `${events} new events to ${name}: requests`,
        value: requests,
        unit: '',
        detail: `every event once (${events} distinct keys, ${events} in all); a poll cycle and then delivery passes took ${seconds.toFixed(1)} s for both`,
      }),
      figure({
        section: 'delivery',
        id: `delivery.${id}LargestBytes`,
        label: '… the largest request',
        value: bytes,
        unit: 'bytes',
        budget: { max: MB, holds: 'count' },
      }),
    ];
    return {
      figures: [
        ...kind('Splunk HEC', 'splunk', hecBytes.length, largest(hecBytes)),
        ...kind('Microsoft Sentinel', 'sentinel', sentinelBytes.length, largest(sentinelBytes)),
      ],
      raw: { events, seconds, hecBytes, sentinelBytes, tokenRequests: sentinel.tokenRequests },
    };
  } finally {
    await Promise.all([hec.close(), sentinel.close(), emu.close()]);
    await db.stop();
  }
}
