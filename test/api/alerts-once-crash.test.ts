/**
 * Each alert once (section 13), attacked: a shared stream dies after each of its writes (a DynamoDB
 * client whose Nth write lands and then fails with every later request, as silences-crash.test.ts
 * does); then the other stream records the same items and the stopped one re-reads its page, in
 * either order. Every item is listed at most once, and a row or a detail shows both streams'
 * destinations. (Died after its details and before its list pack, an item is listed by nobody:
 * shared-index.ts says so.) Real dynalite, the API app.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, bearer, buildApi } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();

interface Row {
  key: string;
  deliveries: { id: string; destination: string; status: string }[];
}

async function allRows(api: ApiUnderTest, query = ''): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = query && cursor ? '&' : '';
    const res = await api.app.request(`/alerts?${query}${cursor ? `${sep}cursor=${cursor}` : ''}`, {
      headers: bearer(api.tokens.runbook),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { items: Row[]; cursor?: string };
    rows.push(...body.items);
    cursor = body.cursor;
    pages += 1;
  } while (cursor && pages < 20);
  return rows;
}

const states = (row: Pick<Row, 'deliveries'>) =>
  Object.fromEntries(row.deliveries.map((d) => [d.destination, d.status]));

async function detail(api: ApiUnderTest, key: string) {
  const res = await api.app.request(`/alerts/${encodeURIComponent(key)}`, {
    headers: bearer(api.tokens.runbook),
  });
  return { status: res.status, body: (await res.json()) as Row };
}

class Crash extends Error {}
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'BatchWriteItemCommand']);

/** A client whose `after`-th write lands and then dies, with every later request (the process is gone). */
function dying(after: number): DynamoDBClient {
  let writes = 0;
  let dead = false;
  return new Proxy(db.client, {
    get(target, prop) {
      if (prop !== 'send') return Reflect.get(target, prop);
      return async (command: { constructor: { name: string } }) => {
        if (dead) throw new Crash('the process had died');
        const out = await target.send(command as never);
        if (WRITES.has(command.constructor.name) && ++writes === after) {
          dead = true;
          throw new Crash(`died after write ${after}`);
        }
        return out;
      };
    },
  }) as DynamoDBClient;
}

const now = Date.now();
const page = (prefix: string, destination: string, source: string): NewDelivery[] =>
  Array.from({ length: 4 }, (_, i) => ({
    destination,
    kind: 'event',
    key: `${prefix}/${i}`,
    source,
    routes: [source],
    status: 'pending',
    item: {
      metadata: {
        uid: `${prefix}/${i}`,
        type: 'leak',
        severity: 'high',
        matched_at: new Date(now - i * 1000).toISOString(),
        estimated_created_at: new Date(now - i * 1000).toISOString(),
      },
    },
  }));

describe('a shared stream that dies after each of its writes', () => {
  // 4 records, 4 detail updates, 1 list pack: 9 writes.
  for (const after of [1, 2, 4, 5, 9])
    for (const order of ['other first', 'itself first'] as const)
      it(`after write ${after}, then ${order === 'other first' ? 'the other stream, then its re-read' : 'its re-read, then the other stream'}: each item at most once, with both`, async () => {
        const table = await db.table();
        const prefix = `leak/${after}/${order.split(' ')[0]}`;
        const feed = page(prefix, 'b', 'tenant');
        const group = page(prefix, 'a', 'group:102');
        await expect(
          new DeliveryRecords(dying(after), table, systemClock).recordPage(feed, { exclusive: false }),
        ).rejects.toThrow(Crash);
        const records = new DeliveryRecords(db.client, table, systemClock);
        for (const one of order === 'other first' ? [group, feed] : [feed, group])
          await records.recordPage(one, { exclusive: false });
        const api = buildApi(emu, { table: { client: db.client, name: table } });
        const rows = await allRows(api);
        expect(rows.length - new Set(rows.map((r) => r.key)).size, 'rows listed twice').toBe(0);
        for (const row of rows) expect(states(row), row.key).toEqual({ a: 'pending', b: 'pending' });
        for (const { key } of feed) {
          const one = await detail(api, key);
          // Listed or not, an item with a detail shows both destinations' deliveries.
          if (one.status === 200) expect(states(one.body), key).toEqual({ a: 'pending', b: 'pending' });
          else
            expect(
              rows.some((r) => r.key === key),
              key,
            ).toBe(false);
        }
        const listed = (await allRows(api, 'destination=b')).length;
        expect(listed).toBe(rows.length);
      });
});
