/**
 * The heartbeat of a cycle (docs/configuration.md), on real dynalite and the emulator over HTTP,
 * with a real local receiver in healthchecks.io's manner: start and success, in order, for a good
 * cycle; start and fail with a summary for a cycle with a failing stream; a quota pause and a budget
 * stop still ping success; the plain style pings success only; a dead or slow receiver costs a
 * cycle nothing; a dry run pings nothing; a missing heartbeat secret is named at start.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../lib/env.ts';
import { memoryLogger, redactor } from '../../lib/log.ts';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { createRuntime } from '../../lib/runtime.ts';
import { skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { deadUrl, type HeartbeatReceiver, startHeartbeat } from '../helpers/heartbeat.ts';
import { configFrom, makeWorld } from '../helpers/world.ts';

const emu = useEmulator({ eventsPerTenant: 6, lateMatchesPerTenant: 0, credentials: 40 });
const db = useDynalite();
const open: HeartbeatReceiver[] = [];
afterEach(async () => {
  emu.running.emulator.control.clearFaults();
  emu.running.emulator.setQuotaRemaining(10_000);
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function receiver(): Promise<HeartbeatReceiver> {
  const r = await startHeartbeat();
  open.push(r);
  return r;
}

/** Every stream to the terminal; the heartbeat URLs are secrets (`world` gives them). */
function config(extra: Record<string, unknown> = {}) {
  return {
    sources: {
      tenantEvents: { lookback: 'P30D' },
      identifierGroups: [{ id: 101, lookback: 'P30D' }],
      credentials: { domains: ['acme.test'], lookback: 'P60D' },
    },
    destinations: { out: { type: 'console' } },
    routes: [{ name: 'all', to: ['out'] }],
    heartbeat: { events: { secret: 'eventsBeat' }, credentials: { secret: 'credentialsBeat' }, ...extra },
  };
}

const world = (url: string, extra: Record<string, unknown> = {}) =>
  makeWorld(emu, db, config(extra), {
    secrets: { eventsBeat: url, credentialsBeat: url },
    clock: skipClock(),
  });

describe('the heartbeat of a cycle', () => {
  it('a good cycle: start, then success, each a GET', async () => {
    const beat = await receiver();
    const summary = await (await world(beat.url)).cycle('events');
    expect(summary.exitCode).toBe(0);
    expect(beat.pings.map((p) => `${p.method} ${p.kind}`)).toEqual(['GET start', 'GET success']);
    // The URL is a secret: no log line can hold it.
    expect(redactor.redact(`pinging ${beat.url}`)).not.toContain(beat.url);
  });

  it('a failing stream: start, then a POST to /fail saying which stream and why', async () => {
    const beat = await receiver();
    emu.running.emulator.control.addFault({ endpoint: 'identifierGroupEvents', status: 400, times: 50 });
    const summary = await (await world(beat.url)).cycle('events');
    expect(summary.exitCode).toBe(1);
    expect(beat.pings.map((p) => `${p.method} ${p.kind}`)).toEqual(['GET start', 'POST fail']);
    expect(beat.pings[1]?.body).toMatch(
      /^poll events: 1 of 2 streams failed\ngroup:101: failed \(bad_request: /,
    );
  });

  it('a quota pause and a budget stop are no failure: success', async () => {
    const beat = await receiver();
    emu.running.emulator.setQuotaRemaining(0);
    const paused = await (await world(beat.url)).cycle('credentials');
    expect(paused.streams.map((s) => s.status)).toEqual(['paused']);
    emu.running.emulator.setQuotaRemaining(10_000);
    // No time at all: every stream stops by the budget.
    const stopped = await (await world(beat.url)).cycle('events', 0);
    expect(stopped.streams.every((s) => s.status === 'budget')).toBe(true);
    expect(beat.pings.map((p) => p.kind)).toEqual(['start', 'success', 'start', 'success']);
  });

  it('the plain style pings success only', async () => {
    const beat = await receiver();
    emu.running.emulator.control.addFault({ endpoint: 'identifierGroupEvents', status: 400, times: 50 });
    const w = await world(beat.url, { style: 'plain' });
    await w.cycle('events');
    emu.running.emulator.control.clearFaults();
    await w.cycle('events');
    expect(beat.pings.map((p) => `${p.method} ${p.kind}`)).toEqual(['GET success']);
  });

  it('a dead or a slow receiver costs the cycle nothing: it ends well, 2 s at most after its work', async () => {
    const dead = await world(await deadUrl());
    expect((await dead.cycle('events')).exitCode).toBe(0);
    // A receiver that would answer after 10 s: each ping gives up at 2 s, and the cycle goes on.
    const slow = await receiver();
    slow.delayMs = 10_000;
    const started = Date.now();
    const summary = await (await world(slow.url)).cycle('events');
    expect(summary.exitCode).toBe(0);
    expect(summary.streams.every((s) => s.status === 'done')).toBe(true);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(slow.pings.map((p) => p.kind)).toEqual(['start', 'success']);
  });

  it('a dry run pings nothing', async () => {
    const beat = await receiver();
    const runtime = await createRuntime({
      env: readEnvironment({
        EXPOSURE_API_URL: emu.url,
        EXPOSURE_API_TOKEN: 'emu-acme-token',
        TABLE_NAME: await db.table(),
        DYNAMODB_ENDPOINT: db.endpoint,
      }),
      config: configFrom(config()),
      secrets: { eventsBeat: beat.url, credentialsBeat: beat.url },
      logger: memoryLogger('error'),
      dynamo: db.client,
      dryRun: true,
      write: () => {},
    });
    expect(runtime.heartbeat('events')).toBeUndefined();
    expect((await runPollCycle(runtime.cycle, 'events', { deadline: Date.now() + 60_000 })).exitCode).toBe(0);
    expect(beat.pings).toEqual([]);
  });

  it('a missing heartbeat secret is named at start', async () => {
    await expect(
      makeWorld(emu, db, config(), { secrets: { eventsBeat: 'http://x.example/1' } }),
    ).rejects.toThrow(
      'heartbeat.credentials: secret "credentialsBeat" is not a non-empty string in the secret object',
    );
  });
});
