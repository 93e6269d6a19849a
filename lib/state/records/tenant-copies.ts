/**
 * Tenants' copies of their list packs (alert-index.ts `tenantEntryPk`): before a process writes its
 * first copy, it makes sure the table says since when copies exist (one conditional put, once per
 * process and table), so a reader knows that older packs are in the global partition only.
 */
import type { StoredItem, TableIo } from '../io.ts';
import { marshall } from '../marshall.ts';
import { ConditionalCheckFailedException, PutItemCommand } from '../sdk.ts';
import { MONTH_PREFIX, TENANT_COPIES_KEY } from './alert-index.ts';

/** Tables (by client: two local DynamoDBs may hold tables of one name) known to hold the marker. */
const marked = new WeakMap<object, Set<string>>();

/** Whether `lists` holds a tenant's copy of a list pack. */
export function holdsTenantCopies(lists: readonly StoredItem[]): boolean {
  return lists.some((item) => item.pk?.S?.startsWith(`${MONTH_PREFIX}t`) === true);
}

/** The marker of since when copies exist, written if it is not there yet; then the copies may go. */
export async function ensureTenantCopies(io: TableIo): Promise<void> {
  const tables = marked.get(io.client) ?? new Set<string>();
  if (tables.has(io.tableName)) return;
  try {
    io.onRequest?.('PutItem');
    await io.client.send(
      new PutItemCommand({
        TableName: io.tableName,
        Item: marshall({ ...TENANT_COPIES_KEY, at: new Date(io.clock.now()).toISOString() }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  tables.add(io.tableName);
  marked.set(io.client, tables);
}
