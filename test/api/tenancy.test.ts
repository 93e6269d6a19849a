/**
 * Clients bound to tenants, and roles (docs/api.md): how a client's `role`, `tenants` and
 * `topLevel` are read (a reserved name, or a binding to no tenant of the config, refuses that one
 * client and no other), and what a bound client gets from the routes that read or act on tenant
 * data: its grant in `GET /whoami`, its tenants' streams in `GET /status`, its silences made,
 * listed, ended and counted within its tenants, only its alerts, a 404 for another tenant's key or
 * name, its toggles' audit, and a 403 for what every tenant shares. The real app, real dynalite,
 * the real emulator; alerts recorded as a tenant's stream records them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readApiClients, resolveBinding, sha256Hex } from '../../lib/api/auth.ts';
import type { AssetToggler } from '../../lib/api/toggle.ts';
import { runCli } from '../../lib/cli/run.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';
import {
  type ApiUnderTest,
  acmeAssetIds,
  bearer,
  buildApi,
  JSON_TYPE,
  newToken,
  recordAlert as recordAlertIn,
} from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 2, lateMatchesPerTenant: 0, credentials: 2 });
const db = useDynalite();

const TENANTS = [
  { id: 1002, name: 'Globex' },
  { id: 1003, name: 'Initech' },
];
const tokens = {
  globex: newToken(),
  both: newToken(),
  top: newToken(),
  admin: newToken(),
  nowhere: newToken(),
  empty: newToken(),
};
const clients = {
  globex: {
    digest: sha256Hex(tokens.globex),
    role: 'responder',
    scopes: ['assets:write'],
    tenants: ['Globex'],
  },
  both: { digest: sha256Hex(tokens.both), role: 'responder', tenants: [1002], topLevel: true },
  top: { digest: sha256Hex(tokens.top), scopes: ['read'], topLevel: true },
  admin: { digest: sha256Hex(tokens.admin), role: 'admin' },
  nowhere: { digest: sha256Hex(tokens.nowhere), role: 'viewer', tenants: ['Hooli'] },
  empty: { digest: sha256Hex(tokens.empty), role: 'viewer', tenants: [] },
};

let api: ApiUnderTest;
let table: string;
const toggled: number[] = [];

/** An alert as a stream of `tenant` (undefined: the top level) records it, with its index entry. */
async function recordAlert(tenant: number | undefined, uid: string): Promise<string> {
  await recordAlertIn({ client: db.client, name: table }, uid, tenant);
  return tenant === undefined ? uid : `${tenant}:${uid}`;
}

const keys: Record<string, string> = {};

beforeAll(async () => {
  table = await db.table();
  // A recording stand-in of the tenants' own clients: a bound client's refused toggle must reach none.
  const upstreamFor = (tenant: number): AssetToggler => ({
    toggleAsset: async (...args) => {
      toggled.push(tenant);
      return emu.client().toggleAsset(...args);
    },
  });
  api = buildApi(emu, {
    table: { client: db.client, name: table },
    clients: clients as never,
    console: { tenants: async () => TENANTS },
  });
  api.deps.upstreamFor = upstreamFor;
  keys.globex = await recordAlert(1002, 'paste/globex/1');
  keys.initech = await recordAlert(1003, 'paste/initech/1');
  keys.top = await recordAlert(undefined, 'paste/top/1');
});

afterAll(() => {
  expect(api.logger.lines.join('\n')).not.toContain(clients.nowhere.digest);
});

const get = (path: string, token: string) => api.app.request(path, { headers: bearer(token) });
const send = (method: string, path: string, token: string, body?: unknown) =>
  api.app.request(path, {
    method,
    headers: { ...bearer(token), ...JSON_TYPE },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('reading apiClients', () => {
  it('a role is its scopes; tenants and topLevel are kept; a reserved name is refused alone', () => {
    const digest = sha256Hex('x');
    const { clients: read, refused } = readApiClients({
      viewer: { digest, role: 'viewer' },
      mixed: { digest, role: 'viewer', scopes: ['lookup'], tenants: ['Globex', 1003], topLevel: true },
      'sso:jane@acme.test': digest,
      auto: { digest, role: 'admin' },
      ok: digest,
      Auto: digest,
    });
    expect(read.viewer).toEqual({ digest, scopes: ['read'] });
    expect(read.mixed).toEqual({
      digest,
      scopes: ['lookup', 'read'],
      tenants: ['Globex', 1003],
      topLevel: true,
    });
    expect(Object.keys(read).sort()).toEqual(['Auto', 'mixed', 'ok', 'viewer']);
    expect(refused.map((r) => r.name)).toEqual(['sso:jane@acme.test', 'auto']);
    expect(refused.map((r) => r.why).join(' ')).not.toContain(digest);
  });

  it('names what is wrong with an entry: a role, neither role nor scopes, a binding of the wrong type', () => {
    const digest = sha256Hex('x');
    expect(() => readApiClients({ a: { digest, role: 'root' } })).toThrow(
      /apiClients\.a\.role: "root" is not a role/,
    );
    expect(() => readApiClients({ a: { digest } })).toThrow(/apiClients\.a: give "role"/);
    expect(() => readApiClients({ a: { digest, role: 'viewer', tenants: 'Globex' } })).toThrow(
      /apiClients\.a\.tenants: expected a list/,
    );
    expect(() => readApiClients({ a: { digest, role: 'viewer', topLevel: 'yes' } })).toThrow(
      /apiClients\.a\.topLevel: expected true or false/,
    );
  });

  it('resolves names to ids; a binding to no tenant of the config, or to nothing, refuses its client', () => {
    expect(
      resolveBinding('a', { digest: 'd', scopes: ['read'], tenants: ['globex', 1003] }, TENANTS),
    ).toEqual({
      binding: { tenants: new Set([1002, 1003]), topLevel: false },
    });
    expect(
      resolveBinding('a', { digest: 'd', scopes: ['read'], tenants: ['Hooli'] }, TENANTS).refused,
    ).toMatch(
      /apiClients\.a\.tenants: "Hooli" is no tenant of the alert config \(its tenants: Globex, Initech\)/,
    );
    expect(resolveBinding('a', { digest: 'd', scopes: ['read'], tenants: [] }, TENANTS).refused).toMatch(
      /bound to no data/,
    );
    expect(
      resolveBinding('a', { digest: 'd', scopes: ['read'], tenants: [], topLevel: true }, TENANTS),
    ).toEqual({
      binding: { tenants: new Set(), topLevel: true },
    });
    expect(resolveBinding('a', { digest: 'd', scopes: ['read'] }, TENANTS)).toEqual({});
  });
});

describe('through the app', () => {
  it('a refused binding is 401 for that client alone, with a warning naming it and never its digest', async () => {
    expect((await get('/whoami', tokens.nowhere)).status).toBe(401);
    expect((await get('/whoami', tokens.empty)).status).toBe(401);
    expect((await get('/whoami', tokens.globex)).status).toBe(200);
    const warnings = api.logger.lines.filter((l) => l.includes('"level":"warn"'));
    expect(warnings.some((w) => w.includes('API client \\"nowhere\\" refused') && w.includes('Hooli'))).toBe(
      true,
    );
    expect(warnings.some((w) => w.includes('API client \\"empty\\" refused'))).toBe(true);
  });

  it('GET /whoami carries the grant: scopes, and the tenants and top level it holds on', async () => {
    expect(await (await get('/whoami', tokens.globex)).json()).toEqual({
      name: 'globex',
      grants: [
        {
          scopes: ['assets:write', 'silences:write', 'events:act', 'lookup', 'read', 'identity:act'],
          tenants: [1002],
        },
      ],
    });
    expect(await (await get('/whoami', tokens.both)).json()).toMatchObject({
      grants: [{ tenants: [1002], topLevel: true }],
    });
    const admin = (await (await get('/whoami', tokens.admin)).json()) as { grants: { scopes: string[] }[] };
    expect(admin.grants).toHaveLength(1);
    expect(admin.grants[0]).not.toHaveProperty('tenants');
    expect(admin.grants[0]?.scopes).toContain('identity:disable');
  });

  it('lists only its tenants’ alerts; another tenant’s key is the same 404 as a key that does not exist', async () => {
    const listed = async (token: string) =>
      ((await (await get('/alerts', token)).json()) as { items: { key: string }[] }).items
        .map((i) => i.key)
        .sort();
    expect(await listed(tokens.globex)).toEqual([keys.globex]);
    expect(await listed(tokens.top)).toEqual([keys.top]);
    expect(await listed(tokens.both)).toEqual([keys.globex, keys.top].sort());
    expect(await listed(tokens.admin)).toEqual([keys.globex, keys.initech, keys.top].sort());

    const other = await get(`/alerts/${encodeURIComponent(keys.initech as string)}`, tokens.globex);
    const none = await get(`/alerts/${encodeURIComponent('1003:paste/initech/none')}`, tokens.globex);
    expect(other.status).toBe(404);
    expect(none.status).toBe(404);
    const message = (r: unknown) => (r as { error: { message: string } }).error.message;
    expect(message(await other.json()).replace(/"[^"]*"/, '…')).toBe(
      message(await none.json()).replace(/"[^"]*"/, '…'),
    );
    expect((await get(`/alerts/${encodeURIComponent(keys.globex as string)}`, tokens.globex)).status).toBe(
      200,
    );
  });

  it('?tenant= of another tenant is 404, naming none of the config’s other tenants', async () => {
    for (const tenant of ['Initech', '1003', 'Hooli']) {
      const res = await get(`/alerts?tenant=${tenant}`, tokens.globex);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toMatch(/Initech|1003/i.test(tenant) ? /Globex/ : /Initech/);
    }
    expect((await get('/alerts?tenant=Globex', tokens.globex)).status).toBe(200);
  });

  it('a silence is made within its tenants; one naming another tenant is 404; bound to both, it must choose', async () => {
    const made = await send('POST', '/silences', tokens.globex, {
      match: { types: ['leak'] },
      until: 'PT1H',
      reason: 'tenancy test',
    });
    expect(made.status).toBe(201);
    const { silence } = (await made.json()) as { silence: { id: string; match: unknown } };
    expect(silence.match).toEqual({ types: ['leak'], tenants: [1002] });

    for (const match of [{ tenants: ['Initech'] }, { sources: ['tenant:1003'] }, { topLevel: true }]) {
      const res = await send('POST', '/silences', tokens.globex, { match, until: 'PT1H', reason: 'x' });
      expect(res.status, JSON.stringify(match)).toBe(404);
    }
    const empty = await send('POST', '/silences', tokens.globex, {
      match: { tenants: [] },
      until: 'PT1H',
      reason: 'x',
    });
    // A subset of its tenants, the empty one too (section 14): kept, and its maker can end it.
    expect(empty.status).toBe(201);
    const hollow = (await empty.json()) as { silence: { id: string; match: unknown } };
    expect(hollow.silence.match).toEqual({ tenants: [] });
    // Listed to its maker, not to another bound client (its reason is its maker's words).
    const listedTo = async (token: string) => JSON.stringify(await (await get('/silences', token)).json());
    expect(await listedTo(tokens.globex)).toContain(hollow.silence.id);
    expect(await listedTo(tokens.both)).not.toContain(hollow.silence.id);
    expect((await send('DELETE', `/silences/${hollow.silence.id}`, tokens.both)).status).toBe(404);
    expect((await send('DELETE', `/silences/${hollow.silence.id}`, tokens.globex)).status).toBe(200);
    const unsure = await send('POST', '/silences', tokens.both, {
      match: { types: ['leak'] },
      until: 'PT1H',
      reason: 'x',
    });
    expect(unsure.status).toBe(400);
    expect(await unsure.text()).toMatch(/match\.tenants or match\.topLevel: true/);
    const top = await send('POST', '/silences', tokens.both, {
      match: { topLevel: true },
      until: 'PT1H',
      reason: 'tenancy test',
    });
    expect(top.status).toBe(201);

    // The admin's silence of Initech: listed to the admin, neither listed to nor ended by globex.
    const initech = (await (
      await send('POST', '/silences', tokens.admin, {
        match: { tenants: [1003] },
        until: 'PT1H',
        reason: 'x',
      })
    ).json()) as { silence: { id: string } };
    const ids = async (token: string) =>
      ((await (await get('/silences', token)).json()) as { items: { id: string }[] }).items.map((s) => s.id);
    expect(await ids(tokens.globex)).toEqual([silence.id]);
    expect(await ids(tokens.admin)).toContain(initech.silence.id);
    expect((await send('DELETE', `/silences/${initech.silence.id}`, tokens.globex)).status).toBe(404);
    expect(await ids(tokens.admin)).toContain(initech.silence.id);
    expect((await send('DELETE', `/silences/${silence.id}`, tokens.globex)).status).toBe(200);
    expect(await ids(tokens.globex)).toEqual([]);
  });

  it('a silence’s dry run counts only its alerts', async () => {
    const count = async (token: string) =>
      (await (await send('POST', '/silences?dryRun=true', token, { match: { types: ['leak'] } })).json()) as {
        wouldHold: number;
        of: number;
      };
    expect(await count(tokens.globex)).toEqual({ wouldHold: 1, of: 1 });
    expect(await count(tokens.admin)).toEqual({ wouldHold: 3, of: 3 });
  });

  it('GET /status: its tenants’ streams only, and no count that mixes tenants', async () => {
    const status = (await (await get('/status', tokens.globex)).json()) as Record<string, unknown>;
    expect(Object.keys(status).sort()).toEqual(['streams']);
    const admin = (await (await get('/status', tokens.admin)).json()) as Record<string, unknown>;
    expect(admin).toHaveProperty('destinations');
    expect(admin).toHaveProperty('silences');
  });

  it('test messages and re-queueing are for unbound clients only: 403', async () => {
    const admin = newToken();
    const boundAdmin = { digest: sha256Hex(admin), role: 'admin', tenants: ['Globex'] };
    const scoped = buildApi(emu, {
      table: { client: db.client, name: table },
      clients: { boundAdmin } as never,
      console: { tenants: async () => TENANTS },
    });
    const test = await scoped.app.request('/destinations/hook/test', {
      method: 'POST',
      headers: bearer(admin),
    });
    expect(test.status).toBe(403);
    expect(await test.text()).toMatch(/bound to tenants/);
    const retry = await scoped.app.request('/deliveries/retry', {
      method: 'POST',
      headers: { ...bearer(admin), ...JSON_TYPE },
      body: JSON.stringify({ ids: ['x'] }),
    });
    expect(retry.status).toBe(403);
  });

  it('a toggle runs as one of its tenants, never another (404, no upstream called); its asset audit shows toggles within its tenants', async () => {
    const [asset] = acmeAssetIds(emu);
    toggled.length = 0;
    const other = await send('POST', `/assets/${asset}/toggle?tenant=Initech`, tokens.globex, {
      is_disabled: true,
    });
    expect(other.status).toBe(404);
    expect(toggled).toEqual([]);
    const unbound = await send('POST', `/assets/${asset}/toggle`, tokens.admin, { is_disabled: false });
    expect(unbound.status).toBe(200);
    expect(toggled).toEqual([]);
    const mine = await send('POST', `/assets/${asset}/toggle`, tokens.globex, { is_disabled: false });
    expect(mine.status).toBe(200);
    expect(toggled).toEqual([1002]);
    const audit = async (token: string) =>
      (
        (await (await get(`/assets/${asset}/audit`, token)).json()) as {
          items: { client: string; tenant?: unknown }[];
        }
      ).items;
    expect((await audit(tokens.globex)).map((e) => [e.client, e.tenant])).toEqual([['globex', 1002]]);
    expect((await audit(tokens.admin)).map((e) => e.client).sort()).toEqual(['admin', 'globex']);
  });

  it('GET /audit: a bound client sees its own doings and entries within its tenants, never another client’s elsewhere', async () => {
    const lines = async (token: string) =>
      ((await (await get('/audit', token)).json()) as { items: { who: string; target: string }[] }).items;
    const globex = await lines(tokens.globex);
    expect(globex.length).toBeGreaterThan(0);
    // So far the admin's doings were on Initech's silence and the top level's asset: none shown.
    expect(globex.every((l) => l.who === 'globex')).toBe(true);
    expect((await lines(tokens.admin)).map((l) => l.who)).toEqual(
      expect.arrayContaining(['admin', 'globex']),
    );
    // The admin's silence of Globex's alerts is about Globex: shown to its client.
    const made = await send('POST', '/silences', tokens.admin, {
      match: { tenants: ['globex'] },
      until: 'PT1H',
      reason: 'for globex',
    });
    const { silence } = (await made.json()) as { silence: { id: string } };
    const after = await lines(tokens.globex);
    expect(after.filter((l) => l.who === 'admin').map((l) => l.target)).toEqual([silence.id]);
  });
});

describe('acting and looking up as a bound client', () => {
  const control = () => emu.running.emulator.control;

  beforeAll(() => {
    api.deps.credentialDomains = async () => ({
      tenants: [
        { id: 1002, name: 'Globex', domains: ['globex.test'] },
        { id: 1003, name: 'Initech', domains: ['initech.test'] },
      ],
      top: ['acme.test'],
    });
  });

  it('looks up only its tenants’ domains: anything else is 404 alone, not_found in a list, and reaches no upstream', async () => {
    control().clearLog();
    for (const query of [
      'domain=initech.test',
      'account=kim@initech.test',
      'keyword=kim*',
      'keyword=*@initech.test',
    ]) {
      const res = await get(`/lookup?${query}`, tokens.globex);
      expect(res.status, query).toBe(404);
      expect(await res.text(), query).not.toMatch(/Initech/);
    }
    // Another tenant named, or one that does not exist: the same answer but for the name sent back.
    const other = await get('/lookup?domain=globex.test&tenant=Initech', tokens.globex);
    const none = await get('/lookup?domain=globex.test&tenant=Hooli', tokens.globex);
    expect(other.status).toBe(404);
    expect((await other.text()).replace('Initech', 'Hooli')).toBe(await none.text());
    expect(control().calls()).toEqual([]);

    expect((await get('/lookup?domain=mail.globex.test', tokens.globex)).status).toBe(200);
    expect((await get('/lookup?keyword=*@globex.test', tokens.globex)).status).toBe(200);
    control().clearLog();
    const listed = await get('/lookup?account=ana@globex.test&account=kim@initech.test', tokens.globex);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { notFound: string[] }).notFound).toEqual(['kim@initech.test']);
    expect(
      JSON.stringify(
        control()
          .calls()
          .map((c) => c.input),
      ),
    ).not.toContain('initech');
  });

  it('acts on its tenants’ events only: another tenant’s key or an unknown uid is not_found, and the upstream never hears of it', async () => {
    control().clearLog();
    const res = await send('POST', '/events/actions', tokens.globex, {
      action: 'ignore',
      uids: [keys.initech, 'paste/initech/1', 'paste/nowhere/1', 'paste/globex/1'],
    });
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: { uid: string; ok: boolean; error?: string }[] };
    expect(results.slice(0, 3)).toEqual([
      { uid: keys.initech, ok: false, error: 'not_found' },
      { uid: 'paste/initech/1', ok: false, error: 'not_found' },
      { uid: 'paste/nowhere/1', ok: false, error: 'not_found' },
    ]);
    // The bare uid is the one Globex item of that uid: asked of the upstream by its key, answered by the uid sent.
    expect(results[3]?.uid).toBe('paste/globex/1');
    const asked = JSON.stringify(
      control()
        .calls('eventActions')
        .map((c) => c.input),
    );
    expect(asked).not.toContain('initech');
    expect(asked).not.toContain('nowhere');
  });
});

describe('config validate --secrets', () => {
  it('names a client bound to a tenant the config does not have, and a reserved name, never a digest', async () => {
    const dir = process.cwd();
    const configFile = join(dir, 'tenancy.config.json');
    const secretsFile = join(dir, 'tenancy.secrets.json');
    await writeFile(
      configFile,
      JSON.stringify({
        tenants: [{ id: 1002, name: 'Globex', sources: { tenantEvents: { enabled: true } } }],
        destinations: { hook: { type: 'webhook', url: 'https://hooks.example.test/x' } },
        routes: [{ name: 'all', to: ['hook'] }],
      }),
    );
    const digest = sha256Hex('tenancy-validate');
    await writeFile(
      secretsFile,
      JSON.stringify({
        apiToken: 'emu-acme-token',
        apiClients: {
          globex: { digest, role: 'viewer', tenants: ['Globex'] },
          hooli: { digest, role: 'viewer', tenants: ['Hooli'] },
          'slack:ana': { digest, role: 'viewer' },
        },
      }),
    );
    const io = captureIo({ SECRETS_FILE: secretsFile });
    expect(await runCli(['config', 'validate', configFile, '--secrets'], io)).toBe(2);
    expect(io.err).toContain(
      'apiClients.hooli.tenants: "Hooli" is no tenant of the alert config (its tenants: Globex)',
    );
    expect(io.err).toContain('apiClients.slack:ana: the name "slack:ana" is reserved');
    expect(io.err).not.toContain('apiClients.globex');
    expect(io.out + io.err).not.toContain(digest);
  });
});
