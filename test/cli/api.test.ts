/**
 * `assets toggle` and `serve` through the real CLI runner, against a real emulator and dynalite:
 * output, exit codes, the emulator's state, and the audit trail the API also reads.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { runCli } from '../../lib/cli/run.ts';
import { DynamoAuditStore } from '../../lib/state/audit.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator();
const dynamo = useDynalite();
let table: string;
let ids: number[];

beforeAll(async () => {
  table = await dynamo.table();
  ids = [...emu.running.emulator.dataset.tenant('acme').assets.keys()];
});

beforeEach(() => {
  emu.running.emulator.control.clearLog();
  emu.running.emulator.control.clearFaults();
});

function env(extra: Record<string, string> = {}) {
  return {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    TABLE_NAME: table,
    LOG_LEVEL: 'error',
    ...extra,
  };
}

const isDisabled = (id: number) => emu.running.emulator.dataset.tenant('acme').assets.get(id)?.is_disabled;

describe('assets toggle', () => {
  it('disables then enables an asset, prints it as JSON, and leaves an audit trail', async () => {
    const id = ids[0] as number;
    const off = captureIo(env());
    expect(await runCli(['assets', 'toggle', String(id), '--disable', '--json'], off)).toBe(0);
    expect(JSON.parse(off.out)).toMatchObject({ id, is_disabled: true });
    expect(isDisabled(id)).toBe(true);

    // Without --json, one line that says what happened.
    const on = captureIo(env());
    expect(await runCli(['assets', 'toggle', String(id), '--enable'], on)).toBe(0);
    expect(on.out).toMatch(new RegExp(`^asset ${id} \\(.+\\) is now enabled: monitored\\n$`));
    expect(isDisabled(id)).toBe(false);

    const trail = await new DynamoAuditStore(dynamo.client, table).list(id);
    expect(trail).toMatchObject([
      { requestedDisabled: false, outcome: 'ok', status: 200, isDisabled: false },
      { requestedDisabled: true, outcome: 'ok', status: 200, isDisabled: true },
    ]);
    for (const entry of trail) expect(entry.client).toMatch(/^cli(:.+)?$/);
  });

  it.each([
    [['assets', 'toggle', '10011'], /exactly one of --disable or --enable/],
    [['assets', 'toggle', '10011', '--disable', '--enable'], /exactly one of --disable or --enable/],
    [['assets', 'toggle', 'abc', '--disable'], /asset_id must be a positive whole number/],
    [['assets', 'toggle', '0', '--enable'], /asset_id/],
    [['assets', 'toggle', '--disable'], /usage: exposure-alerts assets toggle/],
    [['assets', 'toggle', '1', '2', '--disable'], /usage: exposure-alerts assets toggle/],
    [['assets', 'toggle', '1', '--off'], /off/],
  ])('%j exits 2 with one line and never calls the upstream', async (argv, message) => {
    const io = captureIo(env());
    expect(await runCli(argv, io)).toBe(2);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err).toMatch(message);
    expect(emu.running.emulator.control.requests).toEqual([]);
  });

  it('an upstream that refuses the credentials exits 3', async () => {
    const io = captureIo(env({ EXPOSURE_API_TOKEN: 'revoked-upstream-token' }));
    expect(await runCli(['assets', 'toggle', String(ids[0]), '--disable'], io)).toBe(3);
    expect(io.err).toMatch(/rejected the credentials/);
    expect(io.err).not.toContain('revoked-upstream-token');
    expect(isDisabled(ids[0] as number)).toBe(false);
  });

  it('an unknown asset exits 1 with one line, and is audited as not_found', async () => {
    const io = captureIo(env());
    expect(await runCli(['assets', 'toggle', '987654', '--disable'], io)).toBe(1);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err).toMatch(/not_found/);
    expect(await new DynamoAuditStore(dynamo.client, table).list(987654)).toMatchObject([
      { outcome: 'not_found', status: 404 },
    ]);
  });

  it('a rate-limited upstream exits 1 at once, saying so', async () => {
    emu.running.emulator.control.addFault({ endpoint: 'assetToggle', status: 429, retryAfter: 30 });
    const io = captureIo(env());
    const started = Date.now();
    expect(await runCli(['assets', 'toggle', String(ids[1]), '--disable'], io)).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(io.err).toMatch(/rate_limited/);
  });
});

describe('serve', () => {
  it('serves the API on PORT, prints its URL, and stops on the signal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-serve-'));
    const token = randomBytes(24).toString('base64url');
    const secrets = join(dir, 'secrets.json');
    await writeFile(secrets, JSON.stringify({ apiClients: { runbook: sha256Hex(token) } }));
    const io = captureIo(env({ PORT: '0', SECRETS_FILE: secrets }));
    const controller = new AbortController();
    const done = runCli(['serve'], io, controller.signal);
    for (let i = 0; i < 100 && !io.out.includes('listening'); i++)
      await new Promise((r) => setTimeout(r, 50));
    const url = /listening on (\S+)/.exec(io.out)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
    const refused = await fetch(`${url}/assets/${ids[2]}/toggle`, {
      method: 'POST',
      body: '{"is_disabled":true}',
    });
    expect(refused.status).toBe(401);
    const id = ids[2] as number;
    const res = await fetch(`${url}/assets/${id}/toggle`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{"is_disabled":true}',
    });
    expect(res.status).toBe(200);
    expect(isDisabled(id)).toBe(true);
    // Over a real socket, a body larger than the limit is refused without being read whole.
    const big = await fetch(`${url}/assets/${id}/toggle`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ is_disabled: false, pad: 'x'.repeat(1024 * 1024) }),
    });
    expect(big.status).toBe(413);

    controller.abort();
    expect(await done).toBe(0);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    expect(io.out).not.toContain(token);
    expect(io.err).not.toContain(token);
  });

  it('a port in use exits 1 naming it', async () => {
    const { listen } = await import('../../lib/http-server.ts');
    const taken = await listen(() => new Response('x'));
    try {
      const io = captureIo(env({ PORT: String(taken.port) }));
      expect(await runCli(['serve'], io)).toBe(1);
      expect(io.err).toMatch(new RegExp(`port ${taken.port} .*already in use`));
    } finally {
      await taken.close();
    }
  });
});
