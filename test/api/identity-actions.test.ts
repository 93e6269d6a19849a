/**
 * `POST /identity/actions` and `GET /identity/actions/{id}` where the API has the providers'
 * secrets (serve, npm start): it acts at once, through the real app, dynalite and the providers'
 * stand-in over HTTP. Each action reaches the provider once per id (a replay, 20 calls at once
 * with one Idempotency-Key); a login never leaked is refused, named, with no call and no record;
 * a bare-digest client may not act, `identity:act` may not disable (403, audited, nothing called);
 * a provider refusing for lack of a permission is reported with the permission's name, and the
 * account is untouched; every field is checked, naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { DynamoRefusalAudit } from '../../lib/state/audit.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { type ApiUnderTest, bearer, buildApi, JSON_TYPE, newToken, type TableRef } from './harness.ts';
import { type IdentityApi, identityApi } from './identity-harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const USERS = ['kim@acme.test', 'lee@acme.test', 'pat@acme.test', 'sam@acme.test'];
const tokens = { actor: newToken(), admin: newToken() };
let idp: IdentityProviders;
let table: TableRef;
let base: ApiUnderTest;
let api: IdentityApi;

beforeAll(async () => {
  idp = await identityProviders({
    entra: { roles: ALL_ENTRA_ROLES, users: USERS.map((userPrincipalName) => ({ userPrincipalName })) },
  });
  table = { client: db.client, name: await db.table() };
  base = buildApi(emu, {
    table,
    clients: {
      actor: { digest: sha256Hex(tokens.actor), scopes: ['identity:act', 'read'] },
      admin: { digest: sha256Hex(tokens.admin), scopes: ['identity:disable'] },
    },
  });
  api = identityApi(base, table, { idp });
  await api.seed(USERS);
});
afterAll(async () => {
  await idp.close();
});

const post = (token: string, body: unknown, key?: string, app = api.app) =>
  app.request('/identity/actions', {
    method: 'POST',
    headers: { ...bearer(token), ...JSON_TYPE, ...(key ? { 'Idempotency-Key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const done = (action: string, login: string) =>
  idp.actions.filter((a) => a.action === action && a.login === login).length;
const error = async (res: Response) =>
  ((await res.json()) as { error: { code: string; message: string } }).error;

describe('POST /identity/actions with the providers at hand', () => {
  it('revokes sessions once per id: a replay answers the same, 20 calls at once with one key act once', async () => {
    const body = { action: 'revokeSessions', logins: ['kim@acme.test'], reason: 'in a combo list' };
    const first = await post(tokens.actor, body, 'revoke-kim-1');
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { id: string; results: unknown[] };
    expect(answer.results).toEqual([{ login: 'kim@acme.test', ok: true }]);
    expect(answer.id).toMatch(/^api:actor:revoke-kim-1:/);
    expect(done('revokeSessions', 'kim@acme.test')).toBe(1);
    const again = await post(tokens.actor, body, 'revoke-kim-1');
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(answer);
    expect(done('revokeSessions', 'kim@acme.test')).toBe(1);

    // On a clock that stands still the repeats' 5 s of waiting for the first never run out: on a
    // busy machine 20 calls take longer than that, and what is checked here is that they act once.
    const patient = createApiApp({ ...api.deps, now: fakeClock().now });
    const many = await Promise.all(
      Array.from({ length: 20 }, () => post(tokens.actor, body, 'revoke-kim-2', patient)),
    );
    const answers = await Promise.all(many.map((r) => r.json() as Promise<{ id: string }>));
    expect(many.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(done('revokeSessions', 'kim@acme.test')).toBe(2);
    // Audited once per action: who, what, which account, the provider's answer.
    const trail = (await api.accounts.actions.auditTrail()).filter((e) => e.type === 'revokeSessions');
    expect(trail.map((e) => e.id).sort()).toEqual([answer.id, answers[0]?.id].sort());
    expect(trail[0]).toMatchObject({
      by: 'actor',
      uids: ['kim@acme.test'],
      results: [{ uid: 'kim@acme.test', ok: true }],
    });
  });

  it('refuses a login never leaked, naming it: no provider call, nothing recorded', async () => {
    const requests = idp.requests.length;
    const trail = (await api.accounts.actions.auditTrail()).length;
    const res = await post(tokens.actor, {
      action: 'requirePasswordChange',
      logins: ['lee@acme.test', 'nobody@acme.test', 'NOBODY@acme.test'],
    });
    expect(res.status).toBe(400);
    const { code, message } = await error(res);
    expect(code).toBe('invalid_request');
    expect(message).toContain('logins: never leaked at the top level');
    expect(message).toContain('nobody@acme.test');
    expect(message).not.toContain('lee@acme.test');
    expect(idp.requests).toHaveLength(requests);
    expect(await api.accounts.actions.auditTrail()).toHaveLength(trail);
    expect(idp.stand.entra.user('lee@acme.test')?.passwordProfile.forceChangePasswordNextSignIn).toBe(false);
  });

  it('a bare-digest client may not act on accounts (403 before its body is read, audited); it may read', async () => {
    const requests = idp.requests.length;
    const res = await post(base.tokens.runbook, '{"action": "disable", "logins": "not even a list"}');
    expect(res.status).toBe(403);
    expect(await error(res)).toEqual({
      code: 'forbidden',
      message:
        'the client "runbook" does not have the scope identity:act or identity:disable this request needs',
    });
    expect(idp.requests).toHaveLength(requests);
    const refusals = await new DynamoRefusalAudit(table.client, table.name).list();
    expect(refusals[0]).toMatchObject({
      client: 'runbook',
      path: '/identity/actions',
      scope: 'identity:act or identity:disable',
      status: 403,
    });
    const unknown = await api.app.request('/identity/actions/api%3Anone', {
      headers: bearer(base.tokens.runbook),
    });
    expect(unknown.status).toBe(404);
  });

  it('identity:act cannot disable (403, audited, nothing called); identity:disable disables and enables', async () => {
    const requests = idp.requests.length;
    const refused = await post(tokens.actor, { action: 'disable', logins: ['pat@acme.test'] });
    expect(refused.status).toBe(403);
    expect((await error(refused)).message).toContain('the scope identity:disable');
    expect(idp.requests).toHaveLength(requests);
    expect(idp.stand.entra.user('pat@acme.test')?.accountEnabled).toBe(true);
    const [audited] = await new DynamoRefusalAudit(table.client, table.name).list();
    expect(audited).toMatchObject({ client: 'actor', scope: 'identity:disable', status: 403 });

    const disabled = await post(tokens.admin, { action: 'disable', logins: ['pat@acme.test'] });
    expect(disabled.status).toBe(200);
    expect(((await disabled.json()) as { results: unknown }).results).toEqual([
      { login: 'pat@acme.test', ok: true },
    ]);
    expect(idp.stand.entra.user('pat@acme.test')?.accountEnabled).toBe(false);
    const enabled = await post(tokens.admin, { action: 'enable', logins: ['pat@acme.test'] });
    expect(enabled.status).toBe(200);
    expect(idp.stand.entra.user('pat@acme.test')?.accountEnabled).toBe(true);
    expect(done('disable', 'pat@acme.test')).toBe(1);
    expect(done('enable', 'pat@acme.test')).toBe(1);
    // And identity:disable alone takes nothing else.
    expect((await post(tokens.admin, { action: 'revokeSessions', logins: ['pat@acme.test'] })).status).toBe(
      403,
    );
  });

  it('GET /identity/actions/{id} gives the outcome again; an unknown id is 404', async () => {
    const made = await post(tokens.actor, { action: 'revokeSessions', logins: ['sam@acme.test'] });
    const { id } = (await made.json()) as { id: string };
    const res = await api.app.request(`/identity/actions/${encodeURIComponent(id)}`, {
      headers: bearer(tokens.actor),
    });
    expect(res.status).toBe(200);
    const outcome = (await res.json()) as Record<string, unknown>;
    expect(outcome).toMatchObject({
      id,
      action: 'revokeSessions',
      open: false,
      results: [{ login: 'sam@acme.test', ok: true }],
    });
    expect(Date.parse(String(outcome.at))).toBeGreaterThan(Date.now() - 60_000);
    const missing = await api.app.request('/identity/actions/api%3Anot-an-action', {
      headers: bearer(tokens.actor),
    });
    expect(missing.status).toBe(404);
    expect((await error(missing)).code).toBe('not_found');
  });

  it.each([
    [{ action: 'wipe', logins: ['kim@acme.test'] }, 'action:'],
    [{ action: 'revokeSessions', logins: [] }, 'logins:'],
    [
      { action: 'revokeSessions', logins: Array.from({ length: 101 }, (_, i) => `u${i}@acme.test`) },
      'logins:',
    ],
    [{ action: 'revokeSessions', logins: ['kim@acme.test', '   '] }, 'logins: login 2 is empty'],
    [{ action: 'revokeSessions', logins: ['kim@acme.test'], colour: 'red' }, 'colour: unknown key'],
    [{ action: 'revokeSessions', logins: ['kim@acme.test'], reason: 'x'.repeat(501) }, 'reason:'],
    [{ action: 'revokeSessions', logins: ['kim@acme.test'], tenant: 7 }, 'tenant: no tenant "7"'],
    ['{"action": ', 'not valid JSON'],
  ])('refuses %j with a 400 naming %s, calling nothing', async (body, named) => {
    const requests = idp.requests.length;
    const res = await post(tokens.actor, body);
    expect(res.status).toBe(400);
    const { code, message } = await error(res);
    expect(code).toBe('invalid_request');
    expect(message).toContain(named);
    expect(idp.requests).toHaveLength(requests);
  });
});

describe('a provider that does not answer', () => {
  it('answers 202 with the id: the action stays open for a later pass, and GET says it is under way', async () => {
    const slow = identityApi(base, table, { idp, callTimeoutMs: 300 });
    idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphRevokeSessions', hang: true });
    const res = await post(
      tokens.actor,
      { action: 'revokeSessions', logins: ['lee@acme.test'] },
      undefined,
      slow.app,
    );
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const got = await slow.app.request(`/identity/actions/${encodeURIComponent(id)}`, {
      headers: bearer(tokens.actor),
    });
    expect(await got.json()).toMatchObject({
      open: true,
      results: [{ login: 'lee@acme.test', ok: false, error: expect.stringContaining('under way') }],
    });
    // Its one call is written down: a later pass makes at most one more, within 5 minutes.
    expect((await slow.accounts.actions.get(id))?.progress['lee@acme.test']?.calls).toBe(1);
  });
});

describe('a provider that refuses for lack of a permission', () => {
  it('is reported with the permission’s name, and the account is untouched', async () => {
    // An app granted only what lookups need (the stand-in's default: User.Read.All).
    const bare = await identityProviders({ entra: { users: [{ userPrincipalName: 'kim@acme.test' }] } });
    try {
      const withBare = identityApi(base, table, { idp: bare, scopes: [7] });
      await withBare.seed(['kim@acme.test'], 7);
      const before = bare.stand.entra.user('kim@acme.test')?.signInSessionsValidFromDateTime;
      const res = await post(
        tokens.actor,
        { action: 'revokeSessions', logins: ['kim@acme.test'], tenant: 7 },
        undefined,
        withBare.app,
      );
      expect(res.status).toBe(200);
      const { results } = (await res.json()) as { results: { login: string; ok: boolean; error: string }[] };
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ login: 'kim@acme.test', ok: false });
      expect(results[0]?.error).toContain('User.RevokeSessions.All');
      expect(results[0]?.error).toMatch(/answered HTTP 403/);
      expect(bare.actions).toEqual([]);
      expect(bare.stand.entra.user('kim@acme.test')?.signInSessionsValidFromDateTime).toBe(before);
      // This config has identity for tenant 7 only: at the top level, there is nothing to act on.
      const top = await post(
        tokens.actor,
        { action: 'revokeSessions', logins: ['kim@acme.test'] },
        undefined,
        withBare.app,
      );
      expect(top.status).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
