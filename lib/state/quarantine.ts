/**
 * Items that broke the spec's types, kept aside with the fields they broke so an operator can see
 * them (and the stream goes on without them). Raw items are stored with passwords masked.
 */

import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { fitKey, SORT_KEY_BYTES } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';
import { BatchWriteItemCommand, QueryCommand } from './sdk.ts';

export interface QuarantinedItem {
  stream: string;
  /** The item's key when readable, else a hash of its content. */
  key: string;
  issues: string;
  /** The raw item with passwords masked, as JSON (cut at 20 KB). */
  rawJson: string;
  seenAt: string;
}

export class QuarantineStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly onRequest?: (operation: string) => void,
  ) {}

  async record(stream: string, items: { key?: string; issues: string; raw: unknown }[]): Promise<void> {
    const seenAt = new Date(this.clock.now()).toISOString();
    const rows = items.map((item) => {
      const rawJson = JSON.stringify(item.raw) ?? 'null';
      const key = item.key ?? `sha256:${createHash('sha256').update(rawJson).digest('hex').slice(0, 24)}`;
      return {
        pk: `quarantine#${stream}`,
        sk: fitKey(key, SORT_KEY_BYTES),
        stream,
        key,
        issues: item.issues.slice(0, 2_000),
        rawJson: rawJson.length > 20_000 ? `${rawJson.slice(0, 20_000)}…` : rawJson,
        seenAt,
      };
    });
    const unique = [...new Map(rows.map((r) => [r.sk, r])).values()];
    for (let i = 0; i < unique.length; i += 25) {
      let requests = unique.slice(i, i + 25).map((row) => ({ PutRequest: { Item: marshall(row) } }));
      while (requests.length) {
        this.onRequest?.('BatchWriteItem');
        const out = await this.client.send(
          new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (out.UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
        if (requests.length) await this.clock.sleep(100);
      }
    }
  }

  async list(stream: string, limit = 100): Promise<QuarantinedItem[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `quarantine#${stream}` }),
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { pk: _pk, sk: _sk, ...rest } = unmarshall(item);
      return rest as unknown as QuarantinedItem;
    });
  }
}
