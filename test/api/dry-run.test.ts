/**
 * The API of `start --dry-run` (section 1): every route that would act outside answers 409
 * `dry_run` after its usual checks (401, 403, 400 in section 5's order), and does nothing: no
 * upstream call (the emulator's log), no provider call (the identity stand-in's), no record, no
 * audit, no Idempotency-Key kept. Slack's buttons and menus say so in words. Routes that only read,
 * and silences (the table only), work as usual; `GET /whoami` says it is a dry run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { DRY_RUN_SLACK } from '../../lib/api/dry-run.ts';
import { systemClock } from '../../lib/clock.ts';
import { IDENTITY_ACTION_ID, menuValue } from '../../lib/destinations/slack/identity-menu.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { acmeAssetIds, bearer, buildApi, JSON_TYPE, newToken, type TableRef } from './harness.ts';
import { identityApi } from './identity-harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const LOGIN = 'kim@acme.test';
const SECRET = 'slack-signing-secret-for-dry-run-tests';
const TEAM = 'T0DRYRUN';
const ANA = 'U0ANA';
const tokens = { all: newToken(), reader: newToken() };
let idp: IdentityProviders;
let table: TableRef;
let dry: ReturnType<typeof createApiApp>;
let real: ReturnType<typeof createApiApp>;
const answered: { url: string; body: unknown }[] = [];
const handed: unknown[] = [];

beforeAll(async () => {
  idp = await identityProviders({
    entra: { roles: ALL_ENTRA_ROLES, users: [{ userPrincipalName: LOGIN }] },
  });
  table = { client: db.client, name: await db.table() };
  const base = buildApi(emu, {
    table,
    clients: {
      all: {
        digest: sha256Hex(tokens.all),
        scopes: [
          'read',
          'assets:write',
          'events:act',
          'identity:act',
          'destinations:write',
          'silences:write',
        ],
      },
      reader: { digest: sha256Hex(tokens.reader), scopes: ['read'] },
    },
    // A destination to test (never reached: the dry run refuses before it is looked up).
    console: {
      destinations: async () => ({
        destinations: new Map(),
        appUrl: 'https://app.example',
        digest: { threshold: 5, maxItems: 20 },
      }),
    },
    slack: {
      signingSecret: SECRET,
      teamId: TEAM,
      allowedUsers: [ANA],
      responseUrlPrefix: 'https://hooks.slack.com/',
    },
  });
  // The same API with its account actions at hand (as npm start has them), once real, once dry.
  const withIdentity = identityApi(base, table, { idp });
  await withIdentity.seed([LOGIN]);
  await new IdentityStore({ client: table.client, tableName: table.name, clock: systemClock }).keepVerdicts(
    [
      {
        key: 'cred-menu',
        scope: 'top',
        login: LOGIN,
        verdict: { provider: 'corp', verdict: 'at_risk', leakDate: '2026-01-02' },
      },
    ],
    true,
  );
  const deps = {
    ...base.deps,
    identity: {
      accounts: async () => withIdentity.accounts,
      known: async () => ({
        identity: [{ scope: 'top' as const, provider: 'corp', type: 'entra' as const }],
      }),
    },
    post: async (url: string, body: unknown) => {
      answered.push({ url, body });
    },
    handOff: async (work: unknown) => {
      handed.push(work);
    },
  };
  dry = createApiApp({ ...deps, dryRun: true });
  real = createApiApp(deps);
});
afterAll(async () => {
  await idp.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}, app = dry) =>
  app.request(path, {
    method: 'POST',
    headers: { ...bearer(tokens.all), ...JSON_TYPE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
const upstreamCalls = () =>
  emu.running.emulator.control.calls('eventActions').length +
  emu.running.emulator.control.calls('assetToggle').length;

describe('the API under start --dry-run', () => {
  it('refuses each route that acts outside with 409 dry_run, and nothing reaches the upstream or a provider', async () => {
    const asset = acmeAssetIds(emu)[0] as number;
    const refused = [
      await post(`/assets/${asset}/toggle`, { is_disabled: true }),
      await post('/events/actions', { action: 'ignore', uids: ['leak/acme/1'] }),
      await post('/identity/actions', { action: 'revokeSessions', logins: [LOGIN] }),
      await post('/destinations/hook/test', {}),
      await post('/deliveries/retry', { ids: ['d1'] }),
    ];
    for (const res of refused) {
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect([res.status, error.code], error.message).toEqual([409, 'dry_run']);
      expect(error.message).toContain('dry run');
    }
    expect(upstreamCalls()).toBe(0);
    expect(idp.requests).toEqual([]);
    // Nothing audited: the console's trail and the asset's are empty.
    const audit = await dry.request('/audit', { headers: bearer(tokens.all) });
    expect(((await audit.json()) as { items: unknown[] }).items).toEqual([]);
    const assetAudit = await dry.request(`/assets/${asset}/audit`, { headers: bearer(tokens.all) });
    expect(((await assetAudit.json()) as { items: unknown[] }).items).toEqual([]);
  });

  it('checks auth, scope and the body first: 401, 403 and 400 before 409', async () => {
    const unsigned = await dry.request('/events/actions', {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ action: 'ignore', uids: ['x'] }),
    });
    expect(unsigned.status).toBe(401);
    const reader = await post('/events/actions', { action: 'ignore', uids: ['x'] }, bearer(tokens.reader));
    expect(reader.status).toBe(403);
    expect((await post('/events/actions', { action: 'shred', uids: ['x'] })).status).toBe(400);
    expect((await post('/assets/1/toggle', { is_disabled: 'yes' })).status).toBe(400);
    expect((await post('/deliveries/retry', { ids: [] })).status).toBe(400);
    expect((await post('/destinations/hook/test', { loud: true })).status).toBe(400);
    // A login never leaked is still named (400), before the dry run is.
    const stranger = await post('/identity/actions', { action: 'revokeSessions', logins: ['who@acme.test'] });
    expect(stranger.status).toBe(400);
    // A malformed Idempotency-Key too.
    const badKey = await post(
      '/events/actions',
      { action: 'ignore', uids: ['x'] },
      { 'Idempotency-Key': ' ' },
    );
    expect(badKey.status).toBe(400);
    expect(upstreamCalls()).toBe(0);
  });

  it('keeps no Idempotency-Key: the same key acts once the run is real', async () => {
    const asset = acmeAssetIds(emu)[1] as number;
    const key = { 'Idempotency-Key': randomUUID() };
    expect(await codeOf(await post(`/assets/${asset}/toggle`, { is_disabled: true }, key))).toBe('dry_run');
    const done = await post(`/assets/${asset}/toggle`, { is_disabled: true }, key, real);
    expect(done.status).toBe(200);
    expect(emu.running.emulator.control.calls('assetToggle')).toHaveLength(1);
  });

  it('reads, and silences in the table, work as usual; whoami says it is a dry run', async () => {
    expect((await dry.request('/status', { headers: bearer(tokens.all) })).status).toBe(200);
    const would = await post('/silences?dryRun=true', { match: { types: ['paste'] } });
    expect(would.status).toBe(200);
    const made = await post('/silences', { match: { types: ['paste'] }, until: 'PT1H', reason: 'trying' });
    expect(made.status).toBe(201);
    const who = await dry.request('/whoami', { headers: bearer(tokens.reader) });
    expect(await who.json()).toMatchObject({ name: 'reader', dryRun: true });
    const realWho = await real.request('/whoami', { headers: bearer(tokens.reader) });
    expect(await realWho.json()).not.toHaveProperty('dryRun');
  });

  it('answers a Slack button or account menu in words, and records and hands on nothing', async () => {
    const click = (action: Record<string, unknown>) => {
      const body = `payload=${encodeURIComponent(
        JSON.stringify({
          type: 'block_actions',
          user: { id: ANA },
          team: { id: TEAM },
          response_url: `https://hooks.slack.com/actions/${randomUUID()}`,
          actions: [{ action_ts: String(Date.now() / 1000), ...action }],
        }),
      )}`;
      return dry.request('/slack/interactions', { method: 'POST', headers: slackSigned(body, SECRET), body });
    };
    expect((await click({ action_id: 'exposure:ignore', block_id: 'b1', value: 'leak/acme/1' })).status).toBe(
      200,
    );
    expect(
      (
        await click({
          action_id: IDENTITY_ACTION_ID,
          block_id: 'b2',
          selected_option: { value: menuValue('revokeSessions', 'cred-menu') },
        })
      ).status,
    ).toBe(200);
    expect(answered.map((a) => (a.body as { text: string }).text)).toEqual([DRY_RUN_SLACK, DRY_RUN_SLACK]);
    expect(handed).toEqual([]);
    expect(upstreamCalls()).toBe(1); // the real toggle above, nothing since
    expect(idp.requests).toEqual([]);
    const audit = await dry.request('/audit', { headers: bearer(tokens.all) });
    const what = ((await audit.json()) as { items: { what: string }[] }).items.map((i) => i.what);
    expect(what.some((w) => /ignore|revoke/i.test(w))).toBe(false);
  });
});
