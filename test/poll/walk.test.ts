/**
 * Where a walk starts and what it alerts on (lib/poll/walk.ts, docs/configuration.md): no time bound
 * on events, so old content matched late is delivered; a first walk alerts on what was matched in
 * the lookback; a restarted walk resumes an hour before the stream's position, so neither a refused
 * cursor nor an expired record loses or repeats an alert. Real emulator, real dynalite, real
 * receivers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import type { StreamPage, StreamSpec } from '../../lib/poll/streams.ts';
import type { PageCounts } from '../../lib/poll/types.ts';
import { restartWalk, resumeWalk, WalkState } from '../../lib/poll/walk.ts';
import type { StreamState } from '../../lib/state/streams.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('walk rules', () => {
  const state = (extra: Partial<StreamState> = {}): StreamState => ({
    counters: { pages: 0, items: 0, newItems: 0, quarantined: 0 },
    catchingUp: false,
    baselining: false,
    ...extra,
  });
  const events = { kind: 'event' as const, fingerprint: 'f2', lookbackMs: DAY, firstRun: 'alert' as const };
  const now = Date.parse('2026-11-22T12:00:00Z');

  it('a first walk alerts from now minus the lookback', () => {
    const { walk, started } = resumeWalk(state(), events, now);
    expect(started).toBe('first');
    expect(walk).toEqual({
      since: '2026-11-21T12:00:00.000Z',
      alertFrom: '2026-11-21T12:00:00.000Z',
      catchingUp: true,
      baselining: false,
    });
  });

  it('the same request resumes its cursor and bounds', () => {
    const saved = state({
      fingerprint: 'f2',
      since: '2026-11-01T00:00:00.000Z',
      alertFrom: '2026-11-01T00:00:00.000Z',
      cursor: { next: 'c1', fingerprint: 'f2', since: '2026-11-01T00:00:00.000Z', savedAt: '' },
      newestItemAt: '2026-11-22T11:00:00.000Z',
    });
    expect(resumeWalk(saved, events, now).walk).toEqual({
      from: 'c1',
      since: '2026-11-01T00:00:00.000Z',
      alertFrom: '2026-11-01T00:00:00.000Z',
      catchingUp: false,
      baselining: false,
    });
  });

  it('a restart alerts from an hour before the position, never from now minus the lookback', () => {
    // Down for three days with a one-day lookback: the position, not the clock, decides.
    const saved = state({ fingerprint: 'f1', since: 'x', newestItemAt: '2026-11-19T12:00:00.000Z' });
    const { walk, started } = resumeWalk(saved, events, now);
    expect(started).toBe('changed');
    expect(walk.alertFrom).toBe('2026-11-19T11:00:00.000Z');
    expect(walk.catchingUp).toBe(true);
    const credentials = restartWalk(saved, { ...events, kind: 'credential' }, now);
    expect(credentials).toMatchObject({ since: '2026-11-19T11:00:00.000Z' });
    expect(credentials.alertFrom).toBeUndefined();
  });

  it('what an earlier walk treated as baseline stays baseline', () => {
    const saved = state({
      fingerprint: 'f1',
      since: 'x',
      alertFrom: '2026-11-22T11:30:00.000Z',
      newestItemAt: '2026-11-22T11:45:00.000Z',
      baselining: true,
    });
    const walk = restartWalk(saved, events, now);
    expect(walk.alertFrom).toBe('2026-11-22T11:30:00.000Z');
    expect(walk.baselining).toBe(true);
  });

  it('the poll lag counts items seen once the walk follows the feed, not a first walk over its lookback', () => {
    const spec = {
      ...events,
      id: 'tenant',
      endpoint: 'tenantEvents',
      exclusive: true,
      page: async () => ({ items: [], invalid: [], next: null }),
      itemTime: (item: { at: string }) => item.at,
    } as unknown as StreamSpec;
    const counts = { items: 1, newItems: 1, queued: 1, sent: 0, silenced: 0 } as unknown as PageCounts;
    const page = (at: string, next: string) =>
      ({ items: [{ at }], invalid: [], next }) as unknown as StreamPage;
    // A first walk: the newest of its lookback is 20 hours old, which is no lag at all.
    const first = new WalkState(spec, state(), now, memoryLogger());
    first.pageWritten(page('2026-11-21T16:00:00.000Z', 'c1'), counts, true);
    expect(first.lagSeconds(now)).toBeUndefined();
    // The next run follows the feed: a match of 90 s ago is 90 s of lag.
    const saved = first.advance();
    const next = new WalkState(
      spec,
      state({
        fingerprint: saved.fingerprint,
        since: saved.since,
        ...(saved.alertFrom ? { alertFrom: saved.alertFrom } : {}),
        cursor: {
          next: saved.next as string,
          fingerprint: saved.fingerprint,
          since: saved.since,
          savedAt: '',
        },
        ...(saved.newestItemAt ? { newestItemAt: saved.newestItemAt } : {}),
        catchingUp: saved.catchingUp,
        baselining: saved.baselining,
      }),
      now,
      memoryLogger(),
    );
    next.pageWritten(page('2026-11-22T11:58:30.000Z', 'c2'), counts, true);
    expect(next.lagSeconds(now)).toBe(90);
  });

  it('a lookback longer than time itself starts at the epoch', () => {
    const { walk } = resumeWalk(state(), { ...events, lookbackMs: 999_999 * 365 * DAY }, now);
    expect(walk.alertFrom).toBe('1970-01-01T00:00:00.000Z');
  });

  it('a position older than the record retention alerts only after it', () => {
    const saved = state({ fingerprint: 'f1', since: 'x', newestItemAt: '2026-08-01T00:00:00.000Z' });
    expect(restartWalk(saved, events, now).alertFrom).toBe('2026-08-01T00:00:00.001Z');
  });
});

describe('walks against the emulator', () => {
  const emu = useEmulator({ eventsPerTenant: 16, credentials: 20 });
  const db = useDynalite();
  let hook: Receiver;
  beforeAll(async () => {
    hook = await startReceiver();
  });
  afterAll(() => hook.close());
  beforeEach(() => {
    hook.requests.length = 0;
    emu.running.emulator.control.clearFaults();
  });
  const dataset = () => emu.running.emulator.dataset;
  const config = (tenantEvents: Record<string, unknown> = {}) => ({
    sources: { tenantEvents: { lookback: 'PT24H', ...tenantEvents } },
    destinations: { siem: { type: 'webhook', url: hook.url } },
    routes: [{ name: 'all', to: ['siem'] }],
  });
  const received = () =>
    hook.requests.flatMap((r) =>
      (r.json() as { items: { metadata: { uid: string } }[] }).items.map((i) => i.metadata.uid),
    );
  const duplicates = (list: string[]) => list.filter((k, i) => list.indexOf(k) !== i);

  it('sends no time bound of its own in any event request', async () => {
    const world = await makeWorld(emu, db, config({ filters: { severity: ['high', 'critical'] } }));
    emu.running.emulator.control.clearLog();
    await world.cycle('events');
    const bodies = emu.running.emulator.control
      .calls('tenantEvents')
      .map((c) => c.input as { filters?: object });
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) expect(body.filters).toEqual({ severity: ['high', 'critical'] });
  });

  it('a first walk alerts on what was matched in the lookback, old content included, and records nothing older', async () => {
    const started = Date.now();
    const world = await makeWorld(emu, db, config({ lookback: 'PT6H' }));
    const result = await world.cycle('events');
    const from = started - 6 * HOUR;
    const tenant = dataset().tenant('acme');
    const inWindow = tenant.events.filter((e) => Date.parse(e.item.metadata.matched_at) >= from);
    const oldContent = inWindow.filter(
      (e) => Date.parse(e.item.metadata.estimated_created_at) < started - 300 * DAY,
    );
    expect(oldContent.length).toBeGreaterThan(0);
    expect(received().sort()).toEqual(inWindow.map((e) => e.item.metadata.uid).sort());
    // Older matches are passed over: counted as baseline, without a record.
    expect(result.streams[0]?.baseline).toBe(tenant.events.length - inWindow.length);
    const records = await world.runtime.deliveries.list({ limit: 10_000 });
    expect(records).toHaveLength(inWindow.length);
  });

  it('an event whose content is 10 days old, matched after the walk began, arrives exactly once', async () => {
    const world = await makeWorld(emu, db, config());
    await world.cycle('events');
    hook.requests.length = 0;
    const [late] = emu.running.emulator.appendEvents(1001, 1, new Date(), {
      createdAt: new Date(Date.now() - 10 * DAY),
    });
    await world.cycle('events');
    await world.cycle('events');
    expect(received()).toEqual([late?.item.metadata.uid]);
  });

  it('a refused cursor: the walk restarts an hour before its position, and what was matched in a downtime longer than the lookback arrives, once', async () => {
    const clock = fakeClock();
    const world = await makeWorld(emu, db, config({ lookback: 'PT1H' }), { clock });
    await world.cycle('events');
    const before = received();
    // Matched two hours after the last run, content from the same morning; then five hours of downtime.
    const matched = new Date(clock.now() + 2 * HOUR);
    const during = emu.running.emulator.appendEvents(1001, 3, matched, {
      createdAt: new Date(clock.now() - 3 * HOUR),
    });
    emu.running.emulator.expireCursors();
    clock.advance(5 * HOUR);
    const result = await world.cycle('events');
    expect(result.streams[0]?.status).toBe('done');
    expect(world.logs.some((l) => l.includes('the upstream refused the saved cursor'))).toBe(true);
    const all = received();
    expect(duplicates(all)).toEqual([]);
    expect(all.slice(before.length).sort()).toEqual(during.map((e) => e.item.metadata.uid).sort());
  });

  it('a 400 that is not about the cursor keeps the cursor: the next run resumes from it', async () => {
    const world = await makeWorld(emu, db, config());
    await world.cycle('events');
    const control = emu.running.emulator.control;
    // The filters are refused (a bad request on the upstream's side), with or without the cursor.
    control.addFault({ endpoint: 'tenantEvents', status: 400, times: 2 });
    const failed = await world.cycle('events');
    expect(failed.streams[0]?.status).toBe('failed');
    expect(world.logs.some((l) => l.includes('refused the saved cursor'))).toBe(false);
    control.clearLog();
    const added = emu.running.emulator.appendEvents(1001, 2);
    hook.requests.length = 0;
    await world.cycle('events');
    const first = control.calls('tenantEvents')[0]?.input as { from?: string };
    expect(first.from).toEqual(expect.any(String));
    expect(received().sort()).toEqual(added.map((e) => e.item.metadata.uid).sort());
  });

  it('a re-walk past the record retention re-sends nothing whose record expired', async () => {
    const clock = fakeClock();
    const world = await makeWorld(emu, db, config({ lookback: 'P200D' }), { clock });
    await world.cycle('events');
    clock.advance(100 * DAY);
    emu.running.emulator.appendEvents(1001, 2, new Date(clock.now()));
    await world.cycle('events');
    // The request changes: a restarted walk over a feed whose first records have expired.
    const changed = await makeWorld(emu, db, config({ lookback: 'P200D', filters: { is_ignored: false } }), {
      clock,
      table: world.table,
    });
    const before = received().length;
    await changed.cycle('events');
    expect(received().length).toBe(before);
    expect(duplicates(received())).toEqual([]);
  });
});
