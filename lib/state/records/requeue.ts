/**
 * Re-queueing dead deliveries from the API (`POST /deliveries/retry`): only a record that is dead
 * now goes back to pending, due at once, with its attempts reset (a conditional UpdateItem each, so
 * a delivery the pass changed meanwhile is left alone); any other is counted as skipped. The CLI's
 * `deliveries retry` (queue.ts `requeue`) also takes pending ones; the console asks for the dead.
 *
 * By destination, the dead are found on the index, their ids only (the API's grant on the index
 * reads no other attribute), each tenant's partition in turn: at most `limit` a request.
 */
import { tenantOfStream } from '../../poll/ids.ts';
import { mapLimit, type TableIo } from '../io.ts';
import { marshall, unmarshall } from '../marshall.ts';
import { ConditionalCheckFailedException, QueryCommand, UpdateItemCommand } from '../sdk.ts';
import { readRecords } from './once.ts';
import { indexSortKey, parseDeliveryId, queueKey, recordKey } from './record.ts';

/** Deliveries one request re-queues at most. */
export const MAX_REQUEUE = 100;

/** Ids of up to `limit` dead deliveries of `destination`, oldest first, partition by partition. */
export async function deadIds(
  io: TableIo,
  destination: string,
  tenants: readonly number[],
  limit = MAX_REQUEUE,
): Promise<string[]> {
  const ids: string[] = [];
  for (const tenant of [undefined, ...tenants]) {
    if (ids.length >= limit) break;
    let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
    do {
      io.onRequest?.('Query');
      const out = await io.client.send(
        new QueryCommand({
          TableName: io.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: marshall({ ':pk': queueKey('dead', destination, tenant) }),
          Select: 'SPECIFIC_ATTRIBUTES',
          ProjectionExpression: 'id',
          Limit: limit - ids.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) ids.push(String(unmarshall(item).id));
      start = out.LastEvaluatedKey;
    } while (start && ids.length < limit);
  }
  return ids;
}

/** Puts each of `ids` that is dead now back in the queue, due now; the rest are skipped. */
export async function requeueDead(
  io: TableIo,
  ids: readonly string[],
): Promise<{ requeued: number; skipped: number }> {
  const unique = [...new Set(ids)];
  const found = await readRecords(io, unique);
  const now = new Date(io.clock.now()).toISOString();
  const done = await mapLimit(unique, 8, async (id) => {
    const record = found.get(id);
    const parsed = parseDeliveryId(id);
    if (!record || !parsed || record.status !== 'dead') return false;
    return putBack(io, id, record.source, now, { fromPending: false });
  });
  const requeued = done.filter(Boolean).length;
  return { requeued, skipped: unique.length - requeued };
}

/**
 * One record back in the queue, due at `now`, attempts reset: a conditional write, so a record
 * that is no longer dead (or pending, with `fromPending`) is left alone (false). Both re-queues
 * (the API's and the CLI's `deliveries retry`, queue.ts) write it this way.
 */
export async function putBack(
  io: TableIo,
  id: string,
  source: string,
  now: string,
  options: { fromPending: boolean },
): Promise<boolean> {
  const parsed = parseDeliveryId(id);
  if (!parsed) return false;
  try {
    io.onRequest?.('UpdateItem');
    await io.client.send(
      new UpdateItemCommand({
        TableName: io.tableName,
        Key: marshall(recordKey(parsed.destination, parsed.kind, parsed.key, parsed.action)),
        UpdateExpression: `SET #status = :pending, attempts = :zero, nextAttemptAt = :now, updatedAt = :now, gsi1pk = :gpk, gsi1sk = :gsk REMOVE lastError${options.fromPending ? '' : ', rateLimitedSince'}`,
        ConditionExpression: options.fromPending
          ? '#status = :dead OR #status = :pending'
          : '#status = :dead',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: marshall({
          ':pending': 'pending',
          ':dead': 'dead',
          ':zero': 0,
          ':now': now,
          ':gpk': queueKey('pending', parsed.destination, tenantOfStream(source)),
          ':gsk': indexSortKey(now, id),
        }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
