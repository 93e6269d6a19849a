/**
 * Per-destination state for the delivery pass, one item per destination (`dest#<name>`, `state`):
 * - a lease: one deliverer per destination at a time, so the 1-message-a-second pace and status
 *   writes have one owner;
 * - when it last sent (the pace carries over between runs);
 * - whether it refused for good (reported to operators once);
 * - a pause: a 429 (or a 5xx with `Retry-After`) stops every run from sending to the destination
 *   until the wait it asked for has passed, so rate limiting costs one request, not one per message;
 * - the smallest body it answered 413 (too large) lately, so a pass splits a message that big before
 *   sending it rather than after another refusal.
 * Times are ms since the epoch on the writer's clock; readers guard against a writer whose clock
 * ran ahead (see `pauseLeft`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { type Lease, LeaseStore } from './lease.ts';
import { nameInKey } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, QueryCommand, UpdateItemCommand } from './sdk.ts';

/** How long a 413's body size is remembered: a receiver's limit may be raised, a proxy fixed. */
export const TOO_LARGE_MEMORY_MS = 24 * 3_600_000;

export interface DestinationPause {
  /** No send before this. */
  until: number;
  /** When the pause was decided (on the writer's clock). */
  at: number;
  /** Pauses in a row without a successful send since: the backoff of a 429 without Retry-After grows with it. */
  count: number;
}

export interface DestinationState {
  refused?: { code: string; at: string };
  lastSentAt?: number;
  pause?: DestinationPause;
  /** Bytes of the smallest body answered 413, and when. */
  tooLarge?: { bytes: number; at: number };
}

export interface DestinationLease extends Lease, DestinationState {}

/**
 * How long a pause still has to run, as this run sees it. A pause written by a run whose clock was
 * ahead would otherwise last that skew longer here: its remainder is bounded by its own length.
 */
export function pauseLeft(pause: DestinationPause | undefined, now: number): number {
  if (!pause) return 0;
  return Math.max(0, Math.min(pause.until - now, pause.until - pause.at));
}

/** The key of a destination's state item (`status` reads it too: state/status.ts). */
export function destinationKey(destination: string) {
  return { pk: `dest#${nameInKey(destination)}`, sk: 'state' };
}

function stateOf(item: Record<string, unknown>, now: number): DestinationState {
  const { refusedCode, refusedAt, lastSentAt, pausedUntil, pausedAt, pauseCount, tooLargeBytes, tooLargeAt } =
    item;
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  return {
    ...(typeof refusedCode === 'string' && typeof refusedAt === 'string'
      ? { refused: { code: refusedCode, at: refusedAt } }
      : {}),
    ...(num(lastSentAt) ? { lastSentAt } : {}),
    ...(num(pausedUntil) && num(pausedAt)
      ? { pause: { until: pausedUntil, at: pausedAt, count: num(pauseCount) ? pauseCount : 1 } }
      : {}),
    ...(num(tooLargeBytes) && num(tooLargeAt) && now - tooLargeAt < TOO_LARGE_MEMORY_MS
      ? { tooLarge: { bytes: tooLargeBytes, at: tooLargeAt } }
      : {}),
  };
}

export class DestinationStateStore {
  readonly leases: LeaseStore;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    leaseTtlMs?: number,
  ) {
    this.leases = new LeaseStore(client, tableName, clock, leaseTtlMs);
  }

  private key(destination: string) {
    return destinationKey(destination);
  }

  async acquire(destination: string, owner: string): Promise<DestinationLease | undefined> {
    const { pk, sk } = this.key(destination);
    const lease = await this.leases.acquire(pk, sk, owner);
    if (!lease) return undefined;
    return { ...lease, ...stateOf(lease.item, this.clock.now()) };
  }

  /** The state as stored (consistent read), for a run that does not hold the lease (inline delivery). */
  async peek(destination: string): Promise<DestinationState> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk = :sk',
        ExpressionAttributeValues: marshall({ ':pk': this.key(destination).pk, ':sk': 'state' }),
        ConsistentRead: true,
      }),
    );
    const item = out.Items?.[0];
    return item ? stateOf(unmarshall(item), this.clock.now()) : {};
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

  /** Pauses the destination for every run until `pause.until` (fenced: only the lease holder). */
  async pause(lease: DestinationLease, pause: DestinationPause): Promise<void> {
    await this.leases.update(lease, {
      set: { pausedUntil: pause.until, pausedAt: pause.at, pauseCount: pause.count },
    });
    lease.pause = pause;
  }

  /** Ends a pause after a successful send, so the next 429's backoff starts small again. */
  async clearPause(lease: DestinationLease): Promise<void> {
    if (!lease.pause) return;
    await this.leases.update(lease, { remove: ['pausedUntil', 'pausedAt', 'pauseCount'] });
    lease.pause = undefined;
  }

  /**
   * Pauses the destination from a run that holds no lease on it (inline delivery). Only ever
   * lengthens a pause, so it cannot cut short one that the lease holder set.
   */
  async extendPause(destination: string, until: number, at: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(this.key(destination)),
          UpdateExpression: 'SET pausedUntil = :until, pausedAt = :at ADD pauseCount :one',
          ConditionExpression: 'attribute_not_exists(pausedUntil) OR pausedUntil < :until',
          ExpressionAttributeValues: marshall({ ':until': until, ':at': at, ':one': 1 }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Remembers that a body of `bytes` was too large, unless a smaller one is already known. */
  async noteTooLarge(lease: DestinationLease, bytes: number, at: number): Promise<void> {
    if (lease.tooLarge && lease.tooLarge.bytes <= bytes) return;
    await this.leases.update(lease, { set: { tooLargeBytes: bytes, tooLargeAt: at } });
    lease.tooLarge = { bytes, at };
  }

  renew(lease: DestinationLease): Promise<void> {
    return this.leases.renew(lease);
  }

  release(lease: DestinationLease, lastSentAt?: number): Promise<boolean> {
    return this.leases.release(lease, { set: { lastSentAt } });
  }
}
