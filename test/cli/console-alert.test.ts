/**
 * The terminal's alert (the `console` destination, what `npm start` prints) names the event the
 * way `events ignore` takes it: the uid, and for an item of a `tenants` entry `<tenant>:<uid>`.
 * Through the real CLI in a process of its own, against the emulator and dynalite over HTTP.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { runCliProcess } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-console-'));
});

const sources = { tenantEvents: { lookback: 'P30D' } };
const uids = (slug: string) =>
  emu.running.emulator.dataset.tenant(slug).events.map((e) => e.item.metadata.uid);

async function poll(config: Record<string, unknown>, auth: Record<string, string>) {
  const file = join(dir, `${Object.keys(auth)[0]}.json`);
  await writeFile(
    file,
    JSON.stringify({
      destinations: { terminal: { type: 'console' } },
      routes: [{ name: 'all', to: ['terminal'] }],
      digest: { threshold: 1000, maxItems: 20 },
      upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
      ...config,
    }),
  );
  return runCliProcess(['poll', 'events', '--once'], {
    cwd: dir,
    env: {
      EXPOSURE_API_URL: emu.url,
      DYNAMODB_ENDPOINT: db.endpoint,
      TABLE_NAME: await db.table(),
      ALERTS_CONFIG: file,
      ...auth,
    },
  });
}

describe('the console alert', () => {
  it('shows each event’s uid, as events ignore takes it', async () => {
    const run = await poll({ sources }, { EXPOSURE_API_TOKEN: 'emu-acme-token' });
    expect(run.code, run.err).toBe(0);
    expect(uids('acme')).toHaveLength(3);
    for (const uid of uids('acme')) expect(run.out.split('\n')).toContain(`  uid ${uid}`);
  });

  it('for a tenants entry: <tenant>:<uid>, the key the CLI takes', async () => {
    const run = await poll(
      { tenants: [{ id: 1003, name: 'Initech', sources }] },
      { EXPOSURE_API_KEY: MSSP_API_KEY.key },
    );
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('[Initech]');
    for (const uid of uids('initech')) expect(run.out.split('\n')).toContain(`  uid 1003:${uid}`);
  });
});
