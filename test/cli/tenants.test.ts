/**
 * Many tenants from one deployment, through the real CLI against the emulator and dynalite over
 * HTTP and real webhook receivers. The emulator's MSSP key acts for Globex (1002) and Initech
 * (1003) and is refused for Umbrella (1004), three tenants of one organization:
 * - two tenants routed to their own destinations, no alert crossing to the other's, each message
 *   naming its tenant;
 * - the same event uid found for both alerting each of them once;
 * - Umbrella refused (reported once to ops) while the other two are delivered in the same run,
 *   exit 0; exit 3 only when every tenant is refused;
 * - a static token may only act for its own tenant: a config naming others is refused (exit 2);
 * - the top-level sources' tenant listed again in `tenants` is refused at start, by `poll --once`
 *   and by `npm start` (exit 2, one line naming both): each of its items would alert twice;
 * - an upgrade in place: the top-level streams continue from their cursors and keep their keys,
 *   the new tenants start with their first run, nothing is re-sent and nothing lost.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { MSSP_API_KEY } from '../../lib/emulator/dataset.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator({ eventsPerTenant: 15, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let globexHook: Receiver;
let initechHook: Receiver;
let opsHook: Receiver;
let legacyHook: Receiver;
let dir: string;

beforeAll(async () => {
  [globexHook, initechHook, opsHook, legacyHook] = await Promise.all([
    startReceiver(),
    startReceiver(),
    startReceiver(),
    startReceiver(),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'ea-tenants-'));
});
afterAll(() => Promise.all([globexHook, initechHook, opsHook, legacyHook].map((r) => r.close())));

const tenant = (id: number, name: string) => ({
  id,
  name,
  sources: { tenantEvents: { lookback: 'P30D' } },
});

interface Body {
  kind: string;
  tenant?: { id: number; name: string };
  items: { metadata: { uid: string } }[];
  title?: string;
}
const bodies = (r: Receiver) => r.requests.map((q) => q.json() as Body);
const uidsOf = (r: Receiver) => bodies(r).flatMap((b) => b.items.map((i) => i.metadata.uid));
const feed = (slug: string) =>
  emu.running.emulator.dataset.tenant(slug).events.map((e) => e.item.metadata.uid);

async function cli(config: Record<string, unknown>, auth: Record<string, string>, table: string) {
  const path = join(dir, `${table}.json`);
  await writeFile(
    path,
    JSON.stringify({
      digest: { threshold: 1000, maxItems: 20 },
      upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
      ...config,
    }),
  );
  const io = captureIo({
    EXPOSURE_API_URL: emu.url,
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: table,
    ALERTS_CONFIG: path,
    ...auth,
  });
  const code = await runCli(['poll', 'events', '--once'], io);
  return { code, out: io.out, err: io.err };
}

const mssp = { EXPOSURE_API_KEY: MSSP_API_KEY.key };
const twoTenants = {
  tenants: [tenant(1002, 'Globex'), tenant(1003, 'Initech')],
  destinations: {
    globexSoc: { type: 'webhook', url: '' },
    initechSoc: { type: 'webhook', url: '' },
  },
  routes: [
    { name: 'globex', match: { tenants: ['Globex'] }, to: ['globexSoc'] },
    { name: 'initech', match: { tenants: [1003] }, to: ['initechSoc'] },
  ],
};
const withUrls = (config: typeof twoTenants) => ({
  ...config,
  destinations: {
    globexSoc: { type: 'webhook', url: globexHook.url },
    initechSoc: { type: 'webhook', url: initechHook.url },
  },
});

describe('many tenants', () => {
  it('two tenants, each to its own destination, none crossing; the same uid alerts each once', async () => {
    const [shared] = emu.running.emulator.dataset.appendSharedEvents([1002, 1003], 1);
    const sharedUid = shared?.item.metadata.uid as string;
    const table = await db.table();
    const run = await cli(withUrls(twoTenants), mssp, table);
    expect(run.code).toBe(0);
    expect([...uidsOf(globexHook)].sort()).toEqual([...feed('globex')].sort());
    expect([...uidsOf(initechHook)].sort()).toEqual([...feed('initech')].sort());
    // Each body is one tenant's, and says so.
    for (const b of bodies(globexHook)) expect(b.tenant).toEqual({ id: 1002, name: 'Globex' });
    for (const b of bodies(initechHook)) expect(b.tenant).toEqual({ id: 1003, name: 'Initech' });
    expect(uidsOf(globexHook).filter((u) => u === sharedUid)).toHaveLength(1);
    expect(uidsOf(initechHook).filter((u) => u === sharedUid)).toHaveLength(1);
    // Its records are two: one key per tenant.
    const list = captureIo({ DYNAMODB_ENDPOINT: db.endpoint, TABLE_NAME: table });
    expect(await runCli(['deliveries', 'list', '--status', 'sent', '--json'], list)).toBe(0);
    const keys = (JSON.parse(list.out) as { key: string }[]).map((r) => r.key);
    expect(keys).toContain(`1002:${sharedUid}`);
    expect(keys).toContain(`1003:${sharedUid}`);
    // A second run sends nothing again.
    const before = globexHook.requests.length + initechHook.requests.length;
    expect((await cli(withUrls(twoTenants), mssp, table)).code).toBe(0);
    expect(globexHook.requests.length + initechHook.requests.length).toBe(before);
  });

  it('a tenant the key may not act for is skipped and reported once; the others are delivered (exit 0)', async () => {
    globexHook.requests.length = 0;
    initechHook.requests.length = 0;
    opsHook.requests.length = 0;
    const config = {
      ...withUrls(twoTenants),
      // Umbrella first: its refusal must not stop the streams after it.
      tenants: [tenant(1004, 'Umbrella'), ...twoTenants.tenants],
      destinations: { ...withUrls(twoTenants).destinations, ops: { type: 'webhook', url: opsHook.url } },
      ops: { to: ['ops'] },
    };
    const table = await db.table();
    const first = await cli(config, mssp, table);
    expect(first.code).toBe(0);
    expect(uidsOf(globexHook).length).toBe(feed('globex').length);
    expect(uidsOf(initechHook).length).toBe(feed('initech').length);
    expect(first.err + first.out).toMatch(/tenant:1004/);
    const notices = bodies(opsHook).filter((b) => b.kind === 'notice');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.title).toContain('tenant 1004 (Umbrella)');
    // Refused again on the next run: not reported again.
    expect((await cli(config, mssp, table)).code).toBe(0);
    expect(bodies(opsHook).filter((b) => b.kind === 'notice')).toHaveLength(1);
  });

  it('exit 3 only when every tenant is refused', async () => {
    const config = {
      tenants: [tenant(1004, 'Umbrella')],
      destinations: { siem: { type: 'webhook', url: legacyHook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
    };
    expect((await cli(config, mssp, await db.table())).code).toBe(3);
  });

  it('a static token may act only for its own tenant: naming another is refused before any poll (exit 2)', async () => {
    const run = await cli(withUrls(twoTenants), { EXPOSURE_API_TOKEN: 'emu-globex-token' }, await db.table());
    expect(run.code).toBe(2);
    expect(run.err).toContain('tenants: a static token');
    expect(run.err).toContain('1003 (Initech)');
    expect(run.err).not.toContain('emu-globex-token');
  });

  it('an upgrade in place: the old streams continue from their cursors, the new tenant starts, nothing re-sent or lost', async () => {
    legacyHook.requests.length = 0;
    const table = await db.table();
    const legacy = {
      sources: { tenantEvents: { lookback: 'P30D' } },
      destinations: { siem: { type: 'webhook', url: legacyHook.url } },
      routes: [{ name: 'all', to: ['siem'] }],
    };
    const globex = { EXPOSURE_API_KEY: 'emu-globex-key' };
    expect((await cli(legacy, globex, table)).code).toBe(0);
    const before = uidsOf(legacyHook);
    expect([...before].sort()).toEqual([...feed('globex')].sort());
    // New events while the upgrade is deployed: the old stream finds them from its cursor.
    const added = emu.running.emulator.dataset.appendEvents(1002, 2).map((e) => e.item.metadata.uid);
    const upgraded = { ...legacy, tenants: [tenant(1003, 'Initech')] };
    const run = await cli(upgraded, mssp, table);
    expect(run.code).toBe(0);
    const after = uidsOf(legacyHook).slice(before.length);
    // The old stream: only what is new; the new tenant: its whole first walk (the uid shared
    // with Globex included: it is Initech's alert too).
    expect([...after].sort()).toEqual([...added, ...feed('initech')].sort());
    const list = captureIo({ DYNAMODB_ENDPOINT: db.endpoint, TABLE_NAME: table });
    expect(await runCli(['deliveries', 'list', '--status', 'sent', '--json'], list)).toBe(0);
    const keys = (JSON.parse(list.out) as { key: string }[]).map((r) => r.key);
    for (const uid of feed('globex')) expect(keys).toContain(uid);
    for (const uid of feed('initech')) expect(keys).toContain(`1003:${uid}`);
  });
});

describe('the top-level tenant listed again in tenants', () => {
  const topLevel = { sources: { tenantEvents: { lookback: 'P30D' } } };
  const twin = (entry: number, id: number, name: string, whose: string) =>
    `exposure-alerts: tenants[${entry}] (${name}, ${id}) is also the tenant the top-level sources poll (the tenant ${whose}): each of its items would alert twice; remove the top-level "sources", or that tenants entry\n`;

  it('poll --once refuses it before anything is polled, in one line naming both and what to change (exit 2)', async () => {
    globexHook.requests.length = 0;
    initechHook.requests.length = 0;
    const both = { ...withUrls(twoTenants), ...topLevel };
    // The MSSP key acts for Globex by default: the top level is Globex, and so is tenants[0].
    const run = await cli(both, mssp, await db.table());
    expect(run.code).toBe(2);
    expect(run.err).toBe(twin(0, 1002, 'Globex', 'the API key acts for by default'));
    // EXPOSURE_TENANT_ID makes the top level Initech, tenants[1].
    const named = await cli(both, { ...mssp, EXPOSURE_TENANT_ID: '1003' }, await db.table());
    expect(named.code).toBe(2);
    expect(named.err).toBe(twin(1, 1003, 'Initech', 'EXPOSURE_TENANT_ID names'));
    // A static token's own tenant, listed: the same refusal.
    const one = (entry: ReturnType<typeof tenant>) => ({
      ...both,
      tenants: [entry],
      routes: [{ name: 'all', to: ['globexSoc', 'initechSoc'] }],
    });
    const token = await cli(
      one(tenant(1002, 'Globex')),
      { EXPOSURE_API_TOKEN: 'emu-globex-token' },
      await db.table(),
    );
    expect(token.code).toBe(2);
    expect(token.err).toBe(twin(0, 1002, 'Globex', 'the static token acts for'));
    expect(globexHook.requests.length + initechHook.requests.length).toBe(0);
    // Without that entry, the same top level runs.
    const fixed = await cli(one(tenant(1003, 'Initech')), mssp, await db.table());
    expect(fixed.code, fixed.err).toBe(0);
  });

  it('npm start stops at start with that line (exit 2)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'ea-twin-'));
    await writeFile(
      join(folder, 'alerts.config.json'),
      JSON.stringify({
        ...topLevel,
        tenants: twoTenants.tenants,
        destinations: { local: { type: 'console' } },
        routes: [{ name: 'all', to: ['local'] }],
      }),
    );
    // Its own emulator, with the MSSP key since the config has tenants: Globex by default. In this
    // process, from that folder (where start finds its config and `.data/`).
    const home = process.cwd();
    process.chdir(folder);
    const io = captureIo({ PORT: '0' });
    const code = await runCli(['start'], io).finally(() => process.chdir(home));
    expect(code).toBe(2);
    expect(io.err).toBe(twin(0, 1002, 'Globex', 'the API key acts for by default'));
  });
});
