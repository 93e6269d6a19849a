/**
 * Creating the table where it does not exist yet: a local run's DynamoDB (table.ts `ensureTable`,
 * which loads this only then). The CDK stack builds the same table on AWS.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
} from './sdk.ts';

/** The key and index names (table.ts `TABLE_KEYS`, passed in: this module imports nothing of table.ts). */
type TableKeys = Record<'partitionKey' | 'sortKey' | 'index' | 'indexPartitionKey' | 'indexSortKey', string>;

/**
 * Creates the table (and its index) when it does not exist, then waits until it is active. Runs
 * started together on a fresh local table race to create it: the losers are told it is in use,
 * and wait for it like the winner.
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  keys: TableKeys,
): Promise<'created' | 'exists'> {
  try {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') return 'exists';
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    await createTable(client, tableName, keys);
  }
  for (let i = 0; i < 60; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (out.Table?.TableStatus === 'ACTIVE') return 'created';
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`table ${tableName} did not become active`);
}

async function createTable(client: DynamoDBClient, tableName: string, keys: TableKeys): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: keys.partitionKey, AttributeType: 'S' },
          { AttributeName: keys.sortKey, AttributeType: 'S' },
          { AttributeName: keys.indexPartitionKey, AttributeType: 'S' },
          { AttributeName: keys.indexSortKey, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: keys.partitionKey, KeyType: 'HASH' },
          { AttributeName: keys.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: keys.index,
            KeySchema: [
              { AttributeName: keys.indexPartitionKey, KeyType: 'HASH' },
              { AttributeName: keys.indexSortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
  } catch (error) {
    // Another run created it a moment ago: it is there, or about to be.
    if ((error as { name?: string })?.name !== 'ResourceInUseException') throw error;
  }
}
