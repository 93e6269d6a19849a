/**
 * Each alert once (section 13), attacked through the real poll cycle: a tenant feed and two
 * identifier groups (two of them to one destination, one silenced) and two credential streams of
 * overlapping domains record the same items; and items an exclusive stream listed, recorded again
 * by a shared one (a group added to a config that had the feed alone). Every item is listed once,
 * with every destination's delivery in its row, under each destination and state filter, and in
 * its detail. Real dynalite, the emulator, the API app.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { makeWorld } from '../helpers/world.ts';
import { allRows, detail, states } from './alert-rows.ts';
import { buildApi } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();

describe('through the poll cycle', () => {
  it('a feed and two groups, two groups to one destination, one group silenced; overlapping credential domains', async () => {
    const logins = Array.from({ length: 8 }, (_, i) => `user${i}@${i % 2 ? 'mail.' : ''}acme.test`);
    emu.running.emulator.dataset.appendCredentials(logins.length, {
      logins,
      at: new Date(Date.now() - 3_600_000),
    });
    const world = await makeWorld(emu, db, {
      sources: {
        tenantEvents: { lookback: 'P30D' },
        identifierGroups: [
          { id: 101, lookback: 'P30D' },
          { id: 102, lookback: 'P30D' },
        ],
        credentials: { domains: ['acme.test', 'mail.acme.test'], lookback: 'P1D' },
      },
      destinations: { a: { type: 'console' }, b: { type: 'console' }, c: { type: 'console' } },
      routes: [
        { name: 'feed', match: { sources: ['tenant'] }, to: ['b', 'c'] },
        { name: 'g1', match: { sources: ['group:101'] }, to: ['a', 'c'] },
        { name: 'g2', match: { sources: ['group:102'] }, to: ['a'] },
        { name: 'top', match: { sources: ['credentials:acme.test'] }, to: ['a'] },
        { name: 'sub', match: { sources: ['credentials:mail.acme.test'] }, to: ['b', 'a'] },
      ],
      silences: [{ match: { sources: ['group:102'] }, until: '2099-01-01T00:00:00Z', reason: 'quiet' }],
    });
    await world.cycle('events');
    await world.cycle('credentials');
    await world.deliver();
    const want = new Map<string, Record<string, string>>();
    for (const r of await world.runtime.deliver.deliveries.list({ limit: 10_000 }))
      want.set(r.key, { ...want.get(r.key), [r.destination]: r.status });
    // Items that more than one stream recorded, to more than one destination.
    expect([...want.values()].filter((d) => Object.keys(d).length === 3).length).toBeGreaterThan(3);
    expect([...want.values()].some((d) => Object.values(d).includes('silenced'))).toBe(true);
    const api = buildApi(emu, { table: { client: db.client, name: world.table } });
    const rows = await allRows(api);
    expect(rows.length - new Set(rows.map((r) => r.key)).size, 'rows listed twice').toBe(0);
    expect(new Map(rows.map((r) => [r.key, states(r)]))).toEqual(want);
    for (const [d, s] of [
      ['a', 'sent'],
      ['b', 'silenced'],
      ['c', 'sent'],
    ] as const) {
      const keys = (await allRows(api, `destination=${d}`)).map((r) => r.key).sort();
      expect(keys, d).toEqual(
        [...want]
          .filter(([, x]) => d in x)
          .map(([k]) => k)
          .sort(),
      );
      const inState = (await allRows(api, `state=${s}`)).map((r) => r.key).sort();
      expect(inState, s).toEqual(
        [...want]
          .filter(([, x]) => Object.values(x).includes(s))
          .map(([k]) => k)
          .sort(),
      );
    }
    for (const key of [...want.keys()].slice(0, 12))
      expect(states((await detail(api, key)).body), key).toEqual(want.get(key));
  });
});

describe('items an exclusive stream listed, then a shared stream records', () => {
  it('the row, the filters and the detail gain the shared stream’s destination, once', async () => {
    const table = await db.table();
    const at = Date.now();
    const page = (destination: string, source: string, status: NewDelivery['status']): NewDelivery[] =>
      Array.from({ length: 3 }, (_, i) => ({
        destination,
        kind: 'event',
        key: `adopt/${i}`,
        source,
        routes: [source],
        status,
        ...(status === 'silenced' ? { note: 'silence s-1' } : {}),
        item: {
          metadata: {
            uid: `adopt/${i}`,
            type: 'leak',
            severity: 'high',
            matched_at: new Date(at - i).toISOString(),
          },
        },
      }));
    const made: string[] = [];
    const records = new DeliveryRecords(db.client, table, systemClock, { onRequest: (op) => made.push(op) });
    // The feed alone: exclusive. Then a group is added, and both are shared.
    await records.recordPage(page('b', 'tenant', 'silenced'), { exclusive: true });
    made.length = 0;
    await records.recordPage(page('a', 'group:102', 'pending'), { exclusive: false });
    const reads = made.filter((op) => op === 'GetItem').length;
    const puts = made.filter((op) => op === 'PutItem').length;
    await records.recordPage(page('c', 'group:101', 'pending'), { exclusive: false });
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    const want = { a: 'pending', b: 'silenced', c: 'pending' };
    const rows = await allRows(api);
    expect(rows.map((r) => r.key)).toEqual(['adopt/0', 'adopt/1', 'adopt/2']);
    for (const row of rows) expect(states(row), row.key).toEqual(want);
    for (const query of ['destination=a', 'destination=c', 'state=pending', 'state=silenced'])
      expect(
        (await allRows(api, query)).map((r) => r.key),
        query,
      ).toEqual(['adopt/0', 'adopt/1', 'adopt/2']);
    expect(states((await detail(api, 'adopt/1')).body)).toEqual(want);
    // The feed's list pack was read and put back once for the page's three items (beside their
    // three records' conditional puts).
    expect([reads, puts]).toEqual([1, 3 + 1]);
  });
});
