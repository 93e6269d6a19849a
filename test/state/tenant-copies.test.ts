/**
 * Each tenant's own copy of the alert list (records/alert-index.ts `tenantEntryPk`): a client bound
 * to one or two tenants of many gets full pages of its alerts at the same bounded reads whatever the other
 * tenants' volume, where filtering the one list gave it a few a page; what was listed before the
 * copies existed comes from the global list, each item once. Real dynalite, the real writer and
 * reader, pages read through `GET /alerts`' own function.
 */
import { DeleteItemCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { listAlerts } from '../../lib/api/alerts.ts';
import type { Binding } from '../../lib/api/auth.ts';
import { systemClock } from '../../lib/clock.ts';
import { MAX_QUERIES, MAX_RECORD_KEYS, PAGE_ITEMS } from '../../lib/state/alert-list.ts';
import { queryAll } from '../../lib/state/io.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import { TENANT_COPIES_KEY } from '../../lib/state/records/alert-index.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

const TENANTS = Array.from({ length: 10 }, (_, i) => ({ id: 2001 + i, name: `Tenant ${i + 1}` }));
const MINE = 2001;

/** One stream's page: `count` events of `tenant`, the n-th of each tenant's from `from`. */
function page(tenant: number, from: number, count: number, at: number): NewDelivery[] {
  return Array.from({ length: count }, (_, i) => {
    const uid = `paste/${tenant}/${String(from + i).padStart(4, '0')}`;
    return {
      destination: 'hook',
      kind: 'event' as const,
      key: `${tenant}:${uid}`,
      source: `tenant:${tenant}`,
      routes: ['all'],
      status: 'pending' as const,
      item: {
        metadata: { uid, type: 'leak', severity: 'high', matched_at: new Date(at - i).toISOString() },
      },
    };
  });
}

/** Every tenant's pages, interleaved in time as their streams would record them: `rounds` of each. */
async function record(
  table: string,
  rounds: number,
  from: number,
  start: number,
  client: DynamoDBClient = db.client,
): Promise<void> {
  let t = start;
  for (let round = 0; round < rounds; round++)
    for (const tenant of TENANTS) {
      const clock = { ...systemClock, now: () => t };
      await new DeliveryRecords(client, table, clock).recordPage(page(tenant.id, from + round * 10, 10, t), {
        exclusive: true,
      });
      t += 1_000;
    }
}

/** Every page of the list as `binding` reads it: the keys, and each page's table requests. */
async function readAll(table: string, binding: Binding) {
  const counting = countingClient(db.endpoint);
  const io = { client: counting.client, tableName: table, clock: systemClock };
  const keys: string[] = [];
  const pages: { items: number; queries: number; batches: number }[] = [];
  let cursor: string | undefined;
  do {
    counting.requests.length = 0;
    const answer = await listAlerts(
      { io, tenants: async () => TENANTS },
      cursor ? { cursor: [cursor] } : {},
      binding,
    );
    keys.push(...answer.items.map((i) => i.key));
    pages.push({
      items: answer.items.length,
      queries: counting.requests.filter((r) => r.action === 'Query').length,
      batches: counting.requests.filter((r) => r.action === 'BatchGetItem').length,
    });
    cursor = answer.cursor;
  } while (cursor && pages.length < 40);
  counting.client.destroy();
  return { keys, pages };
}

const bound: Binding = { tenants: new Set([MINE]), topLevel: false };

describe('a tenant’s own copy of the alert list', () => {
  /** Six rounds of each tenant's pages of 10: 60 alerts a tenant, 600 in all. */
  let shared = '';
  beforeAll(async () => {
    shared = await db.table();
    await record(shared, 6, 0, Date.now() - 3_600_000);
  });

  it('bound to 1 of 10 tenants: full pages of its 60 alerts, each once, at the same bounded reads', async () => {
    const table = shared;
    const { keys, pages } = await readAll(table, bound);
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);
    expect(keys.every((k) => k.startsWith(`${MINE}:`))).toBe(true);
    expect(pages[0]?.items).toBe(PAGE_ITEMS);
    for (const p of pages) {
      // The copy's marker is one BatchGet; the records' state the rest (MAX_RECORD_KEYS: 3 batches).
      expect(p.queries).toBeLessThanOrEqual(MAX_QUERIES);
      expect(p.batches).toBeLessThanOrEqual(1 + Math.ceil(MAX_RECORD_KEYS / 100));
    }

    // Read from the one list filtered, as before the copies, the same client gets a few a page.
    const filtered = await readAll(table, { tenants: new Set([MINE]), topLevel: true });
    expect(filtered.pages[0]?.items).toBeLessThan(PAGE_ITEMS / 2);
  });

  it('bound to 2 of 10 tenants: their copies merged newest first, full pages, each alert once', async () => {
    const table = shared;
    const two: Binding = { tenants: new Set([MINE, MINE + 7]), topLevel: false };
    const { keys, pages } = await readAll(table, two);
    expect(keys).toHaveLength(120);
    expect(new Set(keys).size).toBe(120);
    expect(keys.every((k) => k.startsWith(`${MINE}:`) || k.startsWith(`${MINE + 7}:`))).toBe(true);
    expect(pages.slice(0, 2).map((p) => p.items)).toEqual([PAGE_ITEMS, PAGE_ITEMS]);
    // Newest first across both: each page of one tenant's (10 a round) comes before the older rounds.
    const rounds = keys.map((k) => Math.floor(Number(k.slice(-4)) / 10));
    expect(rounds).toEqual([...rounds].sort((a, b) => b - a));
    // Each copy's page a Query or a few, both at once: twice one tenant's, whatever the others'.
    for (const p of pages) expect(p.queries).toBeLessThanOrEqual(2 * MAX_QUERIES);
  });

  it('what was listed before the copies existed comes from the global list: every alert once, newest first', async () => {
    const table = await db.table();
    // Recorded by a writer before the copies: the global list alone (its copies and marker removed).
    await record(table, 3, 0, Date.now() - 7_200_000);
    for (const item of await queryAll(
      { client: db.client, tableName: table, clock: systemClock },
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({
          ':pk': `alerts#t${MINE}#${new Date(Date.now() - 7_200_000).toISOString().slice(0, 7)}`,
        }),
      },
    ))
      await db.client.send(new DeleteItemCommand({ TableName: table, Key: { pk: item.pk!, sk: item.sk! } }));
    await db.client.send(new DeleteItemCommand({ TableName: table, Key: marshall(TENANT_COPIES_KEY) }));
    // Then the copies begin (a new process: the marker is written again before its first copy).
    const later = createDynamoClient({ endpoint: db.endpoint });
    await record(table, 3, 30, Date.now() - 3_600_000, later);
    later.destroy();
    const { keys, pages } = await readAll(table, bound);
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);
    // Newest first across the switch: the 30 with copies, then the 30 from before them.
    const numbers = keys.map((k) => Number(k.slice(-4)));
    expect(numbers.slice(0, 30).every((n) => n >= 30)).toBe(true);
    expect(numbers.slice(30).every((n) => n < 30)).toBe(true);
    expect(pages.every((p) => p.queries <= MAX_QUERIES)).toBe(true);
    const marker = await queryAll(
      { client: db.client, tableName: table, clock: systemClock },
      {
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': TENANT_COPIES_KEY.pk }),
      },
    );
    expect(marker.map((m) => typeof unmarshall(m).at)).toEqual(['string']);

    // A pack recorded before the marker but copied after it (another process wrote the marker in
    // between): listed once, from the global list, not from the copy too.
    const middle = new Date(Date.now() - 3_600_000 + 40_000).toISOString();
    await db.client.send(
      new PutItemCommand({ TableName: table, Item: marshall({ ...TENANT_COPIES_KEY, at: middle }) }),
    );
    const again = await readAll(table, bound);
    expect(again.keys).toHaveLength(60);
    expect(new Set(again.keys).size).toBe(60);
  });
});
