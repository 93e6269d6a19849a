import { takeTurns } from '../../turns.ts';
import { batchPut, queryAll, type TableIo } from '../io.ts';
import { marshall } from '../marshall.ts';
import { readRecords } from './once.ts';
import {
  type DeliveryRecord,
  type DeliveryStatus,
  FINAL_STATUSES,
  fromStored,
  parseDeliveryId,
  queueKey,
  toStored,
} from './record.ts';

/** Each tenant's partition gives a chunk at least this many records, however many tenants share it. */
export const MIN_TENANT_SHARE = 100;

export class DeliveryQueue {
  /** The index partitions of a destination: the top level's, then each tenant's. */
  private readonly partitions: readonly (number | undefined)[];

  constructor(
    private readonly io: TableIo,
    private readonly retentionSeconds: number,
    /** Destinations whose sent records keep their item (they take follow-ups). */
    readonly keepsItems: (destination: string) => boolean = () => false,
    tenants: readonly number[] = [],
  ) {
    this.partitions = [undefined, ...tenants];
  }

  /**
   * Reads each partition of `destination` under `status` (oldest first within each) and takes
   * turns between them: the first record of each, then the second of each, and so on, so a
   * tenant's backlog cannot keep another tenant's records out of a chunk. Each partition gives up
   * to an equal share of `limit` (at least MIN_TENANT_SHARE).
   */
  private async readTurns(
    status: 'pending' | 'dead',
    destination: string,
    limit: number,
    bound?: string,
  ): Promise<DeliveryRecord[]> {
    const read = async (tenant: number | undefined, n: number) =>
      (
        await queryAll(
          this.io,
          {
            IndexName: 'gsi1',
            KeyConditionExpression: `gsi1pk = :pk${bound ? ' AND gsi1sk <= :bound' : ''}`,
            ExpressionAttributeValues: marshall({
              ':pk': queueKey(status, destination, tenant),
              ...(bound ? { ':bound': bound } : {}),
            }),
          },
          n,
        )
      ).map(fromStored);
    if (this.partitions.length === 1) return read(undefined, limit);
    const share = Math.max(MIN_TENANT_SHARE, Math.ceil(limit / this.partitions.length));
    const lists = await Promise.all(this.partitions.map((tenant) => read(tenant, share)));
    const total = lists.reduce((n, l) => n + l.length, 0);
    if (total < limit) {
      // Room the quiet partitions left goes to those with more: they are read further.
      const room = limit - total;
      await Promise.all(
        lists.map(async (list, i) => {
          if (list.length === share) lists[i] = await read(this.partitions[i], share + room);
        }),
      );
    }
    return takeTurns(lists).slice(0, limit);
  }

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
    return this.readTurns('pending', destination, limit, `${new Date(this.io.clock.now()).toISOString()}~`);
  }

  /** Pending records of `destination`, due or not, soonest first (index read): what a silence may hold back. */
  async waiting(destination: string, limit: number): Promise<DeliveryRecord[]> {
    return this.readTurns('pending', destination, limit);
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
        out.push(...(await this.readTurns(status, destination, limit - out.length)));
        if (out.length >= limit) break;
      }
      return out;
    }
    // Every record, packs included: an operator's look, not a hot path (list.ts, loaded now).
    const { scanRecords } = await import('./list.ts');
    return scanRecords(this.io, status, limit);
  }

  /** Puts a dead (or pending) delivery back in the queue, due now. False when it is not dead or pending. */
  async requeue(id: string): Promise<boolean> {
    if (!parseDeliveryId(id)) return false;
    // Its queue partition depends on its stream's tenant.
    const stored = (await this.getMany([id])).get(id);
    if (!stored) return false;
    // The CLI's path (requeue.ts, loaded now): not in the pollers' start.
    const { putBack } = await import('./requeue.ts');
    return putBack(this.io, id, stored.source, new Date(this.io.clock.now()).toISOString(), {
      fromPending: true,
    });
  }
}
