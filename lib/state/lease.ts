/**
 * Leases with fencing, on one DynamoDB item each (a stream's state, or a destination's).
 *
 * A lease is taken with one conditional update that also bumps a fencing counter and returns the
 * whole item (so taking a stream's lease reads its cursor in the same request). Every later write
 * that matters is conditioned on `leaseOwner = me AND fence = my fence`: a holder whose lease
 * expired and was taken over can no longer move anything. A lease lapses `ttlMs` after its last
 * renewal (60 s by default: a run that died frees its streams within a minute).
 *
 * Expiries are times other runs read: the stores get the run's clock corrected onto the table's
 * timeline (state/clock-sync.ts, wired in runtime.ts), and a lease that expires further ahead than
 * any holder could have set it (its length plus SKEW_SLACK_MS) was written on a wrong clock and is
 * free to take.
 */

import { randomBytes } from 'node:crypto';
import type { DynamoDBClient, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { describeError } from '../errors.ts';
import { SKEW_SLACK_MS, SyncedClock } from './clock-sync.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from './sdk.ts';

export const LEASE_TTL_MS = 60_000;

/** The owner a run takes its leases as: its process and a random part, so no two runs share one. */
export function runOwner(): string {
  return `run-${process.pid}-${randomBytes(4).toString('hex')}`;
}

export interface Lease {
  pk: string;
  sk: string;
  owner: string;
  fence: number;
  expiresAt: number;
  /** The item's attributes as they were when the lease was taken. */
  item: Record<string, unknown>;
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  readonly code = 'lease_lost';
  constructor(pk: string) {
    super(`the lease on ${pk} was lost (it expired and another run took it)`);
  }
}

export interface FencedUpdate {
  /** Attributes to set. `undefined` values are skipped. */
  set?: Record<string, unknown>;
  /** Numeric attributes to add to. */
  add?: Record<string, number>;
  remove?: string[];
}

export class LeaseStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly ttlMs: number = LEASE_TTL_MS,
  ) {}

  /**
   * Takes the lease if it is free or lapsed; undefined when another holder has it, or when the
   * item fails `unless` (an extra condition in the same request, e.g. "not polled since").
   */
  async acquire(
    pk: string,
    sk: string,
    owner: string,
    unless?: { condition: string; values: Record<string, unknown> },
  ): Promise<Lease | undefined> {
    // An expiry is a time for others: not written before the clock was set by an answer.
    if (this.clock instanceof SyncedClock)
      await this.clock.settle(() =>
        this.client.send(
          new GetItemCommand({
            TableName: this.tableName,
            Key: marshall({ pk, sk }),
            ProjectionExpression: 'pk',
          }),
        ),
      );
    const now = this.clock.now();
    const expiresAt = now + this.ttlMs;
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall({ pk, sk }),
          UpdateExpression:
            'SET leaseOwner = :owner, leaseExpires = :exp, fence = if_not_exists(fence, :zero) + :one',
          ConditionExpression: `(attribute_not_exists(leaseOwner) OR leaseExpires < :now OR leaseExpires > :absurd)${unless ? ` AND (${unless.condition})` : ''}`,
          ExpressionAttributeValues: marshall({
            ':owner': owner,
            ':exp': expiresAt,
            ':zero': 0,
            ':one': 1,
            ':now': now,
            ':absurd': now + Math.max(this.ttlMs, LEASE_TTL_MS) + SKEW_SLACK_MS,
            ...unless?.values,
          }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const item = unmarshall(out.Attributes ?? {});
      return { pk, sk, owner, fence: Number(item.fence), expiresAt, item };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /**
   * Writes `update` only while `lease` is still ours, renewing it in the same request.
   * Throws LeaseLostError otherwise.
   */
  async update(lease: Lease, update: FencedUpdate = {}, options: { release?: boolean } = {}): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':owner': lease.owner, ':fence': lease.fence };
    const sets: string[] = [];
    const adds: string[] = [];
    const removes: string[] = [];
    let n = 0;
    const name = (attr: string) => {
      const key = `#a${n++}`;
      names[key] = attr;
      return key;
    };
    for (const [attr, value] of Object.entries(update.set ?? {})) {
      if (value === undefined) continue;
      const key = name(attr);
      values[`:v${key.slice(2)}`] = value;
      sets.push(`${key} = :v${key.slice(2)}`);
    }
    for (const [attr, value] of Object.entries(update.add ?? {})) {
      if (!value) continue;
      const key = name(attr);
      values[`:v${key.slice(2)}`] = value;
      adds.push(`${key} :v${key.slice(2)}`);
    }
    for (const attr of update.remove ?? []) removes.push(name(attr));
    const now = this.clock.now();
    if (options.release) {
      removes.push('leaseOwner');
      sets.push('leaseExpires = :expired');
      values[':expired'] = 0;
    } else {
      sets.push('leaseExpires = :exp');
      values[':exp'] = now + this.ttlMs;
    }
    const expression = [
      sets.length ? `SET ${sets.join(', ')}` : '',
      adds.length ? `ADD ${adds.join(', ')}` : '',
      removes.length ? `REMOVE ${removes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    const input: UpdateItemCommandInput = {
      TableName: this.tableName,
      Key: marshall({ pk: lease.pk, sk: lease.sk }),
      UpdateExpression: expression,
      ConditionExpression: 'leaseOwner = :owner AND fence = :fence',
      ExpressionAttributeValues: marshall(values),
      ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    };
    try {
      await this.client.send(new UpdateItemCommand(input));
      if (!options.release) lease.expiresAt = now + this.ttlMs;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(lease.pk);
      throw error;
    }
  }

  renew(lease: Lease): Promise<void> {
    return this.update(lease);
  }

  /** Frees the lease (fenced), writing `update` in the same request. A lost lease is not an error here. */
  async release(lease: Lease, update: FencedUpdate = {}): Promise<boolean> {
    try {
      await this.update(lease, update, { release: true });
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) return false;
      throw error;
    }
  }
}

/** The lease could not be renewed (throttling, the network) and would lapse before the next try. */
export class LeaseRenewalError extends Error {
  override readonly name = 'LeaseRenewalError';
  readonly code = 'lease_renewal_failed';
  constructor(pk: string, cause: unknown) {
    super(
      `could not renew the lease on ${pk} (${describeError(cause)}); stopping before it lapses, the next run resumes`,
      { cause },
    );
  }
}

/**
 * Keeps a lease alive on a timer while long work runs (a page that waits out a 429, a slow
 * webhook). Aborts `signal` when the lease is lost, so the work stops instead of writing on, with
 * what really happened: LeaseLostError when another run holds it now; LeaseRenewalError when
 * renewing failed for another reason (throttling, the network) and the lease would lapse before
 * the next try. A failure with time to spare is tried again on the next tick.
 */
export function keepAlive(
  store: LeaseStore,
  lease: Lease,
  everyMs: number = LEASE_TTL_MS / 3,
  clock: Pick<Clock, 'now'> = { now: Date.now },
): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const timer = setInterval(() => {
    store.renew(lease).catch((error: unknown) => {
      if (error instanceof LeaseLostError) controller.abort(error);
      else if (clock.now() + everyMs >= lease.expiresAt)
        controller.abort(new LeaseRenewalError(lease.pk, error));
    });
  }, everyMs);
  timer.unref();
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}
