/**
 * The poller Lambda's handler (functions/poller.ts): a cycle that failed must fail the invocation,
 * or the function's error alarm and dead-letter queue never hear of it; a refused token says so;
 * a good cycle resolves with its summary. The real runtime, against the emulator and dynalite over
 * HTTP, a real local receiver as the destination.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPollerHandler } from '../../functions/poller.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, useReceivers } from '../helpers/receiver.ts';

const emu = useEmulator();
const db = useDynalite();
const receiver = useReceivers();
let dir: string;
/** process.env as this file found it. */
const before = { ...process.env };

/** What the Lambda runtime passes; only the remaining time is read. */
const context = { getRemainingTimeInMillis: () => 30_000 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-poller-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => emu.running.emulator.control.clearFaults());

/**
 * Runs `body` with `vars` in process.env (read at the cold start, and left in place for the
 * invocations, as in a Lambda), then puts process.env back exactly: added keys deleted, changed
 * ones restored, on the same object (assigning a copy would replace Node's string-coercing env).
 * Log and metric lines are kept out of the test output while it runs.
 */
async function withEnvironment<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  const quiet = [
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
  ];
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const spy of quiet) spy.mockRestore();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/** A fresh table and a config sending every tenant event to a local webhook, which is returned too. */
async function environment(
  token = 'emu-acme-token',
): Promise<{ vars: Record<string, string>; hook: Receiver }> {
  const hook = await receiver({ status: 200, body: 'ok' });
  const config = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(
    config,
    JSON.stringify({
      sources: { tenantEvents: { enabled: true } },
      destinations: { siem: { type: 'webhook', url: hook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
    }),
  );
  const vars = {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: token,
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: await db.table(),
    ALERTS_CONFIG: config,
    LOG_LEVEL: 'error',
  };
  return { vars, hook };
}

describe('createPollerHandler', () => {
  it('a successful cycle resolves with its summary', async () => {
    const { vars, hook } = await environment();
    const summary = await withEnvironment(vars, async () => {
      const handler = await createPollerHandler('events');
      return handler({}, context);
    });
    expect(summary).toMatchObject({ kind: 'events', exitCode: 0 });
    expect(summary.streams).toEqual([expect.objectContaining({ stream: 'tenant', status: 'done' })]);
    expect(summary.streams[0]?.error).toBeUndefined();
    // The seeded emulator has events newer than the first run's baseline: they were sent, and
    // the summary counts exactly what the receiver got.
    expect(summary.streams[0]?.newItems).toBeGreaterThan(0);
    expect(summary.delivery.sent).toBe(summary.streams[0]?.newItems);
    const received = hook.requests.reduce((n, r) => n + (r.json() as { items: unknown[] }).items.length, 0);
    expect(received).toBe(summary.delivery.sent);
    expect(summary.delivery.destinations).toEqual([
      expect.objectContaining({ destination: 'siem', status: 'done', dead: 0, retrying: 0 }),
    ]);
  }, 60_000);

  it('a cycle whose upstream keeps failing rejects, naming the failure, and the next invocation recovers', async () => {
    await withEnvironment((await environment()).vars, async () => {
      const handler = await createPollerHandler('events');
      // More 500s than the client has retries: the stream fails, not just one request.
      emu.running.emulator.control.addFault({ endpoint: 'tenantEvents', status: 500, times: 50 });
      await expect(handler({}, context)).rejects.toThrow(/^poll events failed: tenantEvents: HTTP 500/);
      // The same warm container, the upstream healthy again: a failure poisons nothing.
      emu.running.emulator.control.clearFaults();
      await expect(handler({}, context)).resolves.toMatchObject({ kind: 'events', exitCode: 0 });
    });
  }, 60_000);

  it('credentials the upstream refuses (exit code 3) reject with a message saying so, without the token', async () => {
    const token = 'not-a-real-token-7f3a';
    const error = await withEnvironment((await environment(token)).vars, async () => {
      const handler = await createPollerHandler('events');
      return handler({}, context).then(
        () => undefined,
        (e: unknown) => e,
      );
    });
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^the upstream rejected the credentials: /);
    expect((error as Error).message).not.toContain(token);
  }, 60_000);

  it('process.env is exactly as it was before these tests', () => {
    // withEnvironment's promise: nothing the handlers were given is left for the next test file.
    expect({ ...process.env }).toEqual(before);
  });
});
