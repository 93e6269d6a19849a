/**
 * The outbox side of delivery records: what the delivery pass reads (`due`, then `getMany` to
 * confirm, since an index can lag) and writes back (`save`), and what operators list and re-queue.
 * Status changes after creation are made by the delivery pass while it holds the destination's
 * lease (the only writer of those records then), so they are unconditional batch writes.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { batchPut, queryAll, type TableIo } from '../io.ts';
import { marshall } from '../marshall.ts';
import { ConditionalCheckFailedException, ScanCommand, UpdateItemCommand } from '../sdk.ts';
import { readRecords } from './once.ts';
import { PackStore } from './packs.ts';
import {
  type DeliveryRecord,
  type DeliveryStatus,
  FINAL_STATUSES,
  fromStored,
  indexSortKey,
  isLive,
  parseDeliveryId,
  queueKey,
  recordKey,
  toStored,
} from './record.ts';

export class DeliveryQueue {
  constructor(
    private readonly io: TableIo,
    private readonly retentionSeconds: number,
    /** Destinations whose sent records keep their item (they take follow-ups). */
    readonly keepsItems: (destination: string) => boolean = () => false,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.io.clock.now() / 1000);
  }

  /** When a record of `status` expires: final ones after the retention, others never. */
  expiresFor(status: DeliveryStatus): number | undefined {
    return FINAL_STATUSES.has(status) ? this.nowSeconds() + this.retentionSeconds : undefined;
  }

  /** `record` as it is written: its expiry set from its status now. */
  withExpiry(record: DeliveryRecord): DeliveryRecord {
    const expiresAt = this.expiresFor(record.status);
    const { expiresAt: _old, ...rest } = record;
    return expiresAt ? { ...rest, expiresAt } : rest;
  }

  /** Reads records by id with a consistent read; missing or expired ones are left out. */
  getMany(ids: readonly string[]): Promise<Map<string, DeliveryRecord>> {
    return readRecords(this.io, ids);
  }

  /** Pending records of `destination` whose next attempt is due, oldest first (index read). */
  async due(destination: string, limit: number): Promise<DeliveryRecord[]> {
    const bound = `${new Date(this.io.clock.now()).toISOString()}~`;
    const items = await queryAll(
      this.io,
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk <= :bound',
        ExpressionAttributeValues: marshall({ ':pk': queueKey('pending', destination), ':bound': bound }),
      },
      limit,
    );
    return items.map(fromStored);
  }

  /** Pending records of `destination`, due or not, soonest first (index read): what a silence may hold back. */
  async waiting(destination: string, limit: number): Promise<DeliveryRecord[]> {
    const items = await queryAll(
      this.io,
      {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': queueKey('pending', destination) }),
      },
      limit,
    );
    return items.map(fromStored);
  }

  /** Writes records whose status the delivery pass changed (under the destination's lease). */
  async save(records: readonly DeliveryRecord[]): Promise<void> {
    const now = new Date(this.io.clock.now()).toISOString();
    await batchPut(
      this.io,
      records.map((r) => toStored(this.withExpiry({ ...r, updatedAt: now }), this.keepsItems(r.destination))),
    );
  }

  /** Records by status, for `deliveries list`. Pending and dead come from the index when destinations are given. */
  async list(
    options: { status?: DeliveryStatus; destinations?: string[]; limit?: number } = {},
  ): Promise<DeliveryRecord[]> {
    const limit = options.limit ?? 100;
    const out: DeliveryRecord[] = [];
    const { status, destinations } = options;
    if ((status === 'pending' || status === 'dead') && destinations) {
      for (const destination of destinations) {
        const items = await queryAll(
          this.io,
          {
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: marshall({ ':pk': queueKey(status, destination) }),
          },
          limit - out.length,
        );
        out.push(...items.map(fromStored));
        if (out.length >= limit) break;
      }
      return out;
    }
    // Every record, packs included: an operator's look, not a hot path.
    const now = this.nowSeconds();
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.io.client.send(
        new ScanCommand({
          TableName: this.io.tableName,
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
        const records = stored.pk?.S?.startsWith('pack#') ? PackStore.expand(stored) : [fromStored(stored)];
        for (const record of records) {
          if (out.length < limit && isLive(record.expiresAt, now)) out.push(record);
        }
        if (out.length >= limit) break;
      }
      start = page.LastEvaluatedKey;
    } while (start && out.length < limit);
    return out;
  }

  /** Puts a dead (or pending) delivery back in the queue, due now. False when it is not dead or pending. */
  async requeue(id: string): Promise<boolean> {
    const parsed = parseDeliveryId(id);
    if (!parsed) return false;
    const now = new Date(this.io.clock.now()).toISOString();
    try {
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(recordKey(parsed.destination, parsed.kind, parsed.key, parsed.action)),
          UpdateExpression:
            'SET #status = :pending, attempts = :zero, nextAttemptAt = :now, updatedAt = :now, gsi1pk = :gpk, gsi1sk = :gsk REMOVE lastError',
          ConditionExpression: '#status = :dead OR #status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: marshall({
            ':pending': 'pending',
            ':dead': 'dead',
            ':zero': 0,
            ':now': now,
            ':gpk': queueKey('pending', parsed.destination),
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
}
