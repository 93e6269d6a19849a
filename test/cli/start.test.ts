/**
 * `npm start` (the `start` command) on a fresh folder: it prints where everything is, shows demo
 * alerts in the terminal within seconds, answers on its HTTP API, and stops cleanly on Ctrl-C.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { startEmulator } from '../../lib/emulator/index.ts';
import { startHeartbeat } from '../helpers/heartbeat.ts';
import { captureIo } from '../helpers/io.ts';

const home = process.cwd();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-start-'));
  process.chdir(dir); // `.data/` and `alerts.config.json` are looked up here
});
afterAll(() => process.chdir(home));

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe('start', () => {
  it('runs everything locally, shows demo alerts, serves the API and stops cleanly', async () => {
    const io = captureIo({ PORT: '0', LOG_LEVEL: 'warn' });
    const controller = new AbortController();
    const done = runCli(['start'], io, controller.signal);
    expect(await until(() => io.out.includes('Ctrl-C stops it'), 15_000)).toBe(true);
    expect(io.out).toMatch(/DynamoDB \(dynalite\):\s+http:\/\/127\.0\.0\.1:\d+, data in \.data\/dynamodb/);
    expect(io.out).toMatch(/Upstream \(emulator\):\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(io.out).toMatch(/Alert config:\s+built-in demo config/);
    // The first cycles run at once: a digest of events and one of leaked logins.
    expect(
      await until(() => /\[DIGEST\] \d+ events/.test(io.out) && /leaked logins/.test(io.out), 20_000),
    ).toBe(true);
    expect(io.out).not.toMatch(/emu-acme-token/);
    const api = /HTTP API:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(io.out)?.[1];
    const token = /Bearer (local-[0-9a-f]+)/.exec(io.out)?.[1];
    expect((await fetch(`${api}/health`)).status).toBe(200);
    const audit = await fetch(`${api}/assets/10011/audit`, { headers: { Authorization: `Bearer ${token}` } });
    expect(audit.status).toBe(200);
    // The console's URL, and its token may do what the console offers but disable accounts.
    expect(io.out).toContain(`Console:              ${api}/console`);
    const who = (await (
      await fetch(`${api}/whoami`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as {
      grants: { scopes: string[] }[];
    };
    const scopes = who.grants.flatMap((g) => g.scopes);
    expect(scopes).toEqual(
      expect.arrayContaining(['read', 'events:act', 'silences:write', 'destinations:write', 'identity:act']),
    );
    expect(scopes).not.toContain('identity:disable');
    // The demo alerts the first cycles sent are listed.
    const alerts = (await (
      await fetch(`${api}/alerts`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as {
      items: unknown[];
    };
    expect(alerts.items.length).toBeGreaterThan(0);
    controller.abort();
    expect(await done).toBe(0);
    expect(existsSync(join(dir, '.data', 'dynamodb'))).toBe(true);
    await expect(fetch(`${api}/health`)).rejects.toThrow();
  }, 60_000);
});

describe('start, done right', () => {
  // Each test on a fresh folder: `.data/` is what a restart resumes from.
  beforeEach(async () => {
    process.chdir(await mkdtemp(join(tmpdir(), 'ea-start-')));
  });
  const begin = (env: Record<string, string> = {}) => {
    const io = captureIo({ PORT: '0', LOG_LEVEL: 'debug', ...env });
    const controller = new AbortController();
    const done = runCli(['start'], io, controller.signal);
    return { io, done, stop: () => controller.abort() };
  };

  it('a restart resumes quietly: no refused cursor, no other run, nothing sent twice', async () => {
    const first = begin();
    expect(
      await until(() => /leaked logins/.test(first.io.out) && /\[DIGEST\]/.test(first.io.out), 20_000),
    ).toBe(true);
    // Let both cycles finish their delivery before stopping.
    await until(() => (first.io.out.match(/cycle:/g) ?? []).length >= 2, 10_000);
    // What was sent is said once, by the delivery pass, never under a cycle whose items it may not be.
    expect(first.io.out).toMatch(/delivery pass:/);
    for (const block of first.io.out.split(/(?=poll \w+ cycle:|delivery pass:)/))
      if (/ sent in \d+ message/.test(block)) expect(block.startsWith('delivery pass:'), block).toBe(true);
    first.stop();
    expect(await first.done).toBe(0);
    expect(first.io.out).not.toContain('another run is delivering');

    const second = begin();
    expect(await until(() => (second.io.out.match(/poll \w+ cycle:/g) ?? []).length >= 2, 20_000)).toBe(true);
    second.stop();
    expect(await second.done).toBe(0);
    expect(second.io.out).not.toContain('refused the saved cursor');
    expect(second.io.out).not.toContain('another run is delivering');
    // What the first run showed is not shown again.
    expect(second.io.out).not.toMatch(/\[DIGEST\]/);
    expect(second.io.out).not.toMatch(/leaked logins/);
  }, 60_000);

  it('a second start while one runs says who holds .data/ and exits 1', async () => {
    const first = begin();
    expect(await until(() => first.io.out.includes('Ctrl-C stops it'), 15_000)).toBe(true);
    const second = begin();
    expect(await second.done).toBe(1);
    expect(second.io.err).toContain(
      `exposure-alerts: another exposure-alerts start (pid ${process.pid}) holds .data/ in ${process.cwd()}: stop it first`,
    );
    first.stop();
    expect(await first.done).toBe(0);
  }, 60_000);

  it('a busy port gives the hint serve gives', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = begin({ PORT: String(port) });
      expect(await run.done).toBe(1);
      expect(run.io.err).toContain(`port ${port} on 127.0.0.1 is already in use; set PORT to another port`);
    } finally {
      taken.close();
    }
  }, 60_000);

  it('with a heartbeat: each kind pings its start and success once a cycle, not once a worker', async () => {
    const beat = await startHeartbeat();
    try {
      await writeFile(
        'alerts.config.json',
        JSON.stringify({
          sources: { tenantEvents: { lookback: 'P7D' }, identifierGroups: [{ id: 101 }, { id: 102 }] },
          destinations: { terminal: { type: 'console' } },
          routes: [{ name: 'all', to: ['terminal'] }],
          heartbeat: { events: beat.url, style: 'healthchecks' },
        }),
      );
      const run = begin({ LOG_LEVEL: 'warn' });
      expect(await until(() => beat.pings.some((p) => p.kind === 'success'), 30_000)).toBe(true);
      run.stop();
      expect(await run.done).toBe(0);
      expect(beat.pings.map((p) => p.kind)).toEqual(['start', 'success']);
    } finally {
      await beat.close();
    }
  }, 60_000);

  it('a refused upstream token exits 3 with one line, instead of failing every cycle', async () => {
    const upstream = await startEmulator({ seed: 3 });
    try {
      const run = begin({
        EXPOSURE_API_URL: upstream.url,
        EXPOSURE_API_TOKEN: 'wrong-token',
        LOG_LEVEL: 'info',
      });
      expect(await run.done).toBe(3);
      expect(run.io.err.split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(/^exposure-alerts: the upstream rejected the credentials/),
      ]);
      expect(run.io.err).not.toContain('wrong-token');
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
