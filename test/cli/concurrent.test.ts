/**
 * Three `poll credentials --once` processes started together, through the real CLI, against a
 * rate-limited emulator and dynalite over HTTP: together they keep within both rate tiers, split
 * the streams between them, and send every credential once.
 *
 * The rate is measured where the product decides it: each process notes the moment it hands each
 * upstream request to fetch (a preload), and every sliding second of the three processes' sends
 * together must hold at most the tier's limit. The emulator's own count is not the measure here:
 * it runs in this test's process, and on a loaded machine its event loop can read a request's
 * arrival 100 to 250 ms late (measured), which crowds requests the product spaced right into one
 * second and draws a 429 the product did not earn. A 429 it gives anyway must cost nothing: every
 * run still ends 0 and every credential is sent once.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const BASIC = 20;
const SEARCH = 5;
const emu = useEmulator({
  eventsPerTenant: 5,
  credentials: 100,
  rateLimits: { basicPerSecond: BASIC, searchPerSecond: SEARCH },
});
// dynalite in a process of its own: its work for three writers would otherwise hold up the
// emulator's answers on this process's event loop.
const db = useDynalite({ ownProcess: true });
const SENDS = resolve(import.meta.dirname, '../helpers/sends.mjs');
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());

const run = (env: Record<string, string>) =>
  runCliProcess(['poll', 'credentials', '--once'], { env, node: ['--import', SENDS] });

/** The most of `times` (ms) in any sliding second (t - 1 s, t]. */
function maxPerSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (const [i, t] of sorted.entries()) {
    while ((sorted[first] as number) <= t - 1000) first++;
    most = Math.max(most, i - first + 1);
  }
  return most;
}

describe('poll credentials --once, three processes at once', () => {
  it('keep within the shared rate, split the streams, and send every credential once', async () => {
    const domains = [
      'acme.test',
      'example.com',
      'globex.test',
      ...Array.from({ length: 9 }, (_, i) => `d${i}.example.net`),
    ];
    const dir = await mkdtemp(join(tmpdir(), 'ea-concurrent-'));
    const config = join(dir, 'alerts.config.json');
    await writeFile(
      config,
      JSON.stringify({
        sources: { credentials: { domains, lookback: 'P60D' } },
        destinations: { siem: { type: 'webhook', url: hook.url } },
        routes: [{ name: 'all', to: ['siem'] }],
        upstream: { requestsPerSecond: BASIC, searchRequestsPerSecond: SEARCH },
      }),
    );
    const sends = join(dir, 'sends.log');
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: config,
      EA_TEST_SENDS_FILE: sends,
    };
    emu.running.emulator.control.resetRateStats();
    const runs = await Promise.all([run(env), run(env), run(env)]);
    for (const r of runs) expect(r.code, r.err).toBe(0);
    // Every request the three sent, in both tiers (a global search counts in both).
    const sent = (await readFile(sends, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .filter(([, , url]) => url?.startsWith(emu.url));
    const search = sent.filter(([, , url]) =>
      /\/credentials\/global\/_search|\/v2\/search\//.test(url ?? ''),
    );
    expect(search.length).toBeGreaterThanOrEqual(domains.length);
    expect(maxPerSecond(sent.map(([at]) => Number(at)))).toBeLessThanOrEqual(BASIC);
    expect(maxPerSecond(search.map(([at]) => Number(at)))).toBeLessThanOrEqual(SEARCH);
    // The emulator agrees on what it saw: no tier let more through than its limit.
    const stats = emu.running.emulator.control.rateStats();
    expect(stats.organizations.length).toBeGreaterThan(0);
    for (const org of stats.organizations) {
      expect(org.basic.maxAdmittedPerWindow).toBeLessThanOrEqual(BASIC);
      expect(org.search.maxAdmittedPerWindow).toBeLessThanOrEqual(SEARCH);
    }
    // Every stream polled ("done"), the work split between the processes, and a stream polled
    // twice only when one process began its cycle after another had polled it (the processes
    // start up to a second apart; a run skips what was polled since it began, not before).
    const polled = runs.flatMap((r) =>
      [...r.out.matchAll(/^ {2}(credentials:\S+): done/gm)].map((m) => m[1]),
    );
    expect(new Set(polled)).toEqual(new Set(domains.map((d) => `credentials:${d}`)));
    expect(runs.filter((r) => /: done/.test(r.out)).length).toBeGreaterThan(1);
    expect(polled.length).toBeLessThan(2 * domains.length);
    const keys = hook.requests.flatMap((r) =>
      (r.json() as { items: { id: number }[] }).items.map((i) => i.id),
    );
    expect(new Set(keys).size).toBe(keys.length);
    const expected = emu.running.emulator.dataset.credentials
      .filter((c) => domains.some((d) => c.domain === d || c.domain.endsWith(`.${d}`)))
      .map((c) => c.id);
    expect(keys.sort()).toEqual(expected.sort());
  }, 60_000);
});
