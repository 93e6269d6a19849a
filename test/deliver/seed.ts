/**
 * A delivery-only world for tests: the real runtime's delivery pass and stores on real dynalite,
 * with pending deliveries written straight into the table (no emulator, no poll cycle), so a test
 * controls exactly how many deliveries wait, for whom, and on which clock.
 *
 * The console's alert index is off unless asked for (`alertIndex`): the pass neither reads nor
 * writes it, and its writes were half of a seeded delivery's requests (an update and a batch write
 * beside the existence check and the conditional put).
 */
import { type Clock, systemClock } from '../../lib/clock.ts';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import type { DeliveryPassOptions } from '../../lib/deliver/types.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import { sampleEvent } from '../../lib/render/samples.ts';
import { createRuntime, type Runtime } from '../../lib/runtime.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import type { DynamoFixture } from '../helpers/dynamo.ts';
import { configFrom } from '../helpers/world.ts';

/** A sample event with its own uid (and so its own delivery record). */
export function eventNumber(i: number, now = new Date()): EventItem {
  const base = sampleEvent(now);
  return { ...base, metadata: { ...base.metadata, uid: `forum_post/seed/thread/${i}` } };
}

export interface DeliveryWorld {
  runtime: Runtime;
  table: string;
  logs: string[];
  metrics: MemoryMetrics;
  console: string[];
  /** Writes `count` pending deliveries to `destination`, due now; returns their ids. */
  seed(
    destination: string,
    count: number,
    options?: {
      from?: number;
      item?: (i: number) => unknown;
      /** Written as an exclusive stream writes them: in batches, not a conditional put each. */
      exclusive?: boolean;
    },
  ): Promise<string[]>;
  /** One delivery pass whose sends may start for `seconds` more (on the world's clock). */
  pass(seconds?: number, options?: Omit<DeliveryPassOptions, 'deadline'>): ReturnType<typeof runDeliveryPass>;
  /** Another run on the same table (its own owner), with its own clock if given. */
  another(clock?: Clock): Promise<Runtime>;
}

export const TEST_ENV = {
  EXPOSURE_API_URL: 'http://127.0.0.1:9',
  EXPOSURE_API_TOKEN: 'unused-token',
};

export async function deliveryWorld(
  db: DynamoFixture,
  configInput: unknown,
  options: { clock?: Clock; secrets?: Record<string, unknown>; table?: string; alertIndex?: boolean } = {},
): Promise<DeliveryWorld> {
  const table = options.table ?? (await db.table());
  const env = readEnvironment({ ...TEST_ENV, TABLE_NAME: table, DYNAMODB_ENDPOINT: db.endpoint });
  const config = configFrom(configInput);
  const logger = memoryLogger('info');
  const metrics = new MemoryMetrics();
  const consoleLines: string[] = [];
  const build = (clock: Clock | undefined) =>
    createRuntime({
      env,
      config,
      secrets: options.secrets ?? {},
      logger,
      metrics,
      dynamo: db.client,
      optimisations: { alertIndex: options.alertIndex ?? false },
      write: (text) => consoleLines.push(text),
      ...(clock ? { clock } : {}),
    });
  const runtime = await build(options.clock);
  const clock = options.clock ?? systemClock;
  return {
    runtime,
    table,
    logs: logger.lines,
    metrics,
    console: consoleLines,
    async seed(destination, count, seedOptions = {}) {
      const from = seedOptions.from ?? 0;
      const items = Array.from({ length: count }, (_, i) =>
        seedOptions.item ? seedOptions.item(from + i) : eventNumber(from + i, new Date(clock.now())),
      );
      const { created } = await runtime.records.recordPage(
        items.map((item) => ({
          destination,
          kind: 'event' as const,
          key: (item as EventItem).metadata.uid,
          source: 'tenant',
          routes: ['all'],
          item,
          status: 'pending' as const,
        })),
        { exclusive: seedOptions.exclusive ?? false },
      );
      return created.map((r) => r.id);
    },
    pass: (seconds = 60, passOptions = {}) =>
      runDeliveryPass(runtime.deliver, { ...passOptions, deadline: clock.now() + seconds * 1000 }),
    another: (other) => build(other ?? options.clock),
  };
}
