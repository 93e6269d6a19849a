/**
 * The heart of the product: every item reaches each destination it is routed to once, through
 * repeated cycles, crashes at every step boundary, overlapping runs and lease takeovers. Real
 * emulator, real dynalite, real HTTP receivers.
 */
import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import { systemClock } from '../../lib/clock.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import type { DeliveryRecord } from '../../lib/state/records/index.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom, makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 35, credentials: 120 });
const db = useDynalite();
let hookA: Receiver;
let hookB: Receiver;

beforeAll(async () => {
  hookA = await startReceiver();
  hookB = await startReceiver();
});
afterAll(async () => {
  await hookA.close();
  await hookB.close();
});
beforeEach(() => {
  hookA.requests.length = 0;
  hookB.requests.length = 0;
  emu.running.emulator.control.clearFaults();
  emu.running.emulator.control.latencyMs = 0;
  emu.running.emulator.control.endOfFeed = 'cursor';
});

const dataset = () => emu.running.emulator.dataset;

function baseConfig(extra: Record<string, unknown> = {}) {
  return {
    sources: {
      tenantEvents: { lookback: 'P7D' },
      credentials: { domains: ['acme.test', 'example.com'], lookback: 'P60D', pageSize: 20 },
    },
    destinations: { a: { type: 'webhook', url: hookA.url }, b: { type: 'webhook', url: hookB.url } },
    routes: [{ name: 'everything', match: {}, to: ['a', 'b'] }],
    ...extra,
  };
}

/** Keys of every item a receiver got, one entry per time it got it. */
function receivedKeys(receiver: Receiver): string[] {
  return receiver.requests.flatMap((r) => {
    const body = r.json() as { kind: string; items: { id?: number; metadata?: { uid: string } }[] };
    return body.items.map((i) =>
      body.kind === 'events' ? `event:${i.metadata?.uid}` : `credential:${i.id}`,
    );
  });
}

function expectedKeys(): string[] {
  const events = dataset()
    .tenant('acme')
    .events.map((e) => `event:${e.item.metadata.uid}`);
  const creds = dataset()
    .credentials.filter((c) => /(^|\.)acme\.test$|(^|\.)example\.com$/.test(c.domain))
    .map((c) => `credential:${c.id}`);
  return [...events, ...creds].sort();
}

function duplicates(list: string[]): string[] {
  const seen = new Set<string>();
  return list.filter((k) => {
    if (seen.has(k)) return true;
    seen.add(k);
    return false;
  });
}

async function allRecords(world: {
  runtime: { deliveries: { list(o: object): Promise<DeliveryRecord[]> } };
}) {
  return world.runtime.deliveries.list({ limit: 1_000_000 });
}

async function drain(world: Awaited<ReturnType<typeof makeWorld>>) {
  await world.cycle('events');
  await world.cycle('credentials');
}

describe('exactly once', () => {
  it('each (item, destination) has one record and one send after any number of cycles; appended items, and only they, are new', async () => {
    const world = await makeWorld(emu, db, baseConfig());
    await drain(world);
    await drain(world);
    await drain(world);
    const expected = expectedKeys();
    expect(receivedKeys(hookA).sort()).toEqual(expected);
    expect(receivedKeys(hookB).sort()).toEqual(expected);
    const records = await allRecords(world);
    expect(records).toHaveLength(expected.length * 2);
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
    expect(records.every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true);

    hookA.requests.length = 0;
    hookB.requests.length = 0;
    const newEvents = dataset().appendEvents(1001, 3);
    const newCreds = dataset().appendCredentials(4, { domain: 'example.com' });
    dataset().appendCredentials(2, { domain: 'other.org' }); // not a configured domain
    const summary = await world.cycle('events');
    expect(summary.streams[0]?.newItems).toBe(3);
    await world.cycle('credentials');
    await drain(world);
    const fresh = [
      ...newEvents.map((e) => `event:${e.item.metadata.uid}`),
      ...newCreds.map((c) => `credential:${c.id}`),
    ].sort();
    expect(receivedKeys(hookA).sort()).toEqual(fresh);
    expect(receivedKeys(hookB).sort()).toEqual(fresh);
  });

  it('a second destination added later gets only items seen after it was added', async () => {
    const table = await db.table();
    const first = await makeWorld(
      emu,
      db,
      { ...baseConfig(), routes: [{ name: 'one', match: {}, to: ['a'] }] },
      { table },
    );
    await drain(first);
    const sentToA = receivedKeys(hookA).length;
    expect(sentToA).toBeGreaterThan(0);
    expect(hookB.requests).toHaveLength(0);
    const second = await makeWorld(emu, db, baseConfig(), { table });
    await drain(second);
    expect(receivedKeys(hookA)).toHaveLength(sentToA);
    expect(hookB.requests).toHaveLength(0);
  });

  it('credentials sent from packs are not sent again by a re-walk, an overlapping domain, or a stream exclusive again', async () => {
    const table = await db.table();
    const credentialsOnly = (domains: string[], lookback: string) =>
      baseConfig({ sources: { credentials: { domains, lookback, pageSize: 20 } } });
    const expected = expectedKeys().filter((k) => k.startsWith('credential:'));
    const first = await makeWorld(emu, db, credentialsOnly(['acme.test', 'example.com'], 'P60D'), { table });
    await first.cycle('credentials');
    expect(receivedKeys(hookA).sort()).toEqual(expected);
    const records = await allRecords(first);
    expect(records).toHaveLength(expected.length * 2);
    // Packed: one table item per page and destination, none per record.
    const stored = (await db.client.send(new ScanCommand({ TableName: table }))).Items ?? [];
    expect(stored.filter((i) => i.pk?.S?.startsWith('dlv#'))).toEqual([]);
    expect(stored.filter((i) => i.pk?.S?.startsWith('pack#')).length).toBeLessThan(expected.length / 5);
    // A new lookback re-walks both streams; mail.example.com overlaps example.com, so neither is exclusive.
    const overlapping = await makeWorld(
      emu,
      db,
      credentialsOnly(['acme.test', 'example.com', 'mail.example.com'], 'P61D'),
      { table },
    );
    const again = await overlapping.cycle('credentials');
    expect(again.streams.map((s) => s.newItems)).toEqual([0, 0, 0]);
    // mail.example.com alone, exclusive again, from its lookback: everything is below the claim mark.
    const alone = await makeWorld(emu, db, credentialsOnly(['mail.example.com'], 'P62D'), { table });
    expect((await alone.cycle('credentials')).streams[0]?.newItems).toBe(0);
    expect(duplicates(receivedKeys(hookA))).toEqual([]);
    expect(receivedKeys(hookA).sort()).toEqual(expected);
  });
});

describe('crashes at every step boundary', () => {
  class Crash extends Error {}

  for (const step of ['page-fetched', 'records-written', 'cursor-advanced'] as const) {
    for (const nth of [1, 3]) {
      it(`stopping ${step} (page ${nth}) loses nothing and sends nothing twice`, async () => {
        const world = await makeWorld(emu, db, baseConfig());
        let calls = 0;
        world.runtime.poll.checkpoint = (s) => {
          if (s === step && ++calls === nth) throw new Crash(`crash ${step}`);
        };
        const crashed = await world.cycle('events');
        expect(crashed.streams[0]?.status).toBe('failed');
        world.runtime.poll.checkpoint = undefined;
        const restarted = await world.another();
        await runPollCycle(restarted.cycle, 'events', { deadline: Date.now() + 60_000 });
        await runPollCycle(restarted.cycle, 'events', { deadline: Date.now() + 60_000 });
        const events = expectedKeys().filter((k) => k.startsWith('event:'));
        expect(duplicates(receivedKeys(hookA))).toEqual([]);
        expect(receivedKeys(hookA).sort()).toEqual(events);
        expect(receivedKeys(hookB).sort()).toEqual(events);
      });
    }
  }

  it('stopping after writing some of a page’s records loses nothing and sends nothing twice', async () => {
    const table = await db.table();
    let writes = 0;
    // A DynamoDB client that dies after the 4th delivery-record write, in the middle of a page.
    const dying = new Proxy(db.client, {
      get(target, prop) {
        if (prop !== 'send') return Reflect.get(target, prop);
        return async (command: {
          constructor: { name: string };
          input: { Item?: { pk?: { S?: string } } };
        }) => {
          const isRecordWrite =
            command.constructor.name === 'PutItemCommand' && command.input.Item?.pk?.S?.startsWith('dlv#');
          if (isRecordWrite && ++writes > 4) throw new Crash('process died mid-page');
          return target.send(command as never);
        };
      },
    }) as DynamoDBClient;
    const env = readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: table,
    });
    // Identifier groups make the event streams overlap, so records are created with conditional puts one by one.
    const config = configFrom(
      baseConfig({
        sources: { tenantEvents: { lookback: 'P7D' }, identifierGroups: [{ id: 102, lookback: 'P7D' }] },
      }),
    );
    const dyingRuntime = await createRuntime({
      env,
      config,
      secrets: {},
      logger: memoryLogger(),
      dynamo: dying,
      upstream: emu.client(),
    });
    const crashed = await runPollCycle(dyingRuntime.cycle, 'events', { deadline: Date.now() + 60_000 });
    expect(crashed.streams[0]?.status).toBe('failed');
    expect(writes).toBeGreaterThan(4);
    const healthy = await createRuntime({
      env,
      config,
      secrets: {},
      logger: memoryLogger(),
      dynamo: db.client,
      upstream: emu.client(),
    });
    await runPollCycle(healthy.cycle, 'events', { deadline: Date.now() + 60_000 });
    const events = expectedKeys().filter((k) => k.startsWith('event:'));
    expect(duplicates(receivedKeys(hookA))).toEqual([]);
    expect(receivedKeys(hookA).sort()).toEqual(events);
  });

  it('stopping between sending and marking sent sends that one message twice at most, and nothing else', async () => {
    const world = await makeWorld(emu, db, baseConfig());
    let crashedIds: string[] = [];
    world.runtime.deliver.checkpoint = (_step, ids) => {
      if (crashedIds.length === 0) {
        crashedIds = ids;
        throw new Crash('died after the send');
      }
    };
    await world.cycle('events');
    world.runtime.deliver.checkpoint = undefined;
    await world.cycle('events');
    await world.cycle('events');
    const events = expectedKeys().filter((k) => k.startsWith('event:'));
    const got = receivedKeys(hookA);
    expect([...new Set(got)].sort()).toEqual(events);
    const dupes = duplicates(got);
    const crashedKeys = crashedIds
      .filter((id) => id.startsWith('a~'))
      .map((id) => `event:${id.slice('a~event~'.length)}`);
    for (const key of dupes) expect(crashedKeys).toContain(key);
    expect(dupes.length).toBeLessThanOrEqual(crashedKeys.length);
    expect(duplicates(receivedKeys(hookB))).toEqual([]);
    expect(new Set(dupes).size).toBe(dupes.length); // never more than one extra send
  });
});

describe('overlapping runs', () => {
  it('three cycles started at once on one stream: one does the work, no record is written twice', async () => {
    emu.running.emulator.control.latencyMs = 30;
    const world = await makeWorld(emu, db, baseConfig());
    const runtimes = [world.runtime, await world.another(), await world.another()];
    const summaries = await Promise.all(
      runtimes.map((r) => runPollCycle(r.cycle, 'events', { deadline: Date.now() + 60_000 })),
    );
    const statuses = summaries.map((s) => s.streams[0]?.status).sort();
    expect(statuses).toEqual(['done', 'skipped', 'skipped']);
    const created = summaries.reduce((n, s) => n + (s.streams[0]?.newItems ?? 0), 0);
    expect(created).toBe(dataset().tenant('acme').events.length);
    const records = await allRecords(world);
    expect(records.filter((r) => r.kind === 'event')).toHaveLength(created * 2);
    expect(duplicates(receivedKeys(hookA))).toEqual([]);
  });

  it('a cycle whose lease expired and was taken over cannot move the cursor', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => now, sleep: systemClock.sleep };
    const table = await db.table();
    const env = readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: table,
    });
    const config = configFrom(baseConfig());
    const make = () =>
      createRuntime({
        env,
        config,
        secrets: {},
        logger: memoryLogger(),
        dynamo: db.client,
        upstream: emu.client(),
        clock,
      });
    const slow = await make();
    const other = await make();
    let tookOver = false;
    slow.poll.checkpoint = async (step) => {
      if (step === 'page-fetched' && !tookOver) {
        tookOver = true;
        now += 61_000; // the slow run stalls past its lease
        const lease = await other.streams.acquire('tenant', 'the-other-run');
        expect(lease).toBeDefined();
      }
    };
    const summary = await runPollCycle(slow.cycle, 'events', { deadline: now + 600_000 });
    expect(summary.streams[0]?.status).toBe('lease_lost');
    const state = await other.streams.acquire('tenant', 'reader');
    expect(state).toBeUndefined(); // still held by the-other-run, not freed by the stale run
    now += 61_000;
    const after = await other.streams.acquire('tenant', 'reader');
    expect(after?.state.cursor).toBeUndefined(); // the stale run never saved its page's cursor
    expect(after?.state.counters.pages).toBe(0);
  });
});

describe('cursors', () => {
  it('handles a null next at the end of the feed: resumes and picks up only new items', async () => {
    emu.running.emulator.control.endOfFeed = 'null';
    const world = await makeWorld(emu, db, baseConfig());
    await world.cycle('events');
    await world.cycle('events');
    const before = receivedKeys(hookA).length;
    const added = dataset().appendEvents(1001, 2);
    await world.cycle('events');
    const after = receivedKeys(hookA).slice(before);
    expect(after.sort()).toEqual(added.map((e) => `event:${e.item.metadata.uid}`).sort());
    expect(duplicates(receivedKeys(hookA))).toEqual([]);
  });

  it('handles the same next returned again at the end of the feed', async () => {
    const world = await makeWorld(emu, db, baseConfig());
    await world.cycle('events');
    const calls = emu.running.emulator.control.calls('tenantEvents').length;
    await world.cycle('events');
    // Resuming at the tail costs one request that returns the same cursor, and sends nothing.
    expect(emu.running.emulator.control.calls('tenantEvents').length - calls).toBe(1);
    expect(duplicates(receivedKeys(hookA))).toEqual([]);
  });

  it('a changed filter walks again from an hour before the stream position: nothing after it lost, nothing sent twice', async () => {
    const table = await db.table();
    const narrow = baseConfig({
      sources: { tenantEvents: { lookback: 'P7D', filters: { severity: ['high', 'critical'] } } },
    });
    const first = await makeWorld(emu, db, narrow, { table });
    await first.cycle('events');
    const highOnly = receivedKeys(hookA);
    expect(highOnly.length).toBeGreaterThan(0);
    const lease = await first.runtime.streams.acquire('tenant', 'probe');
    const position = Date.parse(lease?.state.newestItemAt ?? '');
    await first.runtime.streams.release(lease!, 'done');
    expect(Number.isNaN(position)).toBe(false);
    // Matched after the narrow walk, at every severity: the wide walk must send each of these.
    const later = dataset().appendEvents(1001, 6);
    const wide = await makeWorld(emu, db, baseConfig({ sources: { tenantEvents: { lookback: 'P7D' } } }), {
      table,
    });
    await wide.cycle('events');
    const all = receivedKeys(hookA);
    expect(duplicates(all)).toEqual([]);
    const expected = new Set([
      ...highOnly,
      ...dataset()
        .tenant('acme')
        .events.filter((e) => Date.parse(e.item.metadata.matched_at) >= position - 3_600_000)
        .map((e) => `event:${e.item.metadata.uid}`),
    ]);
    expect(all.sort()).toEqual([...expected].sort());
    for (const e of later) expect(all).toContain(`event:${e.item.metadata.uid}`);
  });

  it('a baseline first run sends nothing, and later items alert', async () => {
    const world = await makeWorld(
      emu,
      db,
      baseConfig({ sources: { tenantEvents: { lookback: 'P7D', firstRun: 'baseline' } } }),
    );
    const first = await world.cycle('events');
    expect(first.streams[0]?.baseline).toBeGreaterThan(0);
    expect(hookA.requests).toHaveLength(0);
    const added = dataset().appendEvents(1001, 2);
    await world.cycle('events');
    expect(receivedKeys(hookA).sort()).toEqual(added.map((e) => `event:${e.item.metadata.uid}`).sort());
  });
});
