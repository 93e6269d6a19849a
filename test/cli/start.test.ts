/**
 * `npm start` (the `start` command) on a fresh folder: it prints where everything is, shows demo
 * alerts in the terminal within seconds, answers on its HTTP API, and stops cleanly on Ctrl-C.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
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
    controller.abort();
    expect(await done).toBe(0);
    expect(existsSync(join(dir, '.data', 'dynamodb'))).toBe(true);
    await expect(fetch(`${api}/health`)).rejects.toThrow();
  }, 60_000);
});
