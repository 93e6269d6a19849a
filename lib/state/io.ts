/**
 * The three DynamoDB loops every store needs, written once: a BatchGetItem that retries its
 * unprocessed keys, a Query that follows its pages, and BatchWriteItem in chunks of 25 that
 * retries its unprocessed items, a few chunks in flight. Each counts its requests for the bench.
 */
import type { AttributeValue, DynamoDBClient, QueryCommandInput } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { BatchGetItemCommand, BatchWriteItemCommand, QueryCommand } from './sdk.ts';

export type StoredItem = Record<string, AttributeValue>;

export interface TableIo {
  client: DynamoDBClient;
  tableName: string;
  clock: Clock;
  /** Counts every DynamoDB request made (benchmarks). */
  onRequest?: (operation: string) => void;
}

/** Backoff before retrying what DynamoDB left unprocessed (it does that under load). */
const retryWait = (attempt: number) => Math.min(1_000, 50 * 2 ** attempt);

export function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** Runs `fn` over `items`, at most `limit` at once; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(workers);
  return results;
}

/** Every item stored under `keys` (100 a request, consistent reads), unprocessed keys retried. */
export async function batchGet(
  io: TableIo,
  keys: readonly StoredItem[],
  options: { projection?: string } = {},
): Promise<StoredItem[]> {
  const found: StoredItem[] = [];
  for (const batch of chunks(keys, 100)) {
    let pending: StoredItem[] = batch;
    for (let attempt = 0; pending.length > 0; attempt++) {
      io.onRequest?.('BatchGetItem');
      const out = await io.client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [io.tableName]: {
              Keys: pending,
              ConsistentRead: true,
              ...(options.projection ? { ProjectionExpression: options.projection } : {}),
            },
          },
        }),
      );
      found.push(...(out.Responses?.[io.tableName] ?? []));
      pending = out.UnprocessedKeys?.[io.tableName]?.Keys ?? [];
      if (pending.length) await io.clock.sleep(retryWait(attempt));
    }
  }
  return found;
}

/**
 * The items of a Query, page after page, up to `limit` items (each request asks only for what is
 * still wanted), or all of them.
 */
export async function queryAll(
  io: TableIo,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>,
  limit = Number.POSITIVE_INFINITY,
): Promise<StoredItem[]> {
  const out: StoredItem[] = [];
  let start: StoredItem | undefined;
  do {
    io.onRequest?.('Query');
    const page = await io.client.send(
      new QueryCommand({
        ...input,
        TableName: io.tableName,
        ExclusiveStartKey: start,
        ...(Number.isFinite(limit) ? { Limit: limit - out.length } : {}),
      }),
    );
    out.push(...(page.Items ?? []).slice(0, limit - out.length));
    start = page.LastEvaluatedKey;
  } while (start && out.length < limit);
  return out;
}

/** BatchWriteItem puts, in chunks of 25, `concurrency` chunks in flight; unprocessed items retried. */
export async function batchPut(io: TableIo, items: readonly StoredItem[], concurrency = 4): Promise<void> {
  await mapLimit(chunks(items, 25), concurrency, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      io.onRequest?.('BatchWriteItem');
      const out = await io.client.send(
        new BatchWriteItemCommand({ RequestItems: { [io.tableName]: requests } }),
      );
      requests = (out.UnprocessedItems?.[io.tableName] ?? []) as typeof requests;
      if (requests.length) await io.clock.sleep(retryWait(attempt));
    }
  });
}
