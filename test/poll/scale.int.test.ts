/**
 * Scale (docs/architecture.md), on real dynalite and the emulator over HTTP with its rate tiers
 * on (forty times the real ones, to stay quick: the ratios are what count, and the governor's
 * margin under a tier, a tenth of its rate, is the same 111 ms of lateness at any rate):
 * concurrent runs keep together within the shared rate and split the streams; no stream starves
 * with a short budget; credential polling pauses below the quota reserve and resumes; every item
 * arrives once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runPollCycle } from '../../lib/poll/cycle.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld } from '../helpers/world.ts';

const BASIC = 160;
const SEARCH = 40;
const emu = useEmulator({
  eventsPerTenant: 30,
  credentials: 150,
  rateLimits: { basicPerSecond: BASIC, searchPerSecond: SEARCH },
});
const db = useDynalite();
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());
beforeEach(() => {
  hook.requests.length = 0;
  emu.running.emulator.control.resetRateStats();
  emu.running.emulator.control.clearLog();
});

const emulator = () => emu.running.emulator;
/** Every configured domain: a few with leaked logins, the rest with none (one search each). */
const domains = (n: number) => [
  'acme.test',
  'example.com',
  'globex.test',
  ...Array.from({ length: n - 3 }, (_, i) => `d${String(i).padStart(2, '0')}.example.net`),
];
const config = (n: number, extra: Record<string, unknown> = {}) => ({
  sources: { credentials: { domains: domains(n), lookback: 'P60D' } },
  destinations: { siem: { type: 'webhook', url: hook.url } },
  routes: [{ name: 'all', to: ['siem'] }],
  upstream: { requestsPerSecond: BASIC, searchRequestsPerSecond: SEARCH, quotaReserve: 100 },
  ...extra,
});
const credentialKeys = () =>
  hook.requests.flatMap((r) => (r.json() as { items: { id: number }[] }).items.map((i) => i.id));
const expectedCredentials = (n: number) => {
  const listed = domains(n);
  return emulator()
    .dataset.credentials.filter((c) => listed.some((d) => c.domain === d || c.domain.endsWith(`.${d}`)))
    .map((c) => c.id)
    .sort();
};
const rate = () => emulator().control.rateStats();

describe('concurrent runs', () => {
  it('three runs at once keep within both tiers together, get no 429, poll each stream once, and send every credential once', async () => {
    const n = 24;
    const world = await makeWorld(emu, db, config(n), { governed: true });
    const runs = [world.runtime, await world.another(), await world.another()];
    const deadline = Date.now() + 60_000;
    const summaries = await Promise.all(runs.map((r) => runPollCycle(r.cycle, 'credentials', { deadline })));
    const stats = rate();
    expect(stats.refused).toBe(0);
    for (const org of stats.organizations) {
      expect(org.basic.maxAdmittedPerWindow).toBeLessThanOrEqual(BASIC);
      expect(org.search.maxAdmittedPerWindow).toBeLessThanOrEqual(SEARCH);
    }
    // Each stream polled by exactly one run; every run polled some (the work was split).
    const polled = summaries.flatMap((s) =>
      s.streams.filter((r) => r.status === 'done').map((r) => r.stream),
    );
    expect(polled.sort()).toEqual(
      domains(n)
        .map((d) => `credentials:${d}`)
        .sort(),
    );
    for (const s of summaries) expect(s.streams.some((r) => r.status === 'done')).toBe(true);
    const keys = credentialKeys();
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.sort()).toEqual(expectedCredentials(n));
  }, 60_000);
});

describe('no stream starves', () => {
  it('with a budget shorter than a sweep, every one of 50 streams is polled within ceil(sweep / budget) + 1 runs', async () => {
    const n = 50;
    const world = await makeWorld(emu, db, config(n), { governed: true });
    const ids = domains(n).map((d) => `credentials:${d}`);
    const firstVisit = new Map<string, number>();
    const perRun: number[] = [];
    let run = 0;
    while (firstVisit.size < n && run < 20) {
      run += 1;
      // Budget of about 1.5 s: polling gets half, at 40 searches a second some 25 streams a run.
      const summary = await world.cycle('credentials', 1.5);
      // Polled: it read at least a page (a stream whose turn came too late keeps its place).
      const done = summary.streams.filter((s) => s.pages > 0);
      perRun.push(done.length);
      for (const s of done) if (!firstVisit.has(s.stream)) firstVisit.set(s.stream, run);
    }
    expect(firstVisit.size, `streams visited per run: ${perRun.join(', ')}`).toBe(n);
    const sweepRuns = Math.ceil(n / Math.min(...perRun.slice(0, -1).filter((k) => k > 0)));
    expect(Math.max(...ids.map((id) => firstVisit.get(id) ?? Number.POSITIVE_INFINITY))).toBeLessThanOrEqual(
      sweepRuns + 1,
    );
    // The next run starts with the stream that waited longest.
    const before = await world.runtime.streams.lastPolled(ids);
    const oldest = ids.reduce((a, b) => ((before.get(a)?.at ?? '') <= (before.get(b)?.at ?? '') ? a : b));
    const again = await world.cycle('credentials', 1.5);
    expect(again.streams[0]?.stream).toBe(oldest);
    const keys = credentialKeys();
    expect(new Set(keys).size).toBe(keys.length);
  }, 120_000);
});

describe('the quota', () => {
  it('below the reserve credential polling pauses without a search, with one warning; it resumes once a probe finds the quota back', async () => {
    const clock = fakeClock();
    const world = await makeWorld(emu, db, config(4), { governed: true, clock });
    emulator().setQuotaRemaining(10_000);
    await world.cycle('credentials');
    expect(credentialKeys().length).toBeGreaterThan(0);
    hook.requests.length = 0;

    emulator().setQuotaRemaining(60); // read on the next search
    emulator().dataset.appendCredentials(3, { domain: 'acme.test' });
    await world.cycle('credentials'); // reads 60, below 100: stops before the next stream
    emulator().control.clearLog();
    const paused = await world.cycle('credentials');
    expect(paused.streams.every((s) => s.status === 'paused')).toBe(true);
    expect(emulator().control.calls('globalCredentials')).toHaveLength(0);
    expect(world.logs.filter((l) => l.includes('credential polling is paused')).length).toBeGreaterThan(0);
    expect(world.metrics.totals.get('GlobalSearchQuotaRemaining')).toBeLessThan(100);

    // The month turns; an hour later a cycle spends one page to read the quota, then goes on.
    emulator().setQuotaRemaining(10_000);
    clock.advance(3_600_000);
    const probe = await world.cycle('credentials');
    expect(probe.streams.filter((s) => s.status !== 'paused')).toHaveLength(1);
    const resumed = await world.cycle('credentials');
    expect(resumed.streams.some((s) => s.status === 'paused')).toBe(false);
    // Nothing lost while paused, nothing sent twice.
    const keys = credentialKeys();
    expect(new Set(keys).size).toBe(keys.length);
    const all = new Set(keys);
    for (const c of emulator().dataset.credentials.slice(-3)) expect(all.has(c.id)).toBe(true);
  }, 60_000);
});
