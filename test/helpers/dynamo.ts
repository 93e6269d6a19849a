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

/** One DynamoDB request as a counting client saw it. */
export interface SeenRequest {
  action: string;
  index?: string;
  /** The partition named: a Query's `:pk`, or a GetItem/PutItem/UpdateItem key. */
  pk?: string;
}

/**
 * A client of its own that notes every request it sends (each once, whatever the SDK retries), so
 * a test can say how many requests, of which kind, an operation costs, and that none was sent.
 */
export function countingClient(endpoint: string): { client: DynamoDBClient; requests: SeenRequest[] } {
  const client = createDynamoClient({ endpoint });
  const requests: SeenRequest[] = [];
  type Input = {
    IndexName?: string;
    ExpressionAttributeValues?: Record<string, { S?: string }>;
    Key?: { pk?: { S?: string } };
    Item?: { pk?: { S?: string } };
  };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Input;
      const pk = input.ExpressionAttributeValues?.[':pk']?.S ?? input.Key?.pk?.S ?? input.Item?.pk?.S;
      requests.push({
        action: String(context.commandName ?? '').replace(/Command$/, ''),
        ...(input.IndexName ? { index: input.IndexName } : {}),
        ...(pk ? { pk } : {}),
      });
      return next(args);
    },
    { step: 'initialize', name: 'countRequestsForTests' },
  );
  return { client, requests };
}
