/**
 * A whole product wired for a test: the real runtime (poll cycle, delivery pass, stores) against a
 * real emulator over HTTP, real dynalite over HTTP, and real local receivers.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { runDeliveryPass } from '../../lib/deliver/pass.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import type { PollKind } from '../../lib/poll/streams.ts';
import { type AlertsConfig, checkConfig } from '../../lib/rules/config.ts';
import { createRuntime, type Optimisations, type Runtime } from '../../lib/runtime.ts';
import type { DynamoFixture } from './dynamo.ts';
import type { EmulatorFixture } from './emulator.ts';

export interface World {
  runtime: Runtime;
  /** The DynamoDB table this world uses; another world can share it. */
  table: string;
  logs: string[];
  metrics: MemoryMetrics;
  console: string[];
  cycle(kind: PollKind, seconds?: number): ReturnType<typeof runPollCycle>;
  /** One delivery pass, as `deliver --once`. */
  deliver(seconds?: number): ReturnType<typeof runDeliveryPass>;
  /** A fresh runtime on the same table (a restart, or another concurrent run). */
  another(): Promise<Runtime>;
}

export function configFrom(input: unknown): AlertsConfig {
  const check = checkConfig(input);
  if (!check.config) throw new Error(`test config invalid: ${check.errors.join('; ')}`);
  return check.config;
}

export async function makeWorld(
  emu: EmulatorFixture,
  db: DynamoFixture,
  configInput: unknown,
  options: {
    token?: string;
    /** An API key instead of the token: exchanged per tenant for a config's `tenants`. */
    apiKey?: string;
    secrets?: Record<string, unknown>;
    table?: string;
    clock?: Clock;
    optimisations?: Optimisations;
    /**
     * The product's own upstream client, paced by the shared governor in the table (scale tests);
     * by default a client without one, so tests of other things are not paced.
     */
    governed?: boolean;
    /** Another client for the same dynalite (one that counts its requests, say). */
    dynamo?: DynamoDBClient;
  } = {},
): Promise<World> {
  const table = options.table ?? (await db.table());
  const env = readEnvironment({
    EXPOSURE_API_URL: emu.url,
    ...(options.apiKey
      ? { EXPOSURE_API_KEY: options.apiKey }
      : { EXPOSURE_API_TOKEN: options.token ?? 'emu-acme-token' }),
    TABLE_NAME: table,
    DYNAMODB_ENDPOINT: db.endpoint,
  });
  const config = configFrom(configInput);
  const logger = memoryLogger('info');
  const metrics = new MemoryMetrics();
  const consoleLines: string[] = [];
  const build = () =>
    createRuntime({
      env,
      config,
      secrets: options.secrets ?? {},
      logger,
      metrics,
      dynamo: options.dynamo ?? db.client,
      write: (text) => consoleLines.push(text),
      ...(options.governed ? {} : { upstream: emu.client(options.token ?? 'emu-acme-token') }),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.optimisations ? { optimisations: options.optimisations } : {}),
    });
  const runtime = await build();
  const now = () => (options.clock ?? systemClock).now();
  return {
    runtime,
    table,
    logs: logger.lines,
    metrics,
    console: consoleLines,
    cycle: (kind, seconds = 60) => runPollCycle(runtime.cycle, kind, { deadline: now() + seconds * 1000 }),
    deliver: (seconds = 60) => runDeliveryPass(runtime.deliver, { deadline: now() + seconds * 1000 }),
    another: build,
  };
}
