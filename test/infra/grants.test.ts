/**
 * The DynamoDB grants are exactly what the code uses. The real poll cycle and delivery pass run
 * against the emulator and dynalite through a client that records every request, and the real
 * audit store does the same for the API; what they send must equal what the stack grants, on the
 * table or the index the stack grants it on, and the API must touch audit items only (the
 * `dynamodb:LeadingKeys` condition of its grant).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TABLE_ACTIONS, POLLER_INDEX_ACTIONS, POLLER_TABLE_ACTIONS } from '../../infra/stack.ts';
import { DynamoAuditStore } from '../../lib/state/audit.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 30, credentials: 60 });
const db = useDynalite();
let accepting: Receiver;
let refusing: Receiver;

interface Request {
  action: string;
  index?: string;
  /** Partition key values the request names (items written, keys read, or the Query's `:pk`). */
  keys: string[];
}

type Item = Record<string, { S?: string }>;
type Write = { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } };
interface Input {
  Item?: Item;
  Key?: Item;
  IndexName?: string;
  ExpressionAttributeValues?: Item;
  /** BatchGetItem: `{ Keys }` per table; BatchWriteItem: a list of writes per table. */
  RequestItems?: Record<string, { Keys?: Item[] } | Write[]>;
}

/** A DynamoDB client that records each request's action, index and partition keys. */
function recordingClient(endpoint: string, log: Request[]): DynamoDBClient {
  const client = createDynamoClient({ endpoint });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Input;
      const keys: string[] = [];
      const pk = (item: Item | undefined) => {
        if (item?.pk?.S) keys.push(item.pk.S);
      };
      pk(input.Item);
      pk(input.Key);
      for (const table of Object.values(input.RequestItems ?? {})) {
        if (Array.isArray(table))
          for (const write of table) pk(write.PutRequest?.Item ?? write.DeleteRequest?.Key);
        else for (const key of table.Keys ?? []) pk(key);
      }
      const queried = input.ExpressionAttributeValues?.[':pk']?.S;
      if (queried && !input.IndexName) keys.push(queried);
      log.push({
        action: `dynamodb:${String(context.commandName).replace(/Command$/, '')}`,
        ...(input.IndexName ? { index: input.IndexName } : {}),
        keys,
      });
      return next(args);
    },
    { step: 'initialize', name: 'recordRequests' },
  );
  return client;
}

beforeAll(async () => {
  accepting = await startReceiver();
  // A permanent refusal: deliveries to it go dead and the destination is marked refused.
  refusing = await startReceiver({ status: 400, body: 'no such hook' });
});
afterAll(async () => {
  await accepting.close();
  await refusing.close();
});

describe('DynamoDB grants match the code', () => {
  it('the pollers use exactly the granted actions: table actions on the table, Query on gsi1 only', async () => {
    const log: Request[] = [];
    const client = recordingClient(db.endpoint, log);
    const world = await makeWorld(
      emu,
      { endpoint: db.endpoint, client, table: () => db.table() },
      {
        sources: {
          // Two event streams: records are created with conditional puts; one credential
          // stream: with batch writes. Both paths run.
          tenantEvents: { lookback: 'P7D' },
          identifierGroups: [{ id: 101, lookback: 'P7D' }],
          credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 20 },
        },
        destinations: {
          ok: { type: 'webhook', url: accepting.url },
          refused: { type: 'webhook', url: refusing.url },
        },
        routes: [{ name: 'everything', match: {}, to: ['ok', 'refused'] }],
      },
    );
    const events = await world.cycle('events');
    const credentials = await world.cycle('credentials');
    client.destroy();

    // The run did real work: items polled, some delivered, some refused for good.
    expect(events.streams.reduce((n, s) => n + s.newItems, 0)).toBeGreaterThan(0);
    expect(credentials.streams.reduce((n, s) => n + s.newItems, 0)).toBeGreaterThan(0);
    expect(accepting.requests.length).toBeGreaterThan(0);
    expect(refusing.requests.length).toBeGreaterThan(0);

    const onTable = new Set(log.filter((r) => !r.index).map((r) => r.action));
    const onIndex = new Set(log.filter((r) => r.index).map((r) => `${r.action} on ${r.index}`));
    expect([...onTable].sort()).toEqual([...POLLER_TABLE_ACTIONS].sort());
    expect([...onIndex].sort()).toEqual(POLLER_INDEX_ACTIONS.map((a) => `${a} on gsi1`));
    // The pollers never touch the API's audit items.
    expect(log.flatMap((r) => r.keys).filter((k) => k.startsWith('audit#'))).toEqual([]);
  });

  it('the API uses exactly PutItem and Query, on audit items only', async () => {
    const log: Request[] = [];
    const client = recordingClient(db.endpoint, log);
    const audit = new DynamoAuditStore(client, await db.table());
    await audit.record({
      at: new Date().toISOString(),
      requestId: 'req-1',
      client: 'runbook',
      assetId: 7,
      requestedDisabled: true,
      outcome: 'ok',
      status: 200,
      isDisabled: true,
    });
    expect(await audit.list(7)).toHaveLength(1);
    client.destroy();

    expect([...new Set(log.map((r) => r.action))].sort()).toEqual([...API_TABLE_ACTIONS].sort());
    expect(log.filter((r) => r.index)).toEqual([]);
    const keys = log.flatMap((r) => r.keys);
    expect(keys.length).toBe(2);
    // What the grant's condition `ForAllValues:StringLike dynamodb:LeadingKeys audit#*` allows.
    expect(keys.every((k) => /^audit#/.test(k))).toBe(true);
  });
});
