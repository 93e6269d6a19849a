/**
 * The product as a benchmark runs it: the real runtime (createRuntime: poll cycle, delivery pass,
 * stores, senders) with logs and metrics formatted as in Lambda but discarded (or, given an
 * `output`, counted: lines, bytes, and the metrics the EMF lines publish), and a DynamoDB client
 * that counts every HTTP request it makes, by command, retries included (and, asked, the capacity
 * units DynamoDB reports for them).
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
import { createDynamoClient, TABLE_KEYS } from '../../lib/state/table.ts';

/**
 * Capacity units of the requests so far, as on-demand DynamoDB bills them: what the table reported
 * (dynalite: the table's own units, by item size: a write unit per KB, a read unit per 4 KB, half
 * for an eventually consistent read; a Query that found nothing counted as the least read), plus
 * what it does not report.
 */
export interface CapacityCount {
  readUnits: number;
  writeUnits: number;
  /** Writes refused by their condition: DynamoDB bills each at least one write unit; dynalite reports none. */
  failedWrites: number;
  /**
   * Writes to the index `gsi1` (projection ALL), estimated: a put of an item with its key, by the
   * item's size; an update that sets or removes its key, by the update's units. Deletes of indexed
   * items are not seen (their old image is not returned).
   */
  indexWriteUnits: number;
}

export interface CountingDynamo {
  client: DynamoDBClient;
  /** Requests sent so far, by command name (`PutItemCommand` is counted as `PutItem`). */
  counts: Record<string, number>;
  /** Only with `{ capacity: true }`: every request then asks for its ReturnConsumedCapacity. */
  capacity: CapacityCount;
  /** The units DynamoDB reported, by command (with `{ capacity: true }`). */
  units: Record<string, number>;
  total(): number;
  reset(): void;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
type Attribute = Record<string, unknown>;

/** An item's size as DynamoDB counts it, near enough: attribute names and values, in UTF-8 bytes. */
export function itemBytes(item: Record<string, Attribute>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueBytes(value);
  return size;
}

function valueBytes(value: Attribute): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  if (type === 'S') return Buffer.byteLength(v as string);
  if (type === 'N') return Math.ceil(String(v).replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if (type === 'B') return (v as Uint8Array).length;
  if (type === 'SS' || type === 'NS' || type === 'BS')
    return (v as unknown[]).reduce<number>((n, e) => n + valueBytes({ [type.slice(0, 1)]: e }), 0);
  if (type === 'L') return 3 + (v as Attribute[]).reduce((n, e) => n + 1 + valueBytes(e), 0);
  if (type === 'M') return 3 + itemBytes(v as Record<string, Attribute>);
  return 1;
}

const INDEX_KEYS = [TABLE_KEYS.indexPartitionKey, TABLE_KEYS.indexSortKey] as const;
const indexed = (item: Record<string, Attribute> | undefined) =>
  item !== undefined && INDEX_KEYS.some((k) => k in item);

/** Index writes of one write request (see CapacityCount.indexWriteUnits). */
function indexWrites(command: string, input: Record<string, unknown>, units: number): number {
  const units1k = (item: Record<string, Attribute>) => Math.max(1, Math.ceil(itemBytes(item) / 1024));
  if (command === 'PutItem') {
    const item = input.Item as Record<string, Attribute> | undefined;
    return item && indexed(item) ? units1k(item) : 0;
  }
  if (command === 'BatchWriteItem') {
    let n = 0;
    for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>))
      for (const r of requests) {
        const item = (r as { PutRequest?: { Item?: Record<string, Attribute> } }).PutRequest?.Item;
        if (item && indexed(item)) n += units1k(item);
      }
    return n;
  }
  if (command === 'UpdateItem') {
    const names = Object.values((input.ExpressionAttributeNames ?? {}) as Record<string, string>);
    const expression = String(input.UpdateExpression ?? '');
    const touches = INDEX_KEYS.some((k) => names.includes(k) || new RegExp(`\\b${k}\\b`).test(expression));
    return touches ? units : 0;
  }
  return 0;
}

function consumedUnits(consumed: unknown): number {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((n: number, c) => n + Number((c as { CapacityUnits?: number }).CapacityUnits ?? 0), 0);
}

/** A DynamoDB client whose every HTTP attempt is counted (the middleware sits inside the retry loop). */
export function countingDynamo(endpoint: string, options: { capacity?: boolean } = {}): CountingDynamo {
  const client = createDynamoClient({ endpoint });
  const counts: Record<string, number> = {};
  const capacity: CapacityCount = { readUnits: 0, writeUnits: 0, failedWrites: 0, indexWriteUnits: 0 };
  const units: Record<string, number> = {};
  const commandOf = (context: { commandName?: string }) =>
    String(context.commandName ?? 'unknown').replace(/Command$/, '');
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = commandOf(context);
      counts[name] = (counts[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'deserialize', name: 'benchRequestCounter', priority: 'low' },
  );
  if (options.capacity) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = commandOf(context);
        const write = WRITES.has(name);
        if (!write && !READS.has(name)) return next(args);
        const input = args.input as Record<string, unknown>;
        try {
          const out = await next({ ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
          let used = consumedUnits((out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
          // A Query or Scan that reads nothing still bills a read (dynalite reports 0).
          if (name === 'Query' || name === 'Scan') used = Math.max(used, input.ConsistentRead ? 1 : 0.5);
          units[name] = (units[name] ?? 0) + used;
          if (write) {
            capacity.writeUnits += used;
            capacity.indexWriteUnits += indexWrites(name, input, used);
          } else capacity.readUnits += used;
          return out;
        } catch (error) {
          if (write && (error as Error)?.name === 'ConditionalCheckFailedException')
            capacity.failedWrites += 1;
          throw error;
        }
      },
      { step: 'initialize', name: 'benchCapacityCounter' },
    );
  }
  return {
    client,
    counts,
    capacity,
    units,
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset: () => {
      for (const key of Object.keys(counts)) delete counts[key];
      for (const key of Object.keys(units)) delete units[key];
      Object.assign(capacity, { readUnits: 0, writeUnits: 0, failedWrites: 0, indexWriteUnits: 0 });
    },
  };
}

/** What the product wrote: log lines, EMF lines, and each metric CloudWatch would make of the EMF. */
export interface ProductOutput {
  logLines: number;
  logBytes: number;
  emfLines: number;
  emfBytes: number;
  /** Each metric published, `Name{dimension=value,...}` (one per dimension set of a line), and how often. */
  metrics: Map<string, number>;
  /** Counts one log line (as a Lambda writes it, with its newline). */
  log(line: string): void;
  /** Counts one EMF line and the metrics it publishes. */
  emf(line: string): void;
}

export function productOutput(): ProductOutput {
  const out: ProductOutput = {
    logLines: 0,
    logBytes: 0,
    emfLines: 0,
    emfBytes: 0,
    metrics: new Map(),
    log(line) {
      out.logLines += 1;
      out.logBytes += Buffer.byteLength(line) + 1;
    },
    emf(line) {
      out.emfLines += 1;
      out.emfBytes += Buffer.byteLength(line) + 1;
      const body = JSON.parse(line) as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      };
      for (const directive of body._aws.CloudWatchMetrics)
        for (const set of directive.Dimensions)
          for (const { Name } of directive.Metrics) {
            const key = `${Name}{${set.map((d) => `${d}=${String(body[d])}`).join(',')}}`;
            out.metrics.set(key, (out.metrics.get(key) ?? 0) + 1);
          }
    },
  };
  return out;
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
  /** Counts the log and EMF lines instead of discarding them uncounted. */
  output?: ProductOutput;
  /** The `service` of the metrics and the log's `logger` (a worker's: `poll-events`); `bench` by default. */
  service?: string;
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
    logger: createLogger({
      level: 'info',
      ...(options.service ? { name: options.service } : {}),
      write: options.output?.log ?? (() => {}),
    }),
    metrics: new EmfMetrics({
      service: options.service ?? 'bench',
      write: options.output?.emf ?? (() => {}),
    }),
    dynamo: options.dynamo,
    write: () => {},
    ...(hasUpstream(options.config) ? {} : { rates: UNPACED }),
    ...(options.optimisations ? { optimisations: options.optimisations } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}
