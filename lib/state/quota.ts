/**
 * The last reading of the organization's monthly global-search quota, as the upstream reported it
 * (`X-Flare-Global-Searches-Remaining`), kept in the table: credential polling pauses below
 * `upstream.quotaReserve` (docs/architecture.md), whichever run read it last, and `status` shows
 * it. One item, written at most once a cycle.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SKEW_SLACK_MS } from './clock-sync.ts';
import { marshall, unmarshall } from './marshall.ts';
import { GetItemCommand, UpdateItemCommand } from './sdk.ts';

export interface QuotaReading {
  remaining: number;
  /** When the upstream said so (ISO time). */
  at: string;
}

export const QUOTA_KEY = { pk: 'quota', sk: 'global-search' };

export class QuotaStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  /** A reading from the stored item, or undefined when it holds none. */
  static from(item: Record<string, unknown> | undefined): QuotaReading | undefined {
    return typeof item?.remaining === 'number' && typeof item.at === 'string'
      ? { remaining: item.remaining, at: item.at }
      : undefined;
  }

  async read(): Promise<QuotaReading | undefined> {
    const out = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: marshall(QUOTA_KEY), ConsistentRead: true }),
    );
    return QuotaStore.from(out.Item ? unmarshall(out.Item) : undefined);
  }

  /**
   * Claims the one probe search of the hour for this run, for the whole deployment: true when no
   * run probed in the last `everyMs` (a claim dated further ahead than a few seconds was written
   * on a wrong clock, and does not count).
   */
  async claimProbe(now: number, everyMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(QUOTA_KEY),
          UpdateExpression: 'SET probeAt = :now',
          ConditionExpression: 'attribute_not_exists(probeAt) OR probeAt <= :due OR probeAt > :future',
          ExpressionAttributeValues: marshall({
            ':now': now,
            ':due': now - everyMs,
            ':future': now + SKEW_SLACK_MS,
          }),
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: string })?.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  /** Stores `reading` unless a later one is stored already (another run read the quota since). */
  async write(reading: QuotaReading): Promise<void> {
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: marshall(QUOTA_KEY),
          UpdateExpression: 'SET remaining = :r, #at = :at',
          ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at',
          ExpressionAttributeNames: { '#at': 'at' },
          ExpressionAttributeValues: marshall({ ':r': reading.remaining, ':at': reading.at }),
        }),
      )
      .catch((error: unknown) => {
        if ((error as { name?: string })?.name !== 'ConditionalCheckFailedException') throw error;
      });
  }
}
