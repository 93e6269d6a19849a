/**
 * Each alert once (section 13), attacked: a shared stream dies after each of its writes (a DynamoDB
 * client whose Nth write lands and then fails with every later request: helpers/dying-client.ts);
 * then the other stream records the same items and the stopped one re-reads its page, in either
 * order. Every item is listed at most once, and a row or a detail shows both streams'
 * destinations. (Died after its details and before its list pack, an item is listed by nobody:
 * shared-index.ts says so.) Real dynalite, the API app.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { DeliveryRecords } from '../../lib/state/records/index.ts';
import { Crash, dyingClient } from '../helpers/dying-client.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { allRows, detail, leaks, page, states } from './alert-rows.ts';
import { buildApi } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();

/** One stream's page of 4 items, every one to `destination`. */
const fourOf = (prefix: string, destination: string, source: string) =>
  page(leaks(4, prefix), destination, source);

describe('a shared stream that dies after each of its writes', () => {
  // 4 records, 4 detail updates, 1 list pack: 9 writes.
  for (const after of [1, 2, 4, 5, 9])
    for (const order of ['other first', 'itself first'] as const)
      it(`after write ${after}, then ${order === 'other first' ? 'the other stream, then its re-read' : 'its re-read, then the other stream'}: each item at most once, with both`, async () => {
        const table = await db.table();
        const prefix = `leak/${after}/${order.split(' ')[0]}`;
        const feed = fourOf(prefix, 'b', 'tenant');
        const group = fourOf(prefix, 'a', 'group:102');
        await expect(
          new DeliveryRecords(dyingClient(db.client, after).client, table, systemClock).recordPage(feed, {
            exclusive: false,
          }),
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
