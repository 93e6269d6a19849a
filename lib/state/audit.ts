/**
 * The audit trail: one record per asset toggle attempt (who, which asset, to what, with what
 * outcome, when), one per change to the run-time silences (who added or ended which, when, with
 * what outcome), from the HTTP API and the CLI alike, and one per API request refused once its
 * client was known (outside its scopes, or a reused Idempotency-Key); newest first when listed.
 * (Actions on events: state/actions.ts.)
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
  /**
   * Whose asset: the `tenants` entry whose token the toggle was sent with, or `top` for the
   * top level's; absent in entries written before it was kept (seen by unbound clients only).
   */
  tenant?: number | 'top';
}

/** Every toggle, whatever the asset: the merged trail reads it (state/audit-trail.ts). */
export const ASSETS_AUDIT_PK = 'audit#assets';

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
    // Per asset (GET /assets/{id}/audit), and in the one partition of every toggle (GET /audit).
    await Promise.all(
      [`audit#asset#${entry.assetId}`, ASSETS_AUDIT_PK].map((pk) =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: marshall({ pk, sk: `${entry.at}#${entry.requestId}`, ...entry }),
          }),
        ),
      ),
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

/**
 * One change to the run-time silences (docs/runbook.md): who, when, what. Written like a
 * toggle's record: `pending` before the change, the outcome after it, under the same key, so no
 * silence is made or ended without a trace.
 */
export interface SilenceAuditEntry {
  at: string;
  requestId: string;
  /** The API client's name, or `cli:<user>`. */
  client: string;
  action: 'add' | 'expire';
  silenceId: string;
  /** The silence asked for (add): its match, until and reason. */
  silence?: { match: Record<string, unknown>; until: string; reason: string };
  /** `ok`, `already_expired`, an error code (`not_found`), or `pending` while it runs. */
  outcome: string;
  /** HTTP status the caller got; 0 while pending. */
  status: number;
}

export interface SilenceAuditStore {
  record(entry: SilenceAuditEntry): Promise<void>;
  /** Newest first, at most `limit` (default 100). */
  list(limit?: number): Promise<SilenceAuditEntry[]>;
}

export const SILENCE_AUDIT_PK = 'audit#silence';

export class DynamoSilenceAudit implements SilenceAuditStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async record(entry: SilenceAuditEntry): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: marshall({ pk: SILENCE_AUDIT_PK, sk: `${entry.at}#${entry.requestId}`, ...entry }),
      }),
    );
  }

  async list(limit = 100): Promise<SilenceAuditEntry[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': SILENCE_AUDIT_PK }),
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { pk: _pk, sk: _sk, ...entry } = unmarshall(item);
      return entry as unknown as SilenceAuditEntry;
    });
  }
}

/**
 * A request refused after its client was known: outside its scopes (403), or an Idempotency-Key
 * sent again with another request (422). Who tried what.
 */
export interface RefusalAuditEntry {
  at: string;
  requestId: string;
  client: string;
  method: string;
  path: string;
  /** The scope the request needed (403). */
  scope?: string;
  /** Why, when not a scope: the error code the client got (`idempotency_key_reused`). */
  code?: string;
  status: 403 | 422;
}

export interface RefusalAuditStore {
  record(entry: RefusalAuditEntry): Promise<void>;
  /** Newest first, at most `limit` (default 100). */
  list(limit?: number): Promise<RefusalAuditEntry[]>;
}

export const REFUSAL_AUDIT_PK = 'audit#refused';

export class DynamoRefusalAudit implements RefusalAuditStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async record(entry: RefusalAuditEntry): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: marshall({ pk: REFUSAL_AUDIT_PK, sk: `${entry.at}#${entry.requestId}`, ...entry }),
      }),
    );
  }

  async list(limit = 100): Promise<RefusalAuditEntry[]> {
    const out = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': REFUSAL_AUDIT_PK }),
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => {
      const { pk: _pk, sk: _sk, ...entry } = unmarshall(item);
      return entry as unknown as RefusalAuditEntry;
    });
  }
}
