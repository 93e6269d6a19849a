/**
 * Every failure says exactly what is wrong, in one place: each config problem with its path, in
 * every command and at a Lambda cold start; the missing secret by name; a refused token as one
 * line and exit 3; a failed DynamoDB request by service, operation and status. Through the real
 * CLI, against the emulator and dynalite over HTTP.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { runCli } from '../../lib/cli/run.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator();
const db = useDynalite();
let dir: string;
let table: string;

const oneProblem = {
  sources: { tenantEvents: { enabled: true } },
  destinations: { soc: { type: 'slack', url: { secret: 'socSlackWebhook' } } },
  routes: [{ name: 'all', match: { colour: 'red' }, to: ['soc'] }],
};
const valid = { ...oneProblem, routes: [{ name: 'all', match: {}, to: ['soc'] }] };

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-errors-'));
  table = await db.table();
});

function env(extra: Record<string, string> = {}) {
  return {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: table,
    ...extra,
  };
}

describe('a config with one problem names it, in every command', () => {
  it.each([
    [['poll', 'events', '--once']],
    [['poll', 'credentials', '--once']],
    [['deliver', '--once']],
    [['deliveries', 'list']],
    [['destinations', 'test']],
    [['preview', join(import.meta.dirname, '../fixtures/event.json')]],
  ])('%j exits 2 and prints the problem with its path', async (argv) => {
    const io = captureIo(env({ ALERTS_CONFIG: await file('one.json', oneProblem) }));
    expect(await runCli(argv, io)).toBe(2);
    expect(io.err).toMatch(
      /one\.json is invalid \(1 problem\):\n {2}routes\[0\]\.match\.colour: unknown key\n$/,
    );
  });

  it('the Lambda cold start fails with the problem in its error and its log line', async () => {
    const path = await file('lambda.json', oneProblem);
    const saved = { ...process.env };
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    Object.assign(process.env, env({ ALERTS_CONFIG: path, LOG_LEVEL: 'error' }));
    try {
      await expect(createWorkerHandler('events')).rejects.toThrow(/routes\[0\]\.match\.colour: unknown key/);
    } finally {
      spy.mockRestore();
      process.env = saved;
    }
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.level === 'error');
    expect(logged.message).toContain('routes[0].match.colour: unknown key');
    expect(logged.problems).toEqual(['routes[0].match.colour: unknown key']);
  });

  it('a missing destination secret is named with its destination', async () => {
    const secrets = await file('secrets.json', { apiToken: 'emu-acme-token' });
    const io = captureIo(env({ ALERTS_CONFIG: await file('valid.json', valid), SECRETS_FILE: secrets }));
    expect(await runCli(['destinations', 'test'], io)).toBe(2);
    expect(io.err).toContain(
      'a destination secret is missing:\n  destinations.soc.url: secret "socSlackWebhook"',
    );
  });
});

describe('one line on stderr', () => {
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    hook = await startReceiver();
    return () => hook.close();
  });
  afterEach(() => emu.running.emulator.control.clearFaults());

  const webhookConfig = () => ({
    sources: { tenantEvents: { enabled: true }, credentials: { domains: ['acme.test'] } },
    destinations: { siem: { type: 'webhook', url: hook.url } },
    routes: [{ name: 'all', to: ['siem'] }],
  });

  it.each([
    [['poll', 'events', '--once']],
    [['poll', 'credentials', '--once']],
    [['assets', 'toggle', '10011', '--disable']],
    [['token', 'test']],
  ])('%j with a refused token exits 3 with exactly one line', async (argv) => {
    const io = captureIo(
      env({
        EXPOSURE_API_TOKEN: 'not-a-real-token',
        ALERTS_CONFIG: await file('hook.json', webhookConfig()),
      }),
    );
    expect(await runCli(argv, io)).toBe(3);
    expect(io.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(io.err).toMatch(/^exposure-alerts: .*rejected the credentials/);
    expect(io.err).not.toContain('not-a-real-token');
  });

  it('the JSON log lines come back with LOG_LEVEL', async () => {
    const io = captureIo(
      env({
        EXPOSURE_API_TOKEN: 'not-a-real-token',
        ALERTS_CONFIG: await file('hook.json', webhookConfig()),
        LOG_LEVEL: 'debug',
      }),
    );
    expect(await runCli(['poll', 'events', '--once'], io)).toBe(3);
    expect(io.err.split('\n').some((l) => l.startsWith('{') && l.includes('"level":"error"'))).toBe(true);
  });

  it('a DynamoDB answer the SDK cannot read names the service, the request and the status', async () => {
    const broken = await startReceiver();
    broken.fallback = { status: 500, body: 'oops' };
    try {
      const io = captureIo(
        env({ DYNAMODB_ENDPOINT: broken.url, ALERTS_CONFIG: await file('hook.json', webhookConfig()) }),
      );
      expect(await runCli(['deliveries', 'list'], io)).toBe(1);
      expect(io.err.split('\n').filter(Boolean)).toHaveLength(1);
      expect(io.err).toMatch(/^exposure-alerts: DynamoDB DescribeTable failed: \w+ \(HTTP 500\)/);
    } finally {
      await broken.close();
    }
  }, 30_000);
});
