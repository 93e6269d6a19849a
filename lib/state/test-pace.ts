/**
 * At most one test message a minute per destination (`POST /destinations/{name}/test`), for every
 * process on the table: a PagerDuty test pages someone. One item per destination,
 * `dtest#<destination>`, holds when its last test was let through; a conditional UpdateItem lets
 * the next one through only a minute later, so two API processes asking at once let one through.
 */

import type { TableIo } from './io.ts';
import { nameInKey } from './limits.ts';
import { marshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from './sdk.ts';

export const TEST_INTERVAL_MS = 60_000;

export function testPaceKey(destination: string) {
  return { pk: `dtest#${nameInKey(destination)}`, sk: 'last' };
}

/**
 * Takes the destination's turn to be tested now: `{ok: true}`, or how long until the next turn
 * (ms, at least 1 s).
 */
export async function takeTestTurn(
  io: TableIo,
  destination: string,
): Promise<{ ok: true } | { ok: false; waitMs: number }> {
  const now = io.clock.now();
  try {
    await io.client.send(
      new UpdateItemCommand({
        TableName: io.tableName,
        Key: marshall(testPaceKey(destination)),
        UpdateExpression: 'SET #at = :now',
        // A stored time far ahead (a clock that was wrong) is not honoured past one interval.
        ConditionExpression: 'attribute_not_exists(#at) OR #at <= :free OR #at > :ahead',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: marshall({
          ':now': now,
          ':free': now - TEST_INTERVAL_MS,
          ':ahead': now + TEST_INTERVAL_MS,
        }),
      }),
    );
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  const out = await io.client.send(
    new GetItemCommand({
      TableName: io.tableName,
      Key: marshall(testPaceKey(destination)),
      ConsistentRead: true,
    }),
  );
  const last = Number(out.Item?.at?.N ?? now);
  return { ok: false, waitMs: Math.max(1_000, Math.min(TEST_INTERVAL_MS, last + TEST_INTERVAL_MS - now)) };
}
