/**
 * A CLI run on a host whose clock is ten minutes fast (a preload moves its `Date`), then a run on
 * time, through the real CLI against dynalite and the emulator over HTTP: the run on time polls
 * every stream and gets its turns (docs/architecture.md#leases, on clocks). Before, the fast run's
 * lease expiries, `lastPolledAt` and governor slots lay ten minutes in the real future, and the
 * run on time skipped every stream, or was refused every turn, with exit 0.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 8, credentials: 5 });
const db = useDynalite();
const SKEW = resolve(import.meta.dirname, '../helpers/skew.mjs');
let config: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ea-clock-'));
  config = join(dir, 'alerts.config.json');
  await writeFile(
    config,
    JSON.stringify({
      sources: {
        tenantEvents: { lookback: 'P30D' },
        identifierGroups: [
          { id: 101, name: 'Executives', lookback: 'P30D' },
          { id: 102, name: 'Infrastructure', lookback: 'P30D' },
        ],
      },
      destinations: { local: { type: 'console' } },
      routes: [{ name: 'all', to: ['local'] }],
    }),
  );
});

/** The real CLI in its own process, its clock `skewMs` off. */
function fastCli(argv: string[], env: Record<string, string>, skewMs: number) {
  return runCliProcess(argv, {
    env: { ...env, EA_TEST_CLOCK_SKEW_MS: String(skewMs), LOG_LEVEL: 'warn', NO_COLOR: '1' },
    node: ['--import', SKEW],
  });
}

/**
 * The real CLI on time, in this process (runCli): only the fast run needs a process of its own,
 * for its moved clock. Integration files share their workers, so the product's modules are loaded
 * here already.
 */
async function onTime(argv: string[], env: Record<string, string>) {
  const io = captureIo({ ...env });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('a CLI run ten minutes fast, then one on time', () => {
  it('poll events: the run on time polls every stream, none skipped', async () => {
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: config,
    };
    const fast = await fastCli(['poll', 'events', '--once'], env, 600_000);
    expect(fast.code, fast.err).toBe(0);
    // The fast run says what it found, once, and corrected for it: ten minutes, give or take what a
    // Date header's one-second resolution and a slow answer on a loaded machine hide.
    const said = /clock is (\d+) min (\d+) s ahead of DynamoDB's/.exec(fast.err);
    expect(said, fast.err).not.toBeNull();
    const seconds = Number(said?.[1]) * 60 + Number(said?.[2]);
    expect(Math.abs(seconds - 600), fast.err).toBeLessThanOrEqual(3);
    // Three streams due again, as after any run.
    const later = await onTime(['poll', 'events', '--once'], env);
    expect(later.code, later.err).toBe(0);
    expect(later.out + later.err).not.toMatch(/skipped|rate.limited/);
  });

  it('assets toggle from the fast host, then a poll on time: it gets its turns', async () => {
    const env = {
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: 'emu-acme-token',
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: config,
    };
    const fast = await fastCli(['assets', 'toggle', '10011', '--disable'], env, 600_000);
    expect(fast.code, fast.err).toBe(0);
    const asked = Date.now();
    const later = await onTime(['poll', 'events', '--once', '--max-seconds', '20'], env);
    expect(later.code, later.err).toBe(0);
    expect(later.out + later.err).not.toMatch(/skipped|rate.limited|budget/);
    expect(Date.now() - asked).toBeLessThan(15_000);
  });
});
