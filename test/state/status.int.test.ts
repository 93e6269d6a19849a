/**
 * The status read (lib/state/status.ts) on real dynalite: an empty table, and a busy one, with the
 * exact number of DynamoDB requests it costs (counted by a client of its own), none a Scan, and a
 * pending count that stops at one page and says so.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { SilenceStore } from '../../lib/state/silences.ts';
import { COUNT_PAGE, StatusReader } from '../../lib/state/status.ts';
import { BUSY_DEAD, BUSY_PENDING, BUSY_QUOTA, seedBusyTable } from '../helpers/busy.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

function reader(table: string) {
  const { client, requests } = countingClient(db.endpoint);
  const io = { client, tableName: table, clock: systemClock };
  return { status: new StatusReader(io, new SilenceStore(io)), requests, close: () => client.destroy() };
}

describe('status', () => {
  it('on an empty table: nothing known, in two requests', async () => {
    const r = reader(await db.table());
    expect(await r.status.read()).toEqual({ streams: [], destinations: [], silences: 0, quota: null });
    // The catalog with the quota reading, and the silences.
    expect(r.requests.map((q) => q.action).sort()).toEqual(['BatchGetItem', 'Query']);
    r.close();
  });

  it('on a busy table: every stream, destination, silence and the quota, in 2 + 1 + 2D requests, no Scan', async () => {
    const world = await seedBusyTable(db);
    const r = reader(world.table);
    const status = await r.status.read();
    expect(status.streams).toEqual([
      {
        stream: 'tenant',
        tenant: null,
        lastPolledAt: expect.any(String),
        lagSeconds: 42.5,
        lastResult: 'done',
      },
      {
        stream: 'group:12',
        tenant: null,
        lastPolledAt: expect.any(String),
        lagSeconds: null,
        lastResult: 'failed',
      },
      { stream: 'group:13', tenant: null, lastPolledAt: null, lagSeconds: null, lastResult: null },
      {
        stream: 'credentials:acme.test',
        tenant: null,
        lastPolledAt: null,
        lagSeconds: null,
        lastResult: null,
      },
    ]);
    const [soc, siem, pager] = status.destinations;
    // One page of the count: at most COUNT_PAGE items (fewer when the items fill 1 MB first).
    expect(soc?.pendingMore).toBe(true);
    expect(soc?.pending).toBeGreaterThan(0);
    expect(soc?.pending).toBeLessThanOrEqual(Math.min(COUNT_PAGE, BUSY_PENDING - 1));
    expect(soc).toMatchObject({ destination: 'soc', dead: 0, refusing: false });
    expect(siem).toEqual({ destination: 'siem', pending: 0, dead: BUSY_DEAD, refusing: false });
    expect(pager).toEqual({ destination: 'pager', pending: 0, dead: 0, refusing: true });
    // Two run-time silences active (a third was ended by hand), and the config's.
    expect(status.silences).toBe(3);
    expect(status.quota).toEqual(BUSY_QUOTA);

    const destinations = 3;
    expect(r.requests).toHaveLength(2 + 1 + 2 * destinations);
    expect(r.requests.some((q) => q.action === 'Scan')).toBe(false);
    const counts = r.requests.filter((q) => q.index === 'gsi1');
    expect(counts.map((q) => q.pk).sort()).toEqual(
      ['dead#pager', 'dead#siem', 'dead#soc', 'pending#pager', 'pending#siem', 'pending#soc'].sort(),
    );
    r.close();
  }, 60_000);
});
