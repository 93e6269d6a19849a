/**
 * An identifier group the upstream does not know (its search answers 404): a mistake in the config
 * that every cycle meets again. The stream fails each cycle, so the cycle's summary, `status` and
 * the heartbeat show it, and the others go on; the log says which group and where to fix it once
 * a run, as a warning, not as an error line every cycle. On real dynalite and the emulator over
 * HTTP, through the runtime every command and function builds, and through the CLI.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type HeartbeatReceiver, startHeartbeat } from '../helpers/heartbeat.ts';
import { captureIo } from '../helpers/io.ts';
import { makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 4, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let beat: HeartbeatReceiver | undefined;
afterAll(() => beat?.close());

// Acme's groups are 101 and 102: 999 is nobody's.
const config = {
  sources: {
    tenantEvents: { lookback: 'P30D' },
    identifierGroups: [
      { id: 999, name: 'Typo', lookback: 'P30D' },
      { id: 101, lookback: 'P30D' },
    ],
  },
  destinations: { out: { type: 'console' } },
  routes: [{ name: 'all', to: ['out'] }],
  heartbeat: { events: { secret: 'eventsBeat' }, style: 'healthchecks' },
};

describe('an identifier group the upstream does not know', () => {
  it('fails its stream every cycle, is logged once a run as a warning, and the heartbeat hears of it each time', async () => {
    beat = await startHeartbeat();
    const world = await makeWorld(emu, db, config, {
      secrets: { eventsBeat: beat.url },
      clock: skipClock(),
    });
    for (let cycle = 1; cycle <= 3; cycle++) {
      const summary = await world.cycle('events');
      const byId = new Map(summary.streams.map((s) => [s.stream, s]));
      expect(byId.get('tenant')?.status).toBe('done');
      expect(byId.get('group:101')?.status).toBe('done');
      expect(byId.get('group:999')).toMatchObject({
        status: 'failed',
        error: {
          code: 'unknown_group',
          message: expect.stringMatching(
            /^the upstream knows no identifier group 999 for this tenant \(HTTP 404\): check its id in sources\.identifierGroups/,
          ),
        },
      });
      expect(summary.exitCode).toBe(1);
    }
    const about = world.logs.filter((line) => line.includes('identifier group 999'));
    expect(about).toHaveLength(1);
    expect(JSON.parse(about[0] as string)).toMatchObject({ level: 'warn', stream: 'group:999' });
    expect(world.logs.filter((line) => JSON.parse(line).level === 'error')).toEqual([]);
    // Each cycle ended badly, and said why.
    const fails = beat.pings.filter((p) => p.kind === 'fail');
    expect(fails).toHaveLength(3);
    for (const fail of fails) expect(fail.body).toMatch(/group:999: failed \(unknown_group: /);

    // `status` shows the stream's last poll failed.
    const dir = await mkdtemp(join(tmpdir(), 'ea-unknown-group-'));
    const file = join(dir, 'alerts.config.json');
    const { heartbeat: _, ...plain } = config;
    await writeFile(file, JSON.stringify(plain));
    const status = captureIo({
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: world.table,
      ALERTS_CONFIG: file,
    });
    expect(await runCli(['status', '--json'], status), status.err).toBe(0);
    const streams = (JSON.parse(status.out) as { streams: { stream: string; lastResult: string }[] }).streams;
    expect(streams.find((s) => s.stream === 'group:999')?.lastResult).toBe('failed');
    expect(streams.find((s) => s.stream === 'group:101')?.lastResult).toBe('done');
  });

  it('poll --once: the stream fails with what to fix, the others are polled, exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-unknown-group-'));
    const file = join(dir, 'alerts.config.json');
    const { heartbeat: _, ...plain } = config;
    await writeFile(file, JSON.stringify(plain));
    const io = captureIo({
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: file,
    });
    expect(await runCli(['poll', 'events', '--once'], io)).toBe(1);
    expect(io.out).toMatch(/^ {2}tenant: done/m);
    expect(io.out).toMatch(/^ {2}group:101: done/m);
    expect(io.out).toMatch(/^ {2}group:999: failed.*the upstream knows no identifier group 999/m);
    expect(io.err).toBe(
      'exposure-alerts: group:999: the upstream knows no identifier group 999 for this tenant (HTTP 404): check its id in sources.identifierGroups; the stream fails every cycle until then\n',
    );
  });
});
