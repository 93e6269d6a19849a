/**
 * While credential polling is paused for the quota, the whole deployment spends at most one probe
 * search an hour, however many workers run (docs/architecture.md): the probe is claimed in the
 * table. Several gates (each a worker of its own) on one real dynalite table, with a clock the test
 * moves.
 */
import { describe, expect, it } from 'vitest';
import { QuotaGate } from '../../lib/poll/quota.ts';
import { QuotaStore } from '../../lib/state/quota.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();
const HOUR = 3_600_000;
const RESERVE = 100;

describe('the quota probe while paused', () => {
  it('three workers at once: one probes, two stay paused; an hour later one again', async () => {
    const table = await db.table();
    const clock = fakeClock(Date.parse('2026-11-24T12:00:00Z'));
    const gates = Array.from({ length: 3 }, () => {
      const client = createDynamoClient({ endpoint: db.endpoint });
      return new QuotaGate(new QuotaStore(client, table), clock);
    });
    // Paused two hours ago at 3 searches left.
    await new QuotaStore(db.client, table).write({
      remaining: 3,
      at: new Date(clock.now() - 2 * HOUR).toISOString(),
    });
    const first = await Promise.all(gates.map((g) => g.check(RESERVE)));
    expect(first.filter((s) => s === 'probe')).toHaveLength(1);
    expect(first.filter((s) => s === 'paused')).toHaveLength(2);
    // The probe found the quota still spent but wrote nothing (a failed search, say): the reading
    // stays old, and still no second probe within the hour.
    clock.advance(HOUR / 2);
    expect((await Promise.all(gates.map((g) => g.check(RESERVE)))).filter((s) => s === 'probe')).toHaveLength(
      0,
    );
    clock.advance(HOUR / 2 + 1000);
    expect((await Promise.all(gates.map((g) => g.check(RESERVE)))).filter((s) => s === 'probe')).toHaveLength(
      1,
    );
  });

  it('a probe claim dated ten minutes ahead (a wrong clock wrote it) does not hold the probe back', async () => {
    const table = await db.table();
    const clock = fakeClock(Date.parse('2026-11-24T12:00:00Z'));
    const store = new QuotaStore(db.client, table);
    await store.write({ remaining: 3, at: new Date(clock.now() - 2 * HOUR).toISOString() });
    const fast = new QuotaStore(db.client, table);
    expect(await fast.claimProbe(clock.now() + 10 * 60_000, HOUR)).toBe(true);
    expect(await new QuotaGate(store, clock).check(RESERVE)).toBe('probe');
  });
});
