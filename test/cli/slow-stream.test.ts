/**
 * One slow stream stops only itself (docs/architecture.md), through the real CLI against the
 * emulator and dynalite over HTTP: with 20 identifier groups and one group's search answering only
 * after its share of the run has gone, `poll events --once` still polls every other group in the
 * same run, exits 0, and the slow group goes to the back of the next run's order. Before, the
 * slow group ended `budget` with no page, the cycle stopped there, and (never marked polled) it
 * came first again in every run: the 19 others were never polled.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { systemClock } from '../../lib/clock.ts';
import { inTurn } from '../../lib/poll/turn.ts';
import { StreamStore } from '../../lib/state/streams.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const GROUPS = [101, 102, ...Array.from({ length: 18 }, (_, i) => 100_003 + i)];
const SLOW = 102;
const emu = useEmulator({ eventsPerTenant: 10, groupsPerTenant: 20, credentials: 5 });
const db = useDynalite();

describe('poll events --once with one slow group among 20', () => {
  it('polls every other group in the same run, and the slow one goes to the back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-slow-'));
    const config = join(dir, 'alerts.config.json');
    await writeFile(
      config,
      JSON.stringify({
        sources: {
          tenantEvents: { enabled: false },
          identifierGroups: GROUPS.map((id) => ({ id, lookback: 'P30D' })),
        },
        destinations: { local: { type: 'console' } },
        routes: [{ name: 'all', to: ['local'] }],
        upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 50 },
      }),
    );
    const table = await db.table();
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: table,
      ALERTS_CONFIG: config,
      NO_COLOR: '1',
    };
    // The slow group's search answers after 8 s: past its share of the run (5 s: a 30 s run polls
    // for 15 s, a twentieth each but never less than 5 s).
    emu.running.emulator.control.addFault({ path: `/identifier_groups/${SLOW}/`, delayMs: 8_000, times: 5 });
    const started = Date.now();
    const io = captureIo(env);
    const code = await runCli(['poll', 'events', '--once', '--max-seconds', '30'], io);
    const run = { code, out: io.out, err: io.err };
    emu.running.emulator.control.clearFaults();
    expect(run.code, run.err).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    const lines = run.out.split('\n');
    const line = (id: number) => lines.find((l) => l.startsWith(`  group:${id}: `));
    const at = (id: number) => lines.findIndex((l) => l.startsWith(`  group:${id}: `));
    expect(line(SLOW)).toMatch(/^ {2}group:102: budget, 0 pages/);
    // It was polled early (second), and the others after it were polled all the same.
    expect(at(SLOW)).toBeLessThan(at(100_020));
    for (const id of GROUPS.filter((g) => g !== SLOW))
      expect(line(id), `group ${id}`).toMatch(/: done, [1-9]\d* pages?/);
    // Next run's order: the slow group is no longer first.
    const streams = new StreamStore(db.client, table, systemClock);
    const order = await inTurn(
      GROUPS.map((id) => ({ id: `group:${id}` })),
      (s) => s.id,
      streams,
    );
    expect(order.map((s) => s.id).indexOf(`group:${SLOW}`)).toBeGreaterThan(0);
  }, 30_000);
});
