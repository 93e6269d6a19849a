/**
 * API scopes (docs/api.md): a client given as a bare digest may do everything; one given
 * as `{digest, scopes}` only what its scopes say. A request outside them is 403 `forbidden`, after
 * auth and before anything reads the request (its body is not even validated), and the refusal is
 * in the audit trail, in dynalite. The OpenAPI document names each operation's scope.
 */
import { describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { type ApiClients, parseApiClients, SCOPES, sha256Hex } from '../../lib/api/auth.ts';
import { DynamoRefusalAudit } from '../../lib/state/audit.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { acmeAssetIds, bearer, buildApi, JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator();
const db = useDynalite();

describe('apiClients with scopes', () => {
  it('takes a bare digest (every scope) or {digest, scopes}, and names what is wrong', () => {
    const digest = sha256Hex('t');
    expect(parseApiClients({ a: digest, b: { digest, scopes: ['read', 'lookup', 'read'] } })).toEqual({
      a: digest,
      b: { digest, scopes: ['lookup', 'read'] }, // once each, in the API's order
    });
    expect(() => parseApiClients({ b: { digest, scopes: ['admin'] } })).toThrow(
      /apiClients\.b\.scopes: "admin" is not a scope \(expected assets:write, silences:write, events:act, lookup, read, destinations:write, identity:act, identity:disable\)/,
    );
    expect(() => parseApiClients({ b: { digest, scope: ['read'] } })).toThrow(
      /apiClients\.b\.scope: unknown key/,
    );
    expect(() => parseApiClients({ b: { digest: 'x', scopes: [] } })).toThrow(
      /apiClients\.b\.digest: expected the SHA-256/,
    );
    expect(() => parseApiClients({ b: { digest } })).toThrow(
      /apiClients\.b: give "role" \(viewer, responder, admin\) or "scopes"/,
    );
  });
});

describe('a request outside its client scopes', () => {
  async function setUp() {
    const reader = newToken();
    const all = newToken();
    const clients: ApiClients = {
      dashboard: { digest: sha256Hex(reader), scopes: ['read'] },
      runbook: sha256Hex(all),
    };
    const table = await db.table();
    const refusals = new DynamoRefusalAudit(db.client, table);
    const base = buildApi(emu, { table: { client: db.client, name: table } });
    const app = createApiApp({ ...base.deps, loadApiClients: async () => clients, refusals });
    return { app, reader, all, refusals };
  }

  it('is 403 forbidden before its body is read, the upstream untouched, and audited', async () => {
    const { app, reader, refusals } = await setUp();
    const [id] = acmeAssetIds(emu);
    const before = emu.running.emulator.control.calls('assetToggle').length;
    // Not even valid: the scope is checked first.
    const res = await app.request(`/assets/${id}/toggle`, {
      method: 'POST',
      headers: { ...bearer(reader), ...JSON_TYPE },
      body: '{"is_disabled": "maybe"}',
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: {
        code: 'forbidden',
        message: 'the client "dashboard" does not have the scope assets:write this request needs',
      },
    });
    expect(emu.running.emulator.control.calls('assetToggle')).toHaveLength(before);
    const [refused] = await refusals.list();
    expect(refused).toMatchObject({
      client: 'dashboard',
      method: 'POST',
      path: `/assets/${id}/toggle`,
      scope: 'assets:write',
      status: 403,
    });
    // What its scope allows, it may do.
    expect((await app.request('/silences', { headers: bearer(reader) })).status).toBe(200);
    const made = await app.request('/silences', {
      method: 'POST',
      headers: { ...bearer(reader), ...JSON_TYPE },
      body: JSON.stringify({ match: { types: ['paste'] }, until: 'PT1H', reason: 'x' }),
    });
    expect(made.status).toBe(403);
    expect((await refusals.list()).map((r) => r.scope)).toEqual(['silences:write', 'assets:write']);
  });

  it('a bare digest keeps every scope; a wrong token is still 401, not 403', async () => {
    const { app, all } = await setUp();
    const made = await app.request('/silences', {
      method: 'POST',
      headers: { ...bearer(all), ...JSON_TYPE },
      body: JSON.stringify({ match: { types: ['paste'] }, until: 'PT1H', reason: 'x' }),
    });
    expect(made.status).toBe(201);
    expect((await app.request('/status', { headers: bearer(newToken()) })).status).toBe(401);
  });

  it('the OpenAPI document names the scope of every operation that needs a token', async () => {
    const { app } = await setUp();
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { security?: { bearer?: string[] }[]; 'x-scopes'?: string[] }>>;
    };
    const scoped: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        if (path === '/health') continue;
        const [scope] = op['x-scopes'] ?? [];
        expect(SCOPES as readonly string[], `${method} ${path}`).toContain(scope);
        expect(op.security?.[0]?.bearer).toEqual([scope]);
        scoped.push(`${method} ${path} ${scope}`);
      }
    expect(scoped).toContain('post /assets/{asset_id}/toggle assets:write');
    expect(scoped).toContain('delete /silences/{id} silences:write');
    expect(scoped).toContain('get /status read');
  });
});
