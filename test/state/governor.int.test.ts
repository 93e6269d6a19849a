/**
 * The shared rate governor (lib/state/governor.ts) on real dynalite, with several governors (each
 * its own DynamoDB client, as separate processes have) on one table: slots an interval apart
 * whoever books them, a turn that cannot come before its deadline booking nothing, the rates a
 * poller stores reaching a run without its own, and the slowdown after a 429.
 */
import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { ClockSync, SyncedClock } from '../../lib/state/clock-sync.ts';
import { DynamoRateGovernor, PACE_SHARE, SLOW_FACTOR, type UpstreamRates } from '../../lib/state/governor.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { UpstreamError } from '../../lib/upstream/errors.ts';
import { useDynalite } from '../helpers/dynamo.ts';

const db = useDynalite();

/**
 * A clock on which only waits move time, each at once: turns come exactly at their slots, and no
 * lane goes idle because a busy machine was slow between two turns.
 */
function virtualClock(): Clock {
  let now = Date.now();
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      now += Math.max(0, ms);
    },
  };
}

/**
 * `clock` as a governor on real time would have it: its client's answers dated by `clock` (so the
 * run still reads once before its first booking, having seen no answer yet), never off.
 */
function syncedOn(clock: Clock, client: DynamoDBClient): SyncedClock {
  const sync = new ClockSync(clock.now);
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      sync.observe(new Date(clock.now()).toUTCString(), clock.now(), clock.now());
      return out;
    },
    { step: 'deserialize', name: 'dateOnTheTestClock' },
  );
  return new SyncedClock(clock, sync);
}

/** A governor with a DynamoDB client of its own; on `clock` when given, else real time. */
function governor(table: string, rates?: UpstreamRates, searching = true, clock?: Clock) {
  const client = createDynamoClient({ endpoint: db.endpoint });
  const time = clock ? syncedOn(clock, client) : systemClock;
  const g = new DynamoRateGovernor(client, table, time, {
    ...(rates ? { rates } : {}),
    searching,
  });
  return { g, close: () => client.destroy() };
}

async function lanes(table: string): Promise<Record<string, unknown>> {
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

describe('the shared rate governor', () => {
  it('three governors taking turns at once: never more than the rate in any sliding second, one write a turn on a busy lane', async () => {
    const table = await db.table();
    const rates = { requestsPerSecond: 20, searchRequestsPerSecond: 5 };
    const runs = [governor(table, rates), governor(table, rates), governor(table, rates)];
    const sent: { tier: string; at: number }[] = [];
    try {
      await Promise.all(
        runs.flatMap(({ g }) =>
          (['basic', 'search'] as const).map(async (tier) => {
            for (let i = 0; i < (tier === 'basic' ? 12 : 3); i++) {
              await g.take(tier, {});
              sent.push({ tier, at: Date.now() });
            }
          }),
        ),
      );
    } finally {
      for (const r of runs) r.close();
    }
    const at = (tier?: string) => sent.filter((s) => !tier || s.tier === tier).map((s) => s.at);
    expect(sent).toHaveLength(45);
    expect(mostInWindow(at())).toBeLessThanOrEqual(20);
    expect(mostInWindow(at('search'))).toBeLessThanOrEqual(5);
    const stats = runs.map((r) => r.g.stats);
    const sum = (key: 'turns' | 'writes' | 'reads' | 'failedWrites') => stats.reduce((n, s) => n + s[key], 0);
    expect(sum('turns')).toBe(45);
    // One read a run, before its first booking: its client had seen no answer to set its clock by.
    expect(sum('reads')).toBe(3);
    // A busy lane costs one write a turn; only a lane's (re)start can lose a race, once per run.
    expect(sum('writes') - sum('failedWrites')).toBe(45 + stats.reduce((n, s) => n + s.late, 0));
  });

  it('one write a turn, on an idle lane as on a busy one', async () => {
    const table = await db.table();
    // On a clock only waits move: a write slower than LATE_MS (a busy machine) would make a turn
    // late and book again, which is not what this counts.
    const clock = virtualClock();
    const run = governor(table, { requestsPerSecond: 20, searchRequestsPerSecond: 5 }, true, clock);
    try {
      // Idle: each turn a while after the last (two intervals: the lane restarts at now).
      for (let i = 0; i < 4; i++) {
        await run.g.take('basic', {});
        await clock.sleep(150);
      }
      expect(run.g.stats).toMatchObject({ turns: 4, writes: 4, failedWrites: 0, reads: 1 });
      // Busy: turns back to back (each the lane's next slot).
      for (let i = 0; i < 6; i++) await run.g.take('basic', {});
      expect(run.g.stats).toMatchObject({ turns: 10, writes: 10 + run.g.stats.late, failedWrites: 0 });
    } finally {
      run.close();
    }
  });

  it('at a high rate a run books a block of slots with one write, and runs together still keep to the rate', async () => {
    const table = await db.table();
    // 400 a second paced at 90%: slots 2.8 ms apart, blocks of 7 (BLOCK_MS, 20 ms, of them).
    const rates = { requestsPerSecond: 400, searchRequestsPerSecond: 5 };
    const runs = [
      governor(table, rates, false),
      governor(table, rates, false),
      governor(table, rates, false),
    ];
    const sent: number[] = [];
    try {
      await Promise.all(
        runs.map(async ({ g }) => {
          for (let i = 0; i < 250; i++) {
            await g.take('basic', {});
            sent.push(Date.now());
          }
        }),
      );
    } finally {
      for (const r of runs) r.close();
    }
    // 750 requests: two seconds of the paced rate (360 a second), so the window check can fail.
    expect(sent).toHaveLength(750);
    expect(mostInWindow(sent)).toBeLessThanOrEqual(400);
    const writes = runs.reduce((n, r) => n + r.g.stats.writes - r.g.stats.failedWrites, 0);
    // Ten blocks a run if none went by unused; far below a write a request either way.
    expect(writes).toBeGreaterThanOrEqual(30);
    expect(writes).toBeLessThan(750 / 4);
  });

  it('a turn that cannot come before its deadline is refused and books nothing, so it pushes no later turn out', async () => {
    const table = await db.table();
    const rates = { requestsPerSecond: 10, searchRequestsPerSecond: 2 };
    const busy = governor(table, rates);
    const short = governor(table, rates);
    try {
      // Fill the search lane four slots ahead (2/s at 90%: 556 ms apart), and wait until the
      // lane shows every booking: the first turn alone, so its slot is known whenever a busy host
      // lets it book, then four more, each an interval after the one before.
      const interval = 1000 / (2 * PACE_SHARE);
      const searchAt = async () => ((await lanes(table)).searchAt as number | undefined) ?? 0;
      const until = async (done: (at: number) => boolean) => {
        let at = await searchAt();
        for (let i = 0; i < 500 && !done(at); i++) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          at = await searchAt();
        }
        return at;
      };
      const filling = [busy.g.take('search', {})];
      const first = await until((at) => at > 0);
      filling.push(...Array.from({ length: 4 }, () => busy.g.take('search', {})));
      const before = await until((at) => at >= first + 4 * interval - 1);
      expect(before).toBeCloseTo(first + 4 * interval, 0);
      for (let i = 0; i < 10; i++) {
        const refused = await short.g.take('search', { deadline: Date.now() + 200 }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(UpstreamError);
        expect((refused as UpstreamError).code).toBe('rate_limited');
        expect((refused as UpstreamError).retryAfterMs).toBeGreaterThan(200);
      }
      expect((await lanes(table)).searchAt).toBe(before);
      // The next turn is the one right after the lane's last booked slot, not ten slots later.
      await short.g.take('search', {});
      expect((await lanes(table)).searchAt).toBeCloseTo(before + interval, 2);
      await Promise.all(filling);
    } finally {
      busy.close();
      short.close();
    }
  });

  it('the API waits behind at most one slot per running poller, however much the pollers have left to fetch', async () => {
    const table = await db.table();
    const rates = { requestsPerSecond: 20, searchRequestsPerSecond: 5 };
    const pollers = [
      governor(table, rates, false),
      governor(table, rates, false),
      governor(table, rates, false),
    ];
    const api = governor(table);
    const turns: number[] = [];
    try {
      // Each poller has a backlog of 20 requests, 60 in all: three seconds of the shared rate.
      const backlog = pollers.map(async ({ g }) => {
        for (let i = 0; i < 20; i++) {
          await g.take('basic', {});
          turns.push(Date.now());
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const asked = Date.now();
      await api.g.take('basic', {});
      const answered = Date.now();
      await Promise.all(backlog);
      // Counted in turns, not time (a slow machine slows everyone): between asking and its turn,
      // the pollers' slots already booked (one each) and those booked while its own read and
      // write were on their way; never the backlog, of which more than half was still to come.
      const before = turns.filter((t) => t > asked && t <= answered).length;
      const after = turns.filter((t) => t > answered).length;
      expect(before).toBeLessThanOrEqual(6);
      expect(after).toBeGreaterThan(30);
    } finally {
      for (const r of [...pollers, api]) r.close();
    }
  });

  it('a run without rates of its own (the API) uses the ones a poller stored, after one read', async () => {
    const table = await db.table();
    const poller = governor(table, { requestsPerSecond: 10, searchRequestsPerSecond: 2 });
    const api = governor(table);
    try {
      await poller.g.take('basic', {});
      const first = (await lanes(table)).basicAt as number;
      await api.g.take('basic', {});
      await api.g.take('basic', {});
      expect(api.g.rates()).toEqual({ requestsPerSecond: 10, searchRequestsPerSecond: 2 });
      expect(api.g.stats.reads).toBe(1);
      // Two slots after the poller's, each 1000 / ((10 - 2) * 0.9) ms on: the poller's rates, not
      // the defaults (4 and 1: 370 ms).
      expect((await lanes(table)).basicAt as number).toBeCloseTo(first + 2 * (1000 / (8 * PACE_SHARE)), 2);
      expect(api.g.stats.writes).toBe(2);
    } finally {
      poller.close();
      api.close();
    }
  });

  it('after a 429 every run paces at half the rate: the slowdown is shared through the table', async () => {
    const table = await db.table();
    const rates = { requestsPerSecond: 10, searchRequestsPerSecond: 2 };
    const clock = virtualClock();
    const a = governor(table, rates, true, clock);
    const b = governor(table, rates, true, clock);
    try {
      await b.g.take('basic', {});
      await a.g.take('basic', {});
      await a.g.take('basic', {});
      const start = (await lanes(table)).basicAt as number;
      await a.g.slowDown();
      // b has not seen the slowdown yet: its booking returns the item, slowdown included. A turn
      // that came too late for its slot (a busy machine) books the next one: one slot more each.
      let late = b.g.stats.late;
      await b.g.take('basic', {});
      const normal = 1000 / (8 * PACE_SHARE);
      const afterB = (await lanes(table)).basicAt as number;
      expect(afterB - start).toBeCloseTo(normal * (1 + b.g.stats.late - late), 2);
      late = b.g.stats.late;
      await b.g.take('basic', {});
      const slowed = (await lanes(table)).basicAt as number;
      expect(slowed - afterB).toBeCloseTo(normal * SLOW_FACTOR * (1 + b.g.stats.late - late), 2);
    } finally {
      a.close();
      b.close();
    }
  });
});
