/**
 * The audit trail of the HTTP API: one record per asset toggle attempt (who, which asset, to
 * what, with what outcome, when), newest first when listed.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from './marshall.ts';
import { PutItemCommand, QueryCommand } from './sdk.ts';

export interface AuditEntry {
  /** ISO time of the attempt. */
  at: string;
  requestId: string;
  /** Name of the API client (from `apiClients`), never its token. */
  client: string;
  assetId: number;
  requestedDisabled: boolean;
  /** `ok`, or the error code the caller got (`not_found`, `upstream_error`, ...). */
  outcome: string;
  /** HTTP status the caller got. */
  status: number;
  /** The asset's state after the toggle, when it succeeded. */
  isDisabled?: boolean;
}

export interface AuditStore {
  record(entry: AuditEntry): Promise<void>;
  /** Newest first, at most `limit` (default 100). */
  list(assetId: number, limit?: number): Promise<AuditEntry[]>;
}

export class DynamoAuditStore implements AuditStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: marshall({
          pk: `audit#asset#${entry.assetId}`,
          sk: `${entry.at}#${entry.requestId}`,
          ...entry,
        }),
      }),
    );
  }

  async list(assetId: number, limit = 100): Promise<AuditEntry[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `audit#asset#${assetId}` }),
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { pk: _pk, sk: _sk, ...entry } = unmarshall(item);
      return entry as unknown as AuditEntry;
    });
  }
}

/** An in-memory audit store, for unit tests of the API's own logic. */
export class MemoryAuditStore implements AuditStore {
  readonly entries: AuditEntry[] = [];
  async record(entry: AuditEntry): Promise<void> {
    // Same key as the table (asset, time, request id): a second record replaces the first, as PutItem does.
    const i = this.entries.findIndex(
      (e) => e.assetId === entry.assetId && e.at === entry.at && e.requestId === entry.requestId,
    );
    if (i >= 0) this.entries[i] = entry;
    else this.entries.push(entry);
  }
  async list(assetId: number, limit = 100): Promise<AuditEntry[]> {
    return this.entries
      .filter((e) => e.assetId === assetId)
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, limit);
  }
}
