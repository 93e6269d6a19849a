/**
 * The product as a benchmark runs it: the real runtime (createRuntime: poll cycle, delivery pass,
 * stores, senders) with logs and metrics formatted as in Lambda but discarded, and a DynamoDB
 * client that counts every HTTP request it makes, by command, retries included.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../lib/clock.ts';
import { readEnvironment } from '../../lib/env.ts';
import { createLogger } from '../../lib/log.ts';
import { EmfMetrics } from '../../lib/metrics.ts';
import { type AlertsConfig, checkConfig } from '../../lib/rules/config.ts';
import { createRuntime, type Optimisations, type Runtime } from '../../lib/runtime.ts';
import type { SecretObject } from '../../lib/secrets.ts';
import type { UpstreamRates } from '../../lib/state/governor.ts';
import { createDynamoClient } from '../../lib/state/table.ts';

export interface CountingDynamo {
  client: DynamoDBClient;
  /** Requests sent so far, by command name (`PutItemCommand` is counted as `PutItem`). */
  counts: Record<string, number>;
  total(): number;
  reset(): void;
}

/** A DynamoDB client whose every HTTP attempt is counted (the middleware sits inside the retry loop). */
export function countingDynamo(endpoint: string): CountingDynamo {
  const client = createDynamoClient({ endpoint });
  const counts: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      counts[name] = (counts[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'deserialize', name: 'benchRequestCounter', priority: 'low' },
  );
  return {
    client,
    counts,
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset: () => {
      for (const key of Object.keys(counts)) delete counts[key];
    },
  };
}

export function benchConfig(input: unknown): AlertsConfig {
  const check = checkConfig(input);
  if (!check.config) throw new Error(`bench config invalid: ${check.errors.join('; ')}`);
  return check.config;
}

export interface ProductOptions {
  apiUrl: string;
  token: string;
  dynamoEndpoint: string;
  table: string;
  config: unknown;
  dynamo: DynamoDBClient;
  /** Optimisations turned off for this run (`npm run bench -- --without ...`). */
  optimisations?: Optimisations;
  /** The secret object (destinations' tokens); none by default. */
  secrets?: SecretObject;
  /** A clock of its own (one that skips waits); the real one by default. */
  clock?: Clock;
}

/**
 * The shared rate for a section that is not about limits (its emulator enforces none): so high
 * that no turn ever waits, while every request still takes its turn and pays its DynamoDB write,
 * as on AWS. The scale section sets real tiers in its config's `upstream` instead.
 */
export const UNPACED: UpstreamRates = { requestsPerSecond: 100_000, searchRequestsPerSecond: 50_000 };

const hasUpstream = (config: unknown) =>
  typeof config === 'object' && config !== null && 'upstream' in config;

/** The runtime a poller Lambda builds, pointed at the bench's emulator, dynalite and receivers. */
export function benchRuntime(options: ProductOptions): Promise<Runtime> {
  const env = readEnvironment({
    EXPOSURE_API_URL: options.apiUrl,
    EXPOSURE_API_TOKEN: options.token,
    TABLE_NAME: options.table,
    DYNAMODB_ENDPOINT: options.dynamoEndpoint,
    LOG_LEVEL: 'info',
  });
  return createRuntime({
    env,
    config: benchConfig(options.config),
    secrets: options.secrets ?? {},
    logger: createLogger({ level: 'info', write: () => {} }),
    metrics: new EmfMetrics({ service: 'bench', write: () => {} }),
    dynamo: options.dynamo,
    write: () => {},
    ...(hasUpstream(options.config) ? {} : { rates: UNPACED }),
    ...(options.optimisations ? { optimisations: options.optimisations } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}
