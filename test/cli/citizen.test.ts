/**
 * The terminal as a good citizen, through the real CLI against the emulator and dynalite over
 * HTTP: NO_COLOR honoured, a poll's streams shown as they finish, `npm start`'s cycle summary as
 * lines (no `\u000a`) with one line per destination, readable service logs, JSON errors by line
 * and column, and Teams URLs called what they are.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { createLogger } from '../../lib/log.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 12, credentials: 8 });
const db = useDynalite();
const ANSI = /\u001b\[/;
const home = process.cwd();
afterAll(() => process.chdir(home));

async function tty(argv: string[], env: Record<string, string>) {
  const io = Object.assign(captureIo({ ...env }), { isTTY: true });
  const stamps: { at: number; text: string }[] = [];
  const write = io.stdout;
  io.stdout = (text: string) => {
    stamps.push({ at: Date.now(), text });
    write(text);
  };
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err, stamps };
}

async function baseEnv(): Promise<Record<string, string>> {
  return {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: await db.table(),
    // No alerts.config.json here: the built-in demo config, a console destination.
    ALERTS_CONFIG: '',
  };
}

describe('the terminal', () => {
  it('poll --once on a terminal: colour, unless NO_COLOR is set', async () => {
    process.chdir(await mkdtemp(join(tmpdir(), 'ea-citizen-')));
    const coloured = await tty(['poll', 'events', '--once'], await baseEnv());
    expect(coloured.code, coloured.err).toBe(0);
    expect(coloured.out).toMatch(ANSI);
    const plain = await tty(['poll', 'events', '--once'], { ...(await baseEnv()), NO_COLOR: '1' });
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toContain('[DIGEST]');
    expect(plain.out).not.toMatch(ANSI);
  });

  it('poll --once prints each stream as it finishes, before the delivery that ends the cycle', async () => {
    const run = await tty(['poll', 'credentials', '--once'], { ...(await baseEnv()), NO_COLOR: '1' });
    expect(run.code, run.err).toBe(0);
    const lines = run.out.split('\n');
    const first = lines.findIndex((l) => /^ {2}credentials:acme\.test: done/.test(l));
    const delivery = lines.indexOf('delivery:');
    expect(first).toBeGreaterThan(0);
    expect(delivery).toBeGreaterThan(first);
    // Written as its own piece, before the alerts of the pass were.
    const streamAt = run.stamps.findIndex((s) => s.text.startsWith('  credentials:acme.test: done'));
    const deliveryAt = run.stamps.findIndex((s) => s.text.includes('delivery:'));
    expect(streamAt).toBeGreaterThan(0);
    // The pass's alerts (the console destination) come between: the stream line did not wait for them.
    expect(deliveryAt).toBeGreaterThan(streamAt + 1);
  });

  it('npm start on a terminal: the delivery pass in lines, one line per destination', async () => {
    process.chdir(await mkdtemp(join(tmpdir(), 'ea-citizen-start-')));
    const io = Object.assign(captureIo({ PORT: '0', NO_COLOR: '1' }), { isTTY: true });
    const controller = new AbortController();
    const done = runCli(['start'], io, controller.signal);
    const end = Date.now() + 20_000;
    while (Date.now() < end && !/delivery pass:\n/.test(io.out)) await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    expect(await done).toBe(0);
    expect(io.out).not.toContain('\\u000a');
    const block = /delivery pass:\n((?: {2}.*\n)+)/.exec(io.out)?.[1] ?? '';
    const destinations = block.split('\n').filter((l) => /^ {2}terminal: /.test(l));
    expect(destinations).toHaveLength(1);
    expect(io.out).not.toMatch(ANSI);
  }, 30_000);

  it('service logs on a terminal read as key=value, newlines in values escaped', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'pretty', write: (l) => lines.push(l), now: () => new Date(0) });
    log.info('request', { method: 'GET', path: '/health', status: 200, note: 'two\nlines' });
    expect(lines).toEqual(['00:00:00 INFO  request method=GET path=/health status=200 note="two\\nlines"']);
  });

  it('a config that is not JSON: line and column, not an offset; a retired Teams URL named for what it is', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-citizen-json-'));
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{\n  "destinations": {}\n  "routes": []\n}\n');
    const io = captureIo({});
    expect(await runCli(['config', 'validate', broken], io)).toBe(2);
    expect(io.err).toBe(
      `exposure-alerts: ${broken} is not valid JSON: line 3, column 3: Expected ',' or '}' after property value\n`,
    );
    const teams = join(dir, 'teams.json');
    await writeFile(
      teams,
      JSON.stringify({
        destinations: {
          t: { type: 'teams', url: 'https://prod-12.westeurope.logic.azure.com/workflows/abc/triggers' },
        },
        routes: [{ name: 'all', to: ['t'] }],
      }),
    );
    const warned = captureIo({});
    expect(await runCli(['config', 'validate', teams], warned)).toBe(0);
    expect(warned.err).toContain('a Workflows URL of the old form (logic.azure.com)');
    expect(warned.err).not.toContain('Office 365');
  });
});
