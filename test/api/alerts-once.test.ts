/**
 * Each alert once (docs/console.md): two event streams, the tenant feed and an identifier group,
 * find the same items and route them to different destinations (`sources: tenant` to `b`,
 * `group:102` to `a`). `GET /alerts` lists each item once, with both destinations' deliveries, in
 * its row, under the destination and state filters, and in its detail; also when two workers
 * record the same items at the same moment (each holds its first index write until both have made
 * their records), when one stops between its writes (a client that fails from a chosen request
 * on), and while a reader pages. On real dynalite, the emulator, the real poll cycle and delivery
 * pass, and the API app.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { MAX_QUERIES, PAGE_ITEMS } from '../../lib/state/alert-list.ts';
import { DeliveryRecords } from '../../lib/state/records/index.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { fakeClock } from '../helpers/clock.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { allRows, destinationsOf, get, leaks, page, type Row } from './alert-rows.ts';
import { type ApiUnderTest, buildApi } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();

const config = {
  sources: {
    tenantEvents: { lookback: 'P30D' },
    identifierGroups: [{ id: 102, lookback: 'P30D' }],
  },
  destinations: { a: { type: 'console' }, b: { type: 'console' } },
  routes: [
    { name: 'feed', match: { sources: ['tenant'] }, to: ['b'] },
    { name: 'group', match: { sources: ['group:102'] }, to: ['a'] },
  ],
};

describe('two streams record the same items to different destinations', () => {
  let world: World;
  let api: ApiUnderTest;
  /** Item key to the destinations its delivery records name. */
  const recorded = new Map<string, string[]>();

  beforeAll(async () => {
    world = await makeWorld(emu, db, config);
    await world.cycle('events');
    await world.deliver();
    for (const r of await world.runtime.deliver.deliveries.list({ limit: 10_000 }))
      recorded.set(r.key, [...(recorded.get(r.key) ?? []), r.destination].sort());
    api = buildApi(emu, { table: { client: db.client, name: world.table } });
  });

  it('lists each item once, with every destination’s delivery, newest recorded first', async () => {
    const both = [...recorded].filter(([, d]) => d.length === 2).map(([k]) => k);
    // The group's items are in the tenant feed too: both streams found them.
    expect(both.length).toBeGreaterThan(3);
    const rows = await allRows(api);
    const keys = rows.map((r) => r.key);
    expect(keys.length - new Set(keys).size, 'rows listed twice').toBe(0);
    expect(new Set(keys)).toEqual(new Set(recorded.keys()));
    for (const row of rows) expect(destinationsOf(row), row.key).toEqual(recorded.get(row.key));
    for (const row of rows.filter((r) => both.includes(r.key)))
      expect(row.deliveries.map((d) => d.status)).toEqual(['sent', 'sent']);
  });

  it('finds an item under either destination and under the state of either delivery', async () => {
    const both = [...recorded].filter(([, d]) => d.length === 2).map(([k]) => k);
    const toA = (await allRows(api, 'destination=a')).map((r) => r.key);
    const toB = (await allRows(api, 'destination=b')).map((r) => r.key);
    const sent = (await allRows(api, 'state=sent')).map((r) => r.key);
    const times = (keys: string[], key: string) => keys.filter((k) => k === key).length;
    for (const key of both)
      expect([times(toA, key), times(toB, key), times(sent, key)], key).toEqual([1, 1, 1]);
    expect(toA.length).toBe([...recorded.values()].filter((d) => d.includes('a')).length);
    expect(toB.length).toBe([...recorded.values()].filter((d) => d.includes('b')).length);
  });

  it('shows both destinations’ deliveries in the detail', async () => {
    const both = [...recorded].filter(([, d]) => d.length === 2).map(([k]) => k);
    for (const key of both.slice(0, 4)) {
      const detail = await get(api, `/alerts/${encodeURIComponent(key)}`);
      const deliveries = detail.deliveries as Row['deliveries'];
      expect(destinationsOf({ deliveries }), key).toEqual(['a', 'b']);
      expect(deliveries.every((d) => d.status === 'sent')).toBe(true);
      expect((detail.audit as { what: string; target: string }[]).at(-1)).toMatchObject({
        what: 'recorded',
        target: expect.stringMatching(/^(a, b|b, a)$/),
      });
    }
  });
});

/** Resolves each caller once `parties` callers have come (or after 3 s, so a failure is not a hang). */
function barrier(parties: number): () => Promise<void> {
  let count = 0;
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return async () => {
    count += 1;
    if (count >= parties) open();
    await Promise.race([opened, new Promise((resolve) => setTimeout(resolve, 3_000))]);
  };
}

/**
 * A client that holds its first write after the records' conditional puts (the index's) until
 * every worker has come that far: both have their records and reach the index at the same moment.
 */
function heldClient(endpoint: string, arrive: () => Promise<void>): DynamoDBClient {
  const client = createDynamoClient({ endpoint });
  const send = client.send.bind(client) as (command: object) => Promise<unknown>;
  let putSeen = false;
  let held = false;
  (client as unknown as { send: typeof send }).send = async (command) => {
    const name = command.constructor.name;
    if (name === 'PutItemCommand') putSeen = true;
    else if (putSeen && !held && !/^(BatchGetItem|Query|GetItem)Command$/.test(name)) {
      held = true;
      await arrive();
    }
    return send(command);
  };
  return client;
}

describe('two workers record the same items at the same moment', () => {
  it('lists each once with both destinations, in the row, the filters and the detail', async () => {
    const table = await db.table();
    const arrive = barrier(2);
    const items = leaks(12, 'leak/paste');
    const worker = () => new DeliveryRecords(heldClient(db.endpoint, arrive), table, systemClock);
    await Promise.all([
      worker().recordPage(page(items, 'b', 'tenant', 'silenced'), { exclusive: false }),
      worker().recordPage(page(items, 'a', 'group:102'), { exclusive: false }),
    ]);
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    const rows = await allRows(api);
    expect(rows.map((r) => r.key).sort()).toEqual(items.map((i) => i.key).sort());
    for (const row of rows) {
      expect(destinationsOf(row), row.key).toEqual(['a', 'b']);
      expect(Object.fromEntries(row.deliveries.map((d) => [d.destination, d.status]))).toEqual({
        a: 'pending',
        b: 'silenced',
      });
    }
    // Whichever worker listed an item, the other's deliveries are found by the filters too.
    for (const query of ['destination=a', 'destination=b', 'state=pending', 'state=silenced'])
      expect(await allRows(api, query), query).toHaveLength(items.length);
    const detail = await get(api, `/alerts/${encodeURIComponent(items[7]?.key as string)}`);
    expect(destinationsOf(detail as unknown as Row)).toEqual(['a', 'b']);
  });
});

class Crash extends Error {}

/** A client that stops at the first request `fails` picks: that one and every later one fail. */
function crashingClient(
  endpoint: string,
  fails: (name: string, input: { Key?: { pk?: { S?: string } } }) => boolean,
): DynamoDBClient {
  const client = createDynamoClient({ endpoint });
  const send = client.send.bind(client) as (command: object) => Promise<unknown>;
  let crashed = false;
  (client as unknown as { send: typeof send }).send = async (command) => {
    crashed ||= fails(command.constructor.name, (command as { input: object }).input);
    if (crashed) throw new Crash(`stopped before ${command.constructor.name}`);
    return send(command);
  };
  return client;
}

describe('a stream that stops between its writes', () => {
  it('after its detail, before its list pack: the item is listed by nobody, never twice, its detail holds both', async () => {
    const table = await db.table();
    const items = leaks(5, 'leak/crash-a');
    // The first stream's index: its detail updates, then its list pack.
    const dying = new DeliveryRecords(
      crashingClient(db.endpoint, (name) => name === 'BatchWriteItemCommand'),
      table,
      systemClock,
    );
    await expect(dying.recordPage(page(items, 'b', 'tenant'), { exclusive: false })).rejects.toThrow(Crash);
    const other = new DeliveryRecords(db.client, table, systemClock);
    await other.recordPage(page(items, 'a', 'group:102'), { exclusive: false });
    // The first stream again, as its re-read page: its records exist, nothing is written.
    await other.recordPage(page(items, 'b', 'tenant'), { exclusive: false });
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    expect(await allRows(api)).toEqual([]);
    const detail = await get(api, `/alerts/${encodeURIComponent(items[2]?.key as string)}`);
    expect(destinationsOf(detail as unknown as Row)).toEqual(['a', 'b']);
  });

  it('after its records, before its detail: its re-read page adds its destination to the detail another stream wrote', async () => {
    const table = await db.table();
    const items = leaks(5, 'leak/crash-b');
    // Its detail updates come after its records: it stops at the first.
    const dying = new DeliveryRecords(
      crashingClient(
        db.endpoint,
        (name, input) => name === 'UpdateItemCommand' && input.Key?.pk?.S?.startsWith('alert#') === true,
      ),
      table,
      systemClock,
    );
    await expect(dying.recordPage(page(items, 'b', 'tenant'), { exclusive: false })).rejects.toThrow(Crash);
    const made: string[] = [];
    const records = new DeliveryRecords(db.client, table, systemClock, { onRequest: (op) => made.push(op) });
    await records.recordPage(page(items, 'a', 'group:102'), { exclusive: false });
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    for (const row of await allRows(api)) expect(destinationsOf(row)).toEqual(['a']);
    // The stopped stream again, on the page it did not finish: its records exist, its detail
    // updates are made now. Once more: nothing lacks, nothing is written.
    for (let round = 0; round < 2; round++) {
      made.length = 0;
      await records.recordPage(page(items, 'b', 'tenant'), { exclusive: false });
      expect(made.filter((op) => op === 'UpdateItem')).toHaveLength(round === 0 ? items.length : 0);
    }
    const rows = await allRows(api);
    expect(rows.map((r) => r.key)).toEqual(items.map((i) => i.key));
    for (const row of rows) expect(destinationsOf(row)).toEqual(['a', 'b']);
    const detail = await get(api, `/alerts/${encodeURIComponent(items[1]?.key as string)}`);
    expect(destinationsOf(detail as unknown as Row)).toEqual(['a', 'b']);
  });
});

describe('an item that comes back after its records and detail expired', () => {
  it('is listed again once, by the first stream to record it again, with what was recorded since', async () => {
    const table = await db.table();
    const items = leaks(3, 'leak/back');
    // Recorded 91 days ago (silenced: a final record, which expires), so its detail expired too.
    const past = new DeliveryRecords(db.client, table, fakeClock(Date.now() - 91 * 86_400_000));
    await past.recordPage(page(items, 'b', 'tenant', 'silenced'), { exclusive: false });
    const made: string[] = [];
    const records = new DeliveryRecords(db.client, table, systemClock, { onRequest: (op) => made.push(op) });
    await records.recordPage(page(items, 'a', 'group:102'), { exclusive: false });
    // Each expired detail is found so (its update refused) and replaced with a conditional put.
    expect(made.filter((op) => op === 'UpdateItem')).toHaveLength(items.length);
    expect(made.filter((op) => op === 'PutItem')).toHaveLength(2 * items.length);
    await records.recordPage(page(items, 'b', 'tenant'), { exclusive: false });
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    const rows = await allRows(api);
    expect(rows.map((r) => r.key)).toEqual(items.map((i) => i.key));
    for (const row of rows)
      expect(Object.fromEntries(row.deliveries.map((d) => [d.destination, d.status]))).toEqual({
        a: 'pending',
        b: 'pending',
      });
  });
});

describe('paging while another stream records', () => {
  it('never skips or repeats an item, each row gaining the other stream’s destination in place, within its reads', async () => {
    const table = await db.table();
    const items = leaks(56, 'leak/paging');
    const feed = new DeliveryRecords(db.client, table, systemClock);
    await feed.recordPage(page(items, 'b', 'tenant'), { exclusive: false });
    const counting = countingClient(db.endpoint);
    const api = buildApi(emu, { table: { client: counting.client, name: table } });
    const first = await get(api, '/alerts');
    const reads = counting.requests.map((r) => r.action);
    // One Query of the packs; one BatchGet of the details the page can take, one of their records.
    expect(reads.filter((a) => a === 'Query').length).toBeLessThanOrEqual(MAX_QUERIES);
    expect(reads.filter((a) => a === 'BatchGetItem')).toHaveLength(2);
    const firstRows = first.items as Row[];
    expect(firstRows).toHaveLength(PAGE_ITEMS);
    // The group records the same items to `a`, and newer ones of its own.
    const group = new DeliveryRecords(db.client, table, systemClock);
    const newer = leaks(4, 'leak/paging-newer');
    await group.recordPage(page([...items, ...newer], 'a', 'group:102'), { exclusive: false });
    const rest = await allRowsFrom(api, first.cursor as string);
    const seen = [...firstRows, ...rest].map((r) => r.key);
    expect(seen).toEqual(items.map((i) => i.key));
    for (const row of rest) expect(destinationsOf(row), row.key).toEqual(['a', 'b']);
    const again = (await allRows(api)).map((r) => r.key);
    expect(again).toEqual([...newer, ...items].map((i) => i.key));
    counting.client.destroy();
  });
});

async function allRowsFrom(api: ApiUnderTest, cursor: string | undefined): Promise<Row[]> {
  const rows: Row[] = [];
  for (let pages = 0; cursor && pages < 20; pages++) {
    const body = await get(api, `/alerts?cursor=${cursor}`);
    rows.push(...(body.items as Row[]));
    cursor = body.cursor as string | undefined;
  }
  return rows;
}
