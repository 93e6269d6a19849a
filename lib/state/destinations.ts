/**
 * Per-destination state for the delivery pass: a lease (one deliverer per destination at a time,
 * so the 1-message-a-second pace and status writes have one owner), when it last sent (the pace
 * carries over between runs), and whether it refused for good (reported to operators once).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { type Lease, LeaseStore } from './lease.ts';

export interface DestinationLease extends Lease {
  /** Set while the destination is known to refuse permanently. */
  refused?: { code: string; at: string };
  lastSentAt?: number;
}

export class DestinationStateStore {
  readonly leases: LeaseStore;

  constructor(client: DynamoDBClient, tableName: string, clock: Clock, leaseTtlMs?: number) {
    this.leases = new LeaseStore(client, tableName, clock, leaseTtlMs);
  }

  async acquire(destination: string, owner: string): Promise<DestinationLease | undefined> {
    const lease = await this.leases.acquire(`dest#${destination}`, 'state', owner);
    if (!lease) return undefined;
    const { refusedCode, refusedAt, lastSentAt } = lease.item;
    return {
      ...lease,
      ...(typeof refusedCode === 'string' && typeof refusedAt === 'string'
        ? { refused: { code: refusedCode, at: refusedAt } }
        : {}),
      ...(typeof lastSentAt === 'number' ? { lastSentAt } : {}),
    };
  }

  /** Records a permanent refusal; true when it is new (and so should be reported). */
  async markRefused(lease: DestinationLease, code: string, at: Date): Promise<boolean> {
    if (lease.refused) return false;
    await this.leases.update(lease, { set: { refusedCode: code, refusedAt: at.toISOString() } });
    lease.refused = { code, at: at.toISOString() };
    return true;
  }

  /** Forgets a refusal after a successful send, so a later one is reported again. */
  async clearRefused(lease: DestinationLease): Promise<void> {
    if (!lease.refused) return;
    await this.leases.update(lease, { remove: ['refusedCode', 'refusedAt'] });
    lease.refused = undefined;
  }

  renew(lease: DestinationLease): Promise<void> {
    return this.leases.renew(lease);
  }

  release(lease: DestinationLease, lastSentAt?: number): Promise<boolean> {
    return this.leases.release(lease, { set: { lastSentAt } });
  }
}
