/**
 * Runs whose clocks disagree, on one real dynalite table (docs/architecture.md#leases, on clocks): the
 * governor, stream and destination leases, and `lastPolledAt`. Each run has a DynamoDB client of
 * its own, as separate processes do; dynalite's `Date` header is the true time here, and a run's
 * clock is the true time plus its skew.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { syncedClock } from '../../lib/state/clock-sync.ts';
import { DestinationStateStore } from '../../lib/state/destinations.ts';
import { DynamoRateGovernor, type UpstreamRates } from '../../lib/state/governor.ts';
import { LEASE_TTL_MS } from '../../lib/state/lease.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import { StreamStore } from '../../lib/state/streams.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();
const REAL_TIERS: UpstreamRates = { requestsPerSecond: 4, searchRequestsPerSecond: 1 };

function skewed(ms: number): Clock {
  return { now: () => Date.now() + ms, sleep: systemClock.sleep };
}

/** A run: its own client, its clock `skewMs` off. */
function run(skewMs: number) {
  const client = createDynamoClient({ endpoint: db.endpoint });
  return { client, clock: skewed(skewMs), close: () => client.destroy() };
}

/**
 * One host ten minutes fast for the whole file, as a long-lived process is: it sets its clock by
 * the table's once (a second or so of reads), and each test's run on it reuses that.
 */
let fastHost: ReturnType<typeof run> | undefined;
const fast = () => (fastHost ??= run(600_000));
afterAll(() => fastHost?.close());

async function governorItem(table: string): Promise<Record<string, unknown>> {
  const out = await db.client.send(
    new GetItemCommand({
      TableName: table,
      Key: marshall({ pk: 'governor', sk: 'rate' }),
      ConsistentRead: true,
    }),
  );
  return out.Item ? unmarshall(out.Item) : {};
}

/** The most of `times` (ms) in any sliding window of `windowMs`. */
function mostInWindow(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[last] as number) - (sorted[first] as number) >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('runs whose clocks disagree', () => {
  it('a run ten minutes fast books on the true timeline: the run on time gets its turns, and the rate holds in real time', async () => {
    const table = await db.table();
    const onTime = run(0);
    const rates = { requestsPerSecond: 10, searchRequestsPerSecond: 2 };
    const g = {
      fast: new DynamoRateGovernor(fast().client, table, fast().clock, { rates }),
      onTime: new DynamoRateGovernor(onTime.client, table, onTime.clock, { rates }),
    };
    const sent: number[] = [];
    try {
      // The fast run first: before, it restarted the lane at its own now, ten minutes ahead.
      await g.fast.take('basic', { deadline: fast().clock.now() + 10_000 });
      sent.push(Date.now());
      expect(Math.abs(((await governorItem(table)).basicAt as number) - Date.now())).toBeLessThan(1000);
      await Promise.all(
        (['fast', 'onTime'] as const).map(async (name) => {
          const clock = name === 'fast' ? fast().clock : onTime.clock;
          for (let i = 0; i < 6; i++) {
            await g[name].take('basic', { deadline: clock.now() + 5_000 });
            sent.push(Date.now());
          }
        }),
      );
    } finally {
      onTime.close();
    }
    expect(sent).toHaveLength(13);
    // 10 a second, less the search lane's 2: 8 in any second.
    expect(mostInWindow(sent)).toBeLessThanOrEqual(8);
    expect(g.onTime.stats.reclaimed).toBe(0);
  });

  it('a lane booked ten minutes ahead (by a run that did not correct its clock) is taken back', async () => {
    const table = await db.table();
    await db.client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({
          pk: 'governor',
          sk: 'rate',
          basicAt: Date.now() + 600_000,
          slowUntil: Date.now() + 600_000,
        }),
      }),
    );
    const onTime = run(0);
    const g = new DynamoRateGovernor(onTime.client, table, onTime.clock, { rates: REAL_TIERS });
    try {
      const asked = Date.now();
      await g.take('basic', { deadline: Date.now() + 2_000 });
      expect(Date.now() - asked).toBeLessThan(1000);
      expect(g.stats.reclaimed).toBe(1);
      // The absurd slowdown is not obeyed either: the next slot is one normal interval on (3/s at 90%).
      await g.take('basic', { deadline: Date.now() + 2_000 });
      const item = await governorItem(table);
      expect(item.basicAt as number).toBeLessThan(Date.now() + 1000);
    } finally {
      onTime.close();
    }
  });

  it('clocks two seconds apart: three runs at the real tiers keep 4 a second and 1 search a second in real time', async () => {
    const table = await db.table();
    const runs = [run(2_000), run(-2_000), run(0)];
    const sent: { tier: string; at: number }[] = [];
    try {
      await Promise.all(
        runs.map(async ({ client, clock }) => {
          const g = new DynamoRateGovernor(client, table, clock, { rates: REAL_TIERS });
          await Promise.all(
            (['basic', 'search'] as const).map(async (tier) => {
              for (let i = 0; i < (tier === 'basic' ? 3 : 1); i++) {
                await g.take(tier, { deadline: clock.now() + 15_000 });
                sent.push({ tier, at: Date.now() });
              }
            }),
          );
        }),
      );
    } finally {
      for (const r of runs) r.close();
    }
    expect(sent).toHaveLength(12);
    expect(mostInWindow(sent.map((s) => s.at))).toBeLessThanOrEqual(4);
    expect(mostInWindow(sent.filter((s) => s.tier === 'search').map((s) => s.at))).toBeLessThanOrEqual(1);
  });

  it('a slowdown decided on a fast clock ends a minute from the true now, not eleven', async () => {
    const table = await db.table();
    const g = new DynamoRateGovernor(fast().client, table, fast().clock, { rates: REAL_TIERS });
    await g.take('basic', {});
    await g.slowDown();
    const { slowUntil } = await governorItem(table);
    expect(Math.abs((slowUntil as number) - (Date.now() + 60_000))).toBeLessThan(1000);
  });

  it('a stream lease taken by a run ten minutes fast does not hold the stream for ten minutes', async () => {
    const table = await db.table();
    const onTime = run(0);
    // A short lease, so the test sees it lapse; the runs correct their clocks as runtime.ts does.
    const store = (r: ReturnType<typeof run>) =>
      new StreamStore(r.client, table, syncedClock(r.clock, r.client), 500);
    try {
      const held = await store(fast()).acquire('tenant', 'fast-run');
      expect(held).toBeDefined();
      expect(await store(onTime).acquire('tenant', 'on-time')).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await store(onTime).acquire('tenant', 'on-time')).toBeDefined();
    } finally {
      onTime.close();
    }
  });

  it('a lease or a lastPolledAt written ten minutes ahead (a run that did not correct) does not stop a run on time', async () => {
    const table = await db.table();
    const ahead = Date.now() + 600_000;
    await db.client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({
          pk: 'stream#group:12',
          sk: 'state',
          leaseOwner: 'old',
          leaseExpires: ahead,
          fence: 1,
        }),
      }),
    );
    await db.client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({ pk: 'stream#tenant', sk: 'state', lastPolledAt: new Date(ahead).toISOString() }),
      }),
    );
    await db.client.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({ pk: 'dest#soc', sk: 'state', leaseOwner: 'old', leaseExpires: ahead, fence: 3 }),
      }),
    );
    const onTime = run(0);
    const streams = new StreamStore(onTime.client, table, onTime.clock);
    const destinations = new DestinationStateStore(onTime.client, table, onTime.clock);
    try {
      const since = new Date().toISOString();
      expect((await streams.acquire('group:12', 'on-time', since))?.fence).toBe(2);
      expect(await streams.acquire('tenant', 'on-time', since)).toBeDefined();
      expect((await destinations.acquire('soc', 'on-time'))?.fence).toBe(4);
      // A lease held on time is still respected.
      expect(await streams.acquire('group:12', 'another', since)).toBeUndefined();
      expect(LEASE_TTL_MS).toBe(60_000);
    } finally {
      onTime.close();
    }
  });
});
