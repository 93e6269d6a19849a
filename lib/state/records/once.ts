/**
 * The two record operations a follow-up needs, apart from the packs and the outbox: reading
 * records by id (a consistent read; expired ones left out), and creating records once (a
 * conditional put each: two runs never both create one). DeliveryQueue and DeliveryRecords use
 * them; the API uses them alone, which keeps its bundle small.
 */
import { batchGet, mapLimit, type TableIo } from '../io.ts';
import { marshall } from '../marshall.ts';
import { ConditionalCheckFailedException, PutItemCommand } from '../sdk.ts';
import { type DeliveryRecord, fromStored, isLive, keyOfId, toStored } from './record.ts';

/** Concurrent conditional puts. */
const PUT_CONCURRENCY = 16;

/** What a follow-up reads and writes of the delivery records. */
export interface RecordAccess {
  getMany(ids: readonly string[]): Promise<Map<string, DeliveryRecord>>;
  createOnce(records: readonly DeliveryRecord[]): Promise<DeliveryRecord[]>;
}

/** Reads records by id with a consistent read; missing or expired ones are left out. */
export async function readRecords(io: TableIo, ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
  const keys = [...new Set(ids)].flatMap((id) => {
    const key = keyOfId(id);
    return key ? [key] : [];
  });
  const found = new Map<string, DeliveryRecord>();
  const now = Math.floor(io.clock.now() / 1000);
  for (const stored of await batchGet(io, keys)) {
    const record = fromStored(stored);
    if (isLive(record.expiresAt, now)) found.set(record.id, record);
  }
  return found;
}

/**
 * Creates each of `records` that does not exist yet (or has expired). Returns those created.
 * `keepItem` says whose final records keep their item (record.ts).
 */
export async function createRecordsOnce(
  io: TableIo,
  records: readonly DeliveryRecord[],
  keepItem: (destination: string) => boolean = () => false,
): Promise<DeliveryRecord[]> {
  const created: DeliveryRecord[] = [];
  const now = Math.floor(io.clock.now() / 1000);
  await mapLimit(records, PUT_CONCURRENCY, async (record) => {
    try {
      io.onRequest?.('PutItem');
      await io.client.send(
        new PutItemCommand({
          TableName: io.tableName,
          Item: toStored(record, keepItem(record.destination)),
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: marshall({ ':now': now }),
        }),
      );
      created.push(record);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  });
  return created;
}

/** Both, on a table. */
export function recordAccess(io: TableIo): RecordAccess {
  return { getMany: (ids) => readRecords(io, ids), createOnce: (records) => createRecordsOnce(io, records) };
}
