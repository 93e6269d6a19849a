/**
 * Every delivery record, packs unpacked, for `deliveries list` without a destination's index: an
 * operator's look (a Scan), not a hot path, so it loads when first asked for (queue.ts `list`) and
 * a worker's start does not carry it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { ItemKind } from '../../model.ts';
import type { TableIo } from '../io.ts';
import { nameFromKey } from '../limits.ts';
import { marshall, unmarshall } from '../marshall.ts';
import { ScanCommand } from '../sdk.ts';
import type { PackStatus } from './packs.ts';
import { type DeliveryRecord, type DeliveryStatus, deliveryId, fromStored, isLive } from './record.ts';

type Entry = [key: string, routes: string[], note?: string];

/** The records a stored pack holds, as `deliveries list` shows them. */
export function expandPack(stored: Record<string, AttributeValue>): DeliveryRecord[] {
  const pack = unmarshall(stored);
  const [, encoded, kind] = String(pack.pk).split('#') as [string, string, ItemKind];
  const destination = nameFromKey(encoded);
  const status = pack.status as PackStatus;
  const at = String(pack.at);
  return (JSON.parse(String(pack.entries)) as Entry[]).map(([key, routes, note]) => ({
    id: deliveryId(destination, kind, key),
    destination,
    kind,
    key,
    source: String(pack.source),
    status,
    attempts: status === 'sent' ? 1 : 0,
    routes,
    item: null,
    createdAt: String(pack.createdAt),
    updatedAt: at,
    ...(status === 'sent' ? { sentAt: at } : {}),
    expiresAt: pack.expiresAt as number,
    ...(note ? { note } : {}),
  }));
}

/** Up to `limit` live records (of `status`, when given), packs included, as a Scan finds them. */
export async function scanRecords(
  io: TableIo,
  status: DeliveryStatus | undefined,
  limit: number,
): Promise<DeliveryRecord[]> {
  const out: DeliveryRecord[] = [];
  const now = Math.floor(io.clock.now() / 1000);
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await io.client.send(
      new ScanCommand({
        TableName: io.tableName,
        FilterExpression: `(sk = :sk OR begins_with(pk, :pack))${status ? ' AND #status = :status' : ''}`,
        ExpressionAttributeNames: status ? { '#status': 'status' } : undefined,
        ExpressionAttributeValues: marshall({
          ':sk': 'dlv',
          ':pack': 'pack#',
          ...(status ? { ':status': status } : {}),
        }),
        ExclusiveStartKey: start,
      }),
    );
    for (const stored of page.Items ?? []) {
      const records = stored.pk?.S?.startsWith('pack#') ? expandPack(stored) : [fromStored(stored)];
      for (const record of records) {
        if (out.length < limit && isLive(record.expiresAt, now)) out.push(record);
      }
      if (out.length >= limit) break;
    }
    start = page.LastEvaluatedKey;
  } while (start && out.length < limit);
  return out;
}
