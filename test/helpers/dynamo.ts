/** A real dynalite over HTTP for a test file, with a fresh table per call of `table()`. */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type LocalDynamo, startDynalite } from '../../lib/state/local.ts';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface DynamoFixture {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  /** Creates a new, empty table and returns its name. */
  table(): Promise<string>;
}

export function useDynalite(): DynamoFixture {
  let local: LocalDynamo | undefined;
  let client: DynamoDBClient | undefined;
  beforeAll(async () => {
    local = await startDynalite();
    client = createDynamoClient({ endpoint: local.endpoint });
  });
  afterAll(async () => {
    client?.destroy();
    await local?.close();
  });
  return {
    get endpoint() {
      if (!local) throw new Error('dynalite not started');
      return local.endpoint;
    },
    get client() {
      if (!client) throw new Error('dynalite not started');
      return client;
    },
    async table() {
      const name = `t-${randomBytes(4).toString('hex')}`;
      await ensureTable(this.client, name);
      return name;
    },
  };
}
