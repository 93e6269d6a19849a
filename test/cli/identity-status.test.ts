/**
 * `status` and GET /status with identity providers (docs/cli.md and docs/identity.md): each provider
 * of the catalog (the top level's, then each tenant's), its last lookup, and whether it refuses our
 * credentials, since when and with what answer; read with one Query of the `idp` partition, and
 * without any Query more when the config has no provider. Through dynalite, the real CLI (runCli
 * in this process), and the API app.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { systemClock } from '../../lib/clock.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { type Catalog, CatalogStore } from '../../lib/state/catalog.ts';
import { SilenceStore } from '../../lib/state/silences.ts';
import { StatusReader } from '../../lib/state/status.ts';
import { buildApi } from '../api/harness.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { captureIo } from '../helpers/io.ts';

const db = useDynalite();
const emu = useEmulator({ eventsPerTenant: 1, credentials: 1 });

const catalog = (identity?: Catalog['identity']): Omit<Catalog, 'writtenAt'> => ({
  streams: ['credentials:acme.com', 'credentials:7:globex.com'],
  destinations: ['soc'],
  configSilences: [],
  followUps: [],
  tenants: [{ id: 7, name: 'Globex' }],
  ...(identity ? { identity } : {}),
});

const REFUSAL =
  'Entra ID corp token answered HTTP 401 invalid_client: check tenantId, clientId and the client secret';
let table: string;
let bare: string;
const lookedAt = new Date(Date.now() - 5 * 60_000);
const refusedAt = new Date(Date.now() - 2 * 3_600_000);

beforeAll(async () => {
  table = await db.table();
  const io = { client: db.client, tableName: table, clock: systemClock };
  await new CatalogStore(io).write(
    catalog([
      { scope: 'top', provider: 'shop', type: 'okta' },
      { scope: 7, provider: 'corp', type: 'entra' },
    ]),
  );
  const store = new IdentityStore(io);
  await store.looked('top', 'shop', lookedAt);
  await store.looked(7, 'corp', lookedAt);
  await store.markRefused(7, 'corp', refusedAt, REFUSAL);
  // A provider no longer in the config: its state stays in the table, status does not list it.
  await store.looked('top', 'gone', lookedAt);
  bare = await db.table();
  await new CatalogStore({ ...io, tableName: bare }).write(catalog());
});

const reader = (name: string) => {
  const { client, requests } = countingClient(db.endpoint);
  const io = { client, tableName: name, clock: systemClock };
  return { status: new StatusReader(io, new SilenceStore(io)), requests, close: () => client.destroy() };
};

const expected = [
  {
    tenant: null,
    provider: 'shop',
    type: 'okta',
    lastLookupAt: lookedAt.toISOString(),
    refusing: false,
  },
  {
    tenant: { id: 7, name: 'Globex' },
    provider: 'corp',
    type: 'entra',
    lastLookupAt: lookedAt.toISOString(),
    refusing: true,
    refusedAt: refusedAt.toISOString(),
    refusedMessage: REFUSAL,
  },
];

describe('the status read', () => {
  it("lists the catalog's providers in order with their state, in one Query of the idp partition more", async () => {
    const r = reader(table);
    const status = await r.status.read();
    expect(status.identityProviders).toEqual(expected);
    expect(r.requests.filter((q) => q.pk === 'idp')).toEqual([{ action: 'Query', pk: 'idp' }]);
    r.close();
  });

  it('without providers in the catalog: no identityProviders key, and no Query of idp', async () => {
    const r = reader(bare);
    const status = await r.status.read();
    expect(status).not.toHaveProperty('identityProviders');
    expect(r.requests.some((q) => q.pk === 'idp')).toBe(false);
    r.close();
  });
});

async function cli(argv: string[], env: Record<string, string>) {
  const io = captureIo(env);
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('status through its doors', () => {
  const env = () => ({ DYNAMODB_ENDPOINT: db.endpoint, TABLE_NAME: table, AWS_REGION: 'eu-west-1' });

  it('the CLI prints each provider: scope, name, type, last lookup, refusing since when, and the answer', async () => {
    const r = await cli(['status'], { ...env(), COLUMNS: '160' });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    const at = lines.indexOf('identity providers:');
    expect(at).toBeGreaterThan(-1);
    expect(lines[at + 1]).toMatch(/^\s*SCOPE\s+PROVIDER\s+TYPE\s+LAST LOOKUP\s+REFUSING\s*$/);
    expect(lines[at + 2]).toMatch(/^\s*top level\s+shop\s+Okta\s+5 min ago\s+no\s*$/);
    expect(lines[at + 3]).toMatch(/^\s*Globex \(7\)\s+corp\s+Entra ID\s+5 min ago\s+yes, since 2 h ago\s*$/);
    expect(lines[at + 4]).toBe(
      `  corp (tenant 7) refuses our credentials: ${REFUSAL}; check them with exposure-alerts identity test corp --tenant 7`,
    );
    expect(r.out).not.toContain('gone');
  });

  it('status --json and GET /status carry identityProviders', async () => {
    const r = await cli(['status', '--json'], env());
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { identityProviders: unknown }).identityProviders).toEqual(expected);
    const api = buildApi(emu, { table: { client: db.client, name: table } });
    const res = await api.app.request('/status', {
      headers: { Authorization: `Bearer ${api.tokens.runbook}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { identityProviders: unknown }).identityProviders).toEqual(expected);
  });
});
