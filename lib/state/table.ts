/**
 * The one DynamoDB table: string keys `pk`/`sk`, billed on demand, with one sparse index (`gsi1`)
 * holding only deliveries that are pending or dead, and `expiresAt` (epoch seconds) as its TTL
 * attribute. The CDK stack builds the same table from these names.
 *
 * Item kinds (pk / sk):
 * - `stream#<id>` / `state`: a stream's cursor and lease.
 * - `dest#<name>` / `lease` | `health`: a destination's delivery lease and refusal marker.
 * - `dlv#<destination>#<kind>#<key>` / `dlv`: one delivery record, also the dedupe marker.
 * - `quarantine#<stream>` / `<time>#<key>`: an item that broke the spec's types.
 * - `audit#asset#<id>` / `<time>#<request id>`: one asset toggle attempt.
 * - `silence` / `<id>`: one run-time silence (silences.ts); `audit#silence` / `<time>#<request id>`:
 *   one change to them.
 * - `catalog` / `config`: the streams and destinations of the config, for `status` (catalog.ts).
 * - `quota` / `global-search`: the last quota reading; `governor`: the shared rate.
 * - `idem#<client>#<route>#<key>` (each part percent-encoded) / `idem`: an API Idempotency-Key,
 *   what its request was and the answer it got (idempotency.ts), until `expiresAt`.
 */
import { originOf, waitingFor } from '../waits.ts';
import { clockSyncOf } from './clock-sync.ts';
import { DynamoDBClient } from './sdk.ts';

export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  index: 'gsi1',
  indexPartitionKey: 'gsi1pk',
  indexSortKey: 'gsi1sk',
  ttlAttribute: 'expiresAt',
} as const;

export interface DynamoOptions {
  endpoint?: string;
  region?: string;
}

/** A client for AWS, or for a local endpoint (dynalite) with placeholder credentials when none are set. */
export function createDynamoClient(options: DynamoOptions = {}): DynamoDBClient {
  const local = options.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local ? { endpoint: options.endpoint } : {}),
    region: options.region ?? process.env.AWS_REGION ?? (local ? 'us-east-1' : undefined),
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    maxAttempts: 5,
    // Resolve each command's middleware stack once, not on every request (up to 1 ms each, and a
    // poll cycle makes hundreds). The stack is never changed after the line below.
    cacheMiddleware: true,
  });
  // The SDK's logger step deep-copies every request and response for a log line that, with no
  // logger configured, nobody reads: measurable CPU per item on a busy poll cycle.
  client.middlewareStack.remove('loggerMiddleware');
  // Name the request on its errors: "UnknownError" alone (a body the SDK could not read) says
  // nothing of what failed; describeError (lib/errors.ts) prints these. And mark it, retries
  // included, as a wait a stop can name (waits.ts).
  const where =
    options.endpoint !== undefined
      ? `at ${originOf(options.endpoint)}`
      : `in ${options.region ?? process.env.AWS_REGION ?? 'AWS'}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await waitingFor(`DynamoDB ${where} (${operationOf(context)})`, next(args));
      } catch (error) {
        if (error instanceof Error)
          Object.assign(error, { $service: 'DynamoDB', $operation: operationOf(context) });
        throw error;
      }
    },
    { step: 'initialize', name: 'nameTheRequestOnErrors' },
  );
  // Every answer's `Date` header places this host's clock against the table's (clock-sync.ts).
  // Below the deserializer, so refusals (a failed condition is an HTTP 400) count too.
  const sync = clockSyncOf(client);
  client.middlewareStack.add(
    (next) => async (args) => {
      const sent = sync.mono();
      const out = await next(args);
      const headers = (out.response as { headers?: Record<string, string> } | undefined)?.headers;
      sync.observe(headers?.date ?? headers?.Date, sent, sync.mono());
      return out;
    },
    { step: 'deserialize', priority: 'low', name: 'clockFromDateHeader' },
  );
  return client;
}

function operationOf(context: { commandName?: string }): string {
  return (context.commandName ?? 'request').replace(/Command$/, '');
}

/**
 * Creates the table (and its index) when it does not exist, then waits until it is active: only a
 * local run (DYNAMODB_ENDPOINT) does, so the code is loaded then (table-create.ts).
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'exists'> {
  return (await import('./table-create.ts')).ensureTable(client, tableName, TABLE_KEYS);
}
