/**
 * Items that broke the spec's types, kept aside with the fields they broke so an operator can see
 * them (and the stream goes on without them). Raw items are stored with passwords masked.
 */

import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { batchPut, queryAll, type TableIo } from './io.ts';
import { fitKey, SORT_KEY_BYTES } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';

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
  private readonly io: TableIo;

  constructor(
    client: DynamoDBClient,
    tableName: string,
    clock: Clock,
    onRequest?: (operation: string) => void,
  ) {
    this.io = { client, tableName, clock, onRequest };
  }

  async record(stream: string, items: { key?: string; issues: string; raw: unknown }[]): Promise<void> {
    const seenAt = new Date(this.io.clock.now()).toISOString();
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
    await batchPut(
      this.io,
      unique.map((row) => marshall(row)),
      1,
    );
  }

  async list(stream: string, limit = 100): Promise<QuarantinedItem[]> {
    const items = await queryAll(
      this.io,
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `quarantine#${stream}` }),
      },
      limit,
    );
    return items.map((item) => {
      const { pk: _pk, sk: _sk, ...rest } = unmarshall(item);
      return rest as unknown as QuarantinedItem;
    });
  }
}
