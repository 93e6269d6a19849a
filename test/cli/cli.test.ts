/** The CLI skeleton: exit codes and one clear line per failure, against a real emulator. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator();

describe('exposure-alerts CLI', () => {
  it('token test prints the tenant, user and scopes', async () => {
    const io = captureIo({ EXPOSURE_API_URL: emu.url, EXPOSURE_API_TOKEN: 'emu-acme-token' });
    expect(await runCli(['token', 'test'], io)).toBe(0);
    expect(io.out).toMatch(/tenant:\s+1001/);
    expect(io.out).toMatch(/analyst@acme\.test/);
    expect(io.out).toMatch(/scopes:.*events:read/);
  });

  it('token test with a wrong token exits 3 with one line and no stack', async () => {
    const io = captureIo({ EXPOSURE_API_URL: emu.url, EXPOSURE_API_TOKEN: 'wrong-token-value' });
    expect(await runCli(['token', 'test'], io)).toBe(3);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.err).toMatch(/rejected the credentials/);
    expect(io.err).not.toContain('wrong-token-value');
  });

  it('token test with an API key works through the exchange', async () => {
    const io = captureIo({ EXPOSURE_API_URL: emu.url, EXPOSURE_API_KEY: 'emu-globex-key' });
    expect(await runCli(['token', 'test', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out).tenant_id).toBe(1002);
  });

  it('reads the token from SECRETS_FILE', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'ea-'));
    const file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ apiToken: 'emu-initech-token' }));
    const io = captureIo({ EXPOSURE_API_URL: emu.url, SECRETS_FILE: file });
    expect(await runCli(['token', 'test', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out).tenant_id).toBe(1003);
  });

  it('without credentials exits 2 naming what to set', async () => {
    const io = captureIo({ EXPOSURE_API_URL: emu.url });
    expect(await runCli(['token', 'test'], io)).toBe(2);
    expect(io.err).toMatch(/EXPOSURE_API_TOKEN/);
  });

  it('an unreachable upstream exits 1', async () => {
    const io = captureIo({ EXPOSURE_API_URL: 'http://127.0.0.1:9', EXPOSURE_API_TOKEN: 't0ken' });
    expect(await runCli(['token', 'test'], io)).toBe(1);
    // Retries are logged as JSON lines; the failure itself is one plain line, without a stack.
    const plain = io.err
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{'));
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/^exposure-alerts: upstream upstream_unavailable: tokenTest: network error/);
    expect(io.err).not.toMatch(/\s+at /);
  });

  it('a bad variable exits 2 naming it', async () => {
    const io = captureIo({ EXPOSURE_API_URL: 'ftp://x', EXPOSURE_API_TOKEN: 't0ken' });
    expect(await runCli(['token', 'test'], io)).toBe(2);
    expect(io.err).toMatch(/EXPOSURE_API_URL/);
  });

  it('unknown commands and options exit 2', async () => {
    const a = captureIo();
    expect(await runCli(['frobnicate'], a)).toBe(2);
    expect(a.err).toMatch(/unknown command/);
    const b = captureIo();
    expect(await runCli(['token', 'test', '--colour'], b)).toBe(2);
    expect(b.err).toMatch(/colour/);
  });

  it('emulator prints its URL and a demo token, and stops on the signal', async () => {
    const io = captureIo();
    const controller = new AbortController();
    const done = runCli(['emulator', '--port', '0', '--seed', '5', '--groups', '30'], io, controller.signal);
    for (let i = 0; i < 50 && !io.out.includes('EXPOSURE_API_TOKEN'); i++)
      await new Promise((r) => setTimeout(r, 50));
    const url = /EXPOSURE_API_URL=(\S+)/.exec(io.out)?.[1];
    const token = /EXPOSURE_API_TOKEN=(\S+)/.exec(io.out)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/tokens/test`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    // --groups 30: the thirtieth identifier group of the first tenant answers (ids 100001 on).
    const group = await fetch(`${url}/firework/v4/events/identifier_groups/100030/_search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(group.status).toBe(200);
    controller.abort();
    expect(await done).toBe(0);
    const bad = captureIo();
    expect(await runCli(['emulator', '--groups', '10001'], bad)).toBe(2);
    expect(bad.err).toMatch(/--groups must be at most 10000/);
  });
});
