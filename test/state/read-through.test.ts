/**
 * A dry run predicts the real run (interface.md section 1, lib/state/read-through.ts): on its own
 * table, `<real>-dry-run`, it starts where the real run stands (the real run's stream position and
 * records), honours the real run's silences, writes nothing to the real run's table, and later
 * cycles go on from its own position. Then the real run sends what the dry run said it would.
 * Real emulator, real dynalite, a real receiver for the real run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDelivery } from '../../lib/cli/commands/poll.ts';
import { runCli } from '../../lib/cli/run.ts';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { dryRunTable } from '../../lib/state/read-through.ts';
import { ScanCommand } from '../../lib/state/sdk.ts';
import { SilenceStore } from '../../lib/state/silences.ts';
import { ensureTable } from '../../lib/state/table.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { configFrom, makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 24, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(async () => {
  await hook.close();
});

const received = () =>
  hook.requests.flatMap((r) =>
    (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
  );

async function scan(table: string): Promise<string[]> {
  const out = await db.client.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
  return (out.Items ?? []).map((item) => JSON.stringify(item)).sort();
}

const config = () => ({
  sources: { tenantEvents: { lookback: 'PT24H' } },
  destinations: { siem: { type: 'webhook', url: hook.url } },
  routes: [{ name: 'all', to: ['siem'] }],
});

function dryRuntime(table: string, write: (text: string) => void = () => {}) {
  return createRuntime({
    env: readEnvironment({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      TABLE_NAME: table,
      DYNAMODB_ENDPOINT: db.endpoint,
    }),
    config: configFrom(config()),
    secrets: {},
    logger: memoryLogger('info'),
    dynamo: db.client,
    upstream: emu.client(),
    write,
    dryRun: true,
  });
}

describe('a dry run beside the real run', () => {
  it('starts where the real run stands, honours its silences, writes nothing there, then goes on alone', async () => {
    const real = await makeWorld(emu, db, config());
    await real.cycle('events');
    const lookback = received().length;
    expect(lookback).toBeGreaterThan(5);

    const added = emu.running.emulator.appendEvents(1001, 4);
    const type = added[0]!.item.metadata.type;
    const silenced = added.filter((e) => e.item.metadata.type === type).map((e) => e.item.metadata.uid);
    const io = { client: db.client, tableName: real.table, clock: { now: Date.now, sleep: async () => {} } };
    await new SilenceStore(io as never).create({
      id: `s-${Date.now().toString(36).padStart(9, '0')}-abcdef`,
      match: { types: [type] },
      until: new Date(Date.now() + 3_600_000).toISOString(),
      reason: 'the real run holds these back',
      createdBy: 'test',
      createdAt: new Date().toISOString(),
    });
    const before = await scan(real.table);

    const table = dryRunTable(real.table);
    await ensureTable(db.client, table);
    const lines: string[] = [];
    const dry = await dryRuntime(table, (text) => lines.push(text));
    const first = await runPollCycle(dry.cycle, 'events', { deadline: Date.now() + 30_000 });
    // What the real run has not seen yet, not the whole lookback again.
    expect(first.streams[0]?.newItems).toBe(added.length);
    const shown = (text: string) => [...text.matchAll(/uid (\S+)/g)].map((m) => m[1]);
    const wouldSend = lines.flatMap(shown);
    expect(wouldSend.sort()).toEqual(
      added
        .map((e) => e.item.metadata.uid)
        .filter((uid) => !silenced.includes(uid))
        .sort(),
    );
    expect(first.delivery.destinations[0]?.silenced ?? first.streams[0]?.silenced).toBe(silenced.length);
    expect(describeDelivery(first.delivery, dry.dryRun).join('\n')).toContain(
      `siem: done, would send ${wouldSend.length} in`,
    );
    expect(describeDelivery(first.delivery, dry.dryRun).join('\n')).not.toMatch(/\d+ sent/);

    // A second cycle goes on from the dry run's own position.
    const later = emu.running.emulator.appendEvents(1001, 2);
    lines.length = 0;
    const second = await runPollCycle(dry.cycle, 'events', { deadline: Date.now() + 30_000 });
    expect(second.streams[0]?.newItems).toBe(later.length);
    expect(await scan(real.table)).toEqual(before);

    // The real run then sends what the dry run said it would (and the later two).
    hook.requests.length = 0;
    await real.cycle('events');
    const expected = [
      ...wouldSend,
      ...later.filter((e) => e.item.metadata.type !== type).map((e) => e.item.metadata.uid),
    ];
    expect(received().sort()).toEqual(expected.sort());
  });

  it('an item the real run recorded is not new to the dry run (a refused cursor re-walks the last hour)', async () => {
    const real = await makeWorld(emu, db, config());
    await real.cycle('events');
    emu.running.emulator.appendEvents(1001, 3);
    await real.cycle('events');
    const before = await scan(real.table);
    // The saved cursor is refused: the dry run re-walks from an hour before the real run's position.
    emu.running.emulator.expireCursors();
    const table = dryRunTable(real.table);
    await ensureTable(db.client, table);
    const dry = await dryRuntime(table);
    const first = await runPollCycle(dry.cycle, 'events', { deadline: Date.now() + 30_000 });
    expect(first.streams[0]?.items).toBeGreaterThan(3);
    expect(first.streams[0]?.newItems).toBe(0);
    expect(await scan(real.table)).toEqual(before);
  });

  it("beside a dry run, its silences are the real run's and its own; ending a real one ends it for the dry run only", async () => {
    const real = await db.table();
    const table = dryRunTable(real);
    await ensureTable(db.client, table);
    const store = (name: string) =>
      new SilenceStore({
        client: db.client,
        tableName: name,
        clock: { now: Date.now, sleep: async () => {} },
      } as never);
    const silence = (id: string, reason: string) => ({
      id,
      match: { types: ['paste'] },
      until: new Date(Date.now() + 3_600_000).toISOString(),
      reason,
      createdBy: 'test',
      createdAt: new Date().toISOString(),
    });
    const now = Date.now().toString(36).padStart(9, '0');
    await store(real).create(silence(`s-${now}-aaaaaa`, 'the real one'));
    await store(table).create(silence(`s-${now}-bbbbbb`, 'the dry one'));
    const before = await scan(real);
    const env = { DYNAMODB_ENDPOINT: db.endpoint, TABLE_NAME: table };
    const list = async () => {
      const io = captureIo(env);
      expect(await runCli(['silences', 'list', '-q'], io)).toBe(0);
      return io.out.trim().split('\n').sort();
    };
    expect(await list()).toEqual([`s-${now}-aaaaaa`, `s-${now}-bbbbbb`]);
    expect(await runCli(['silences', 'expire', `s-${now}-aaaaaa`], captureIo(env))).toBe(0);
    expect(await list()).toEqual([`s-${now}-bbbbbb`]);
    expect(await scan(real)).toEqual(before);
    expect((await store(real).active()).map((s) => s.id)).toEqual([`s-${now}-aaaaaa`]);
  });

  it('a dry run with no real run yet reads nothing and polls the whole lookback', async () => {
    const table = dryRunTable(`never-${Date.now()}`);
    await ensureTable(db.client, table);
    const dry = await dryRuntime(table);
    const first = await runPollCycle(dry.cycle, 'events', { deadline: Date.now() + 30_000 });
    expect(first.streams[0]?.status).toBe('done');
    expect(first.streams[0]?.newItems).toBeGreaterThan(5);
  });
});
