/**
 * The API's Idempotency-Key records: one item per (client, route, key), kept 24 hours, holding
 * what the request was (a fingerprint of it) and, once it is done, its answer.
 *
 * - `claim` creates the record (`running`, under a lease) with a conditional put; when one exists,
 *   it returns that instead. A record past its expiry counts as absent (the table's TTL deletes it
 *   some time later, and a local table never does). A `released` one, and a `running` one whose
 *   lease ran out with the same fingerprint (its process died), are taken over with a conditional
 *   update that keeps the record's `startedAt`: the claim answers it, so the work can name what it
 *   makes by the key and that time (a silence's id), and a retry after a crash at any point finds
 *   what the first attempt made instead of making it again.
 * - `complete` keeps the answer; `release` marks the record `released` (the request changed
 *   nothing, so the same key may try again: a released record counts as absent). Both only for
 *   the claim's holder (its token). Nothing deletes: the API's role may delete no item.
 *
 * The key's parts are percent-encoded before they are joined, so `#` never occurs inside one:
 * no client name, route or key can make one record's key equal another's.
 */
import { randomUUID } from 'node:crypto';
import type { TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand, UpdateItemCommand } from './sdk.ts';

/** How long a key is remembered. */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;
/** How long a running request holds its key before the same request may take it over. */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export interface IdempotencyScope {
  client: string;
  /** The route, as `METHOD /path/{param}`. */
  route: string;
  key: string;
}

export interface StoredAnswer {
  status: number;
  /** The answer's JSON, as sent. */
  body: string;
}

export interface IdempotencyRecord {
  fingerprint: string;
  state: 'running' | 'done';
  answer?: StoredAnswer;
}

const keyOf = (scope: IdempotencyScope) => ({
  pk: `idem#${[scope.client, scope.route, scope.key].map(encodeURIComponent).join('#')}`,
  sk: 'idem',
});

export class IdempotencyStore {
  constructor(private readonly io: TableIo) {}

  /**
   * Claims the key for a request with this fingerprint, or returns the record that holds it. A
   * claim answers when the key's first attempt started (`startedAt`, ms): now for a new record, the
   * record's own for one taken over.
   */
  async claim(
    scope: IdempotencyScope,
    fingerprint: string,
  ): Promise<{ token: string; startedAt: number } | { existing: IdempotencyRecord }> {
    for (let attempt = 0; ; attempt++) {
      const now = this.io.clock.now();
      const token = randomUUID();
      try {
        await this.io.client.send(
          new PutItemCommand({
            TableName: this.io.tableName,
            Item: marshall({
              ...keyOf(scope),
              fingerprint,
              state: 'running',
              token,
              startedAt: now,
              leaseUntil: now + IDEMPOTENCY_LEASE_MS,
              expiresAt: Math.ceil((now + IDEMPOTENCY_KEEP_MS) / 1000),
            }),
            ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',
            ExpressionAttributeNames: { '#expires': 'expiresAt' },
            ExpressionAttributeValues: marshall({ ':now': Math.floor(now / 1000) }),
          }),
        );
        return { token, startedAt: now };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      const taken = await this.takeOver(scope, fingerprint, token, now);
      if (taken !== undefined) return { token, startedAt: taken };
      const existing = await this.get(scope);
      if (existing) return { existing };
      // Gone between the requests (expired): claim again, a few times at most.
      if (attempt >= 3) throw new Error('the Idempotency-Key record kept changing; retry');
    }
  }

  /**
   * Takes a live record that nobody holds: released, or running with the same fingerprint and its
   * lease run out. Answers its `startedAt`, or undefined when it is not such a record.
   */
  private async takeOver(
    scope: IdempotencyScope,
    fingerprint: string,
    token: string,
    now: number,
  ): Promise<number | undefined> {
    try {
      const out = await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(keyOf(scope)),
          UpdateExpression: 'SET #state = :running, #token = :token, #lease = :lease, #fp = :fp',
          ConditionExpression:
            '#expires > :now AND (#state = :released OR (#state = :running AND #lease <= :nowMs AND #fp = :fp))',
          ExpressionAttributeNames: {
            '#state': 'state',
            '#token': 'token',
            '#expires': 'expiresAt',
            '#lease': 'leaseUntil',
            '#fp': 'fingerprint',
          },
          ExpressionAttributeValues: marshall({
            ':now': Math.floor(now / 1000),
            ':nowMs': now,
            ':running': 'running',
            ':released': 'released',
            ':token': token,
            ':lease': now + IDEMPOTENCY_LEASE_MS,
            ':fp': fingerprint,
          }),
          ReturnValues: 'ALL_NEW',
        }),
      );
      const item = unmarshall(out.Attributes ?? {});
      // A record written before `startedAt` was kept: its expiry, less the keep, to the second.
      return typeof item.startedAt === 'number'
        ? item.startedAt
        : Number(item.expiresAt) * 1000 - IDEMPOTENCY_KEEP_MS;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** The record of a key, or undefined when there is none or it has expired. */
  async get(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const out = await this.io.client.send(
      new GetItemCommand({ TableName: this.io.tableName, Key: marshall(keyOf(scope)), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const item = unmarshall(out.Item);
    if (Number(item.expiresAt) <= Math.floor(this.io.clock.now() / 1000)) return undefined;
    if (item.state === 'released') return undefined;
    const answer = item.answer as StoredAnswer | undefined;
    return {
      fingerprint: String(item.fingerprint),
      state: item.state === 'done' ? 'done' : 'running',
      ...(answer ? { answer } : {}),
    };
  }

  /** Keeps the answer of the claim `token` holds. False when the claim was lost (taken over). */
  async complete(scope: IdempotencyScope, token: string, answer: StoredAnswer): Promise<boolean> {
    try {
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(keyOf(scope)),
          UpdateExpression: 'SET #state = :done, #answer = :answer REMOVE #lease',
          ConditionExpression: '#token = :token',
          ExpressionAttributeNames: {
            '#state': 'state',
            '#answer': 'answer',
            '#lease': 'leaseUntil',
            '#token': 'token',
          },
          ExpressionAttributeValues: marshall({ ':done': 'done', ':answer': answer, ':token': token }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Frees the key the claim `token` holds: the same key may be tried again. */
  async release(scope: IdempotencyScope, token: string): Promise<void> {
    try {
      await this.io.client.send(
        new UpdateItemCommand({
          TableName: this.io.tableName,
          Key: marshall(keyOf(scope)),
          UpdateExpression: 'SET #state = :released REMOVE #lease',
          ConditionExpression: '#token = :token',
          ExpressionAttributeNames: { '#token': 'token', '#state': 'state', '#lease': 'leaseUntil' },
          ExpressionAttributeValues: marshall({ ':token': token, ':released': 'released' }),
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}
