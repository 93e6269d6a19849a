/**
 * The Entra ID stand-in over HTTP: the token endpoint's grant and refusals, Graph's checks (a token
 * it issued and still honours, the permission, `$select` kept exactly), the mail search, throttling,
 * the actions and what they change, and the request log a test reads.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GRAPH_SCOPE } from '../../lib/emulator/identity/index.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const START = Date.parse('2026-11-20T12:00:00Z');
let now = START;
let idp: IdentityProviders;

beforeAll(async () => {
  idp = await identityProviders({
    now: () => now,
    entra: {
      tenantDomains: ['acme.onmicrosoft.com'],
      users: [
        {
          userPrincipalName: 'kim.lee@acme.test',
          id: '11111111-2222-4333-8444-555555555555',
          lastPasswordChangeDateTime: '2026-03-01T08:00:00Z',
        },
        { userPrincipalName: 'obrien@acme.onmicrosoft.com', mail: "o'brien@acme.test" },
        { userPrincipalName: 'sync@acme.test', onPremisesSyncEnabled: true },
      ],
    },
  });
});

beforeEach(() => {
  now = START;
  idp.stand.entra.roles = ['User.Read.All'];
  idp.stand.entra.identityProtection = true;
  idp.stand.entra.lastRiskyUsersCall = Number.NEGATIVE_INFINITY;
  idp.stand.control.clearFaults();
  idp.stand.control.clearLog();
});

const tokenUrl = (tenant = idp.entra.tenantId) => `${idp.entra.loginUrl}/${tenant}/oauth2/v2.0/token`;

function tokenRequest(change: Record<string, string | undefined> = {}, tenant?: string) {
  const form = new URLSearchParams();
  const fields = {
    client_id: idp.entra.clientId,
    client_secret: idp.entra.clientSecret,
    scope: GRAPH_SCOPE,
    grant_type: 'client_credentials',
    ...change,
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) form.set(key, value);
  return fetch(tokenUrl(tenant), { method: 'POST', body: form });
}

async function token(): Promise<string> {
  const answer = await tokenRequest();
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

async function graph(path: string, init: RequestInit & { bearer?: string } = {}) {
  const bearer = init.bearer ?? (await token());
  const answer = await fetch(`${idp.entra.graphUrl}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(init.body ? { 'content-type': 'application/json' } : {}),
    },
  });
  const text = await answer.text();
  return {
    status: answer.status,
    headers: answer.headers,
    // biome-ignore lint/suspicious/noExplicitAny: a provider's JSON answer, whose shape the tests assert
    body: text ? (JSON.parse(text) as any) : undefined,
  };
}

describe('token endpoint', () => {
  it('grants client credentials: a Bearer JWT holding the roles, tenant, app and expiry', async () => {
    idp.stand.entra.roles = ['User.Read.All', 'User.RevokeSessions.All'];
    const answer = await tokenRequest();
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3599 });
    const jwt = body.access_token as string;
    expect(jwt.split('.')).toHaveLength(3);
    expect(claimsOf(jwt)).toMatchObject({
      roles: ['User.Read.All', 'User.RevokeSessions.All'],
      tid: idp.entra.tenantId,
      appid: idp.entra.clientId,
      aud: 'https://graph.microsoft.com',
      exp: START / 1000 + 3599,
    });
  });

  it('takes a verified domain in place of the tenant id', async () => {
    expect((await tokenRequest({}, 'acme.onmicrosoft.com')).status).toBe(200);
  });

  it('refuses a wrong secret (401 invalid_client), naming the app and never the secret', async () => {
    const answer = await tokenRequest({ client_secret: 'not-it' });
    expect(answer.status).toBe(401);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/^AADSTS7000215: Invalid client secret/);
    expect(body.error_description).toContain(idp.entra.clientId);
    expect(JSON.stringify(body)).not.toContain('not-it');
  });

  it.each([
    ['a wrong scope', { scope: 'https://graph.microsoft.com/User.Read.All' }, 400, 'invalid_scope', 70011],
    ['another grant', { grant_type: 'password' }, 400, 'unsupported_grant_type', 70003],
    [
      'an unknown app',
      { client_id: 'f0f0f0f0-0000-4000-8000-000000000000' },
      400,
      'unauthorized_client',
      700016,
    ],
  ])('refuses %s', async (_what, change, status, error, code) => {
    const answer = await tokenRequest(change);
    expect(answer.status).toBe(status);
    expect(await answer.json()).toMatchObject({ error, error_codes: [code] });
  });

  it('refuses an unknown tenant (400 AADSTS90002)', async () => {
    const answer = await tokenRequest({}, '99999999-9999-4999-8999-999999999999');
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: 'invalid_request', error_codes: [90002] });
  });
});

describe('Graph: who may read', () => {
  it('refuses a request without a token, with a made-up one, and with an altered one (401)', async () => {
    const none = await fetch(`${idp.entra.graphUrl}/v1.0/users/kim.lee@acme.test`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await none.json()).toMatchObject({ error: { code: 'InvalidAuthenticationToken' } });
    const good = await token();
    const [header, , signature] = good.split('.');
    const payload = Buffer.from(
      JSON.stringify({ ...claimsOf(good), roles: ['Directory.ReadWrite.All'] }),
    ).toString('base64url');
    for (const bearer of ['abc.def.ghi', `${header}.${payload}.${signature}`]) {
      const answer = await graph('/v1.0/users/kim.lee@acme.test', { bearer });
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('InvalidAuthenticationToken');
    }
  });

  it('refuses a token once it has expired, and every token after revokeTokens', async () => {
    const bearer = await token();
    now = START + 3598_000;
    expect((await graph('/v1.0/users/kim.lee@acme.test', { bearer })).status).toBe(200);
    now = START + 3600_000;
    const late = await graph('/v1.0/users/kim.lee@acme.test', { bearer });
    expect(late.status).toBe(401);
    expect(late.body.error.message).toMatch(/expired/);
    const fresh = await token();
    idp.stand.entra.revokeTokens();
    expect((await graph('/v1.0/users/kim.lee@acme.test', { bearer: fresh })).status).toBe(401);
  });

  it('refuses an app without a read permission (403 Authorization_RequestDenied), from its next token on', async () => {
    const before = await token();
    idp.stand.entra.roles = ['User.RevokeSessions.All'];
    expect((await graph('/v1.0/users/kim.lee@acme.test', { bearer: before })).status).toBe(200);
    const answer = await graph('/v1.0/users/kim.lee@acme.test');
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({
      code: 'Authorization_RequestDenied',
      message: 'Insufficient privileges to complete the operation.',
    });
  });
});

describe('Graph: a user', () => {
  it('returns the default set without $select: no accountEnabled, password date or sync flag', async () => {
    const answer = await graph('/v1.0/users/kim.lee@acme.test');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: '11111111-2222-4333-8444-555555555555',
      userPrincipalName: 'kim.lee@acme.test',
      displayName: 'Kim Lee',
      mail: 'kim.lee@acme.test',
    });
    for (const hidden of ['accountEnabled', 'lastPasswordChangeDateTime', 'onPremisesSyncEnabled'])
      expect(answer.body).not.toHaveProperty(hidden);
  });

  it('returns exactly what $select names, those three included', async () => {
    const answer = await graph(
      '/v1.0/users/KIM.LEE@acme.test?$select=id,accountEnabled,lastPasswordChangeDateTime,onPremisesSyncEnabled',
    );
    expect(answer.status).toBe(200);
    const { '@odata.context': context, ...fields } = answer.body;
    expect(context).toContain('/v1.0/$metadata#users(');
    expect(fields).toEqual({
      id: '11111111-2222-4333-8444-555555555555',
      accountEnabled: true,
      lastPasswordChangeDateTime: '2026-03-01T08:00:00Z',
      onPremisesSyncEnabled: null,
    });
    const synced = await graph('/v1.0/users/sync@acme.test?$select=onPremisesSyncEnabled');
    expect(synced.body.onPremisesSyncEnabled).toBe(true);
    expect(synced.body).not.toHaveProperty('displayName');
  });

  it('finds a user by id, and refuses a property it does not have (400)', async () => {
    const byId = await graph('/v1.0/users/11111111-2222-4333-8444-555555555555?$select=userPrincipalName');
    expect(byId.body.userPrincipalName).toBe('kim.lee@acme.test');
    const bad = await graph('/v1.0/users/kim.lee@acme.test?$select=id,password');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/Could not find a property named 'password'/);
  });

  it('answers 404 Request_ResourceNotFound for no such user, and for a mail that is not the UPN', async () => {
    for (const key of ['nobody@acme.test', "o'brien@acme.test"]) {
      const answer = await graph(`/v1.0/users/${encodeURIComponent(key)}`);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('Request_ResourceNotFound');
    }
  });

  it("finds a login by mail with $filter=mail eq '…', a quote in it doubled", async () => {
    const filter = encodeURIComponent("mail eq 'o''brien@acme.test'");
    const answer = await graph(`/v1.0/users?$filter=${filter}&$select=id,userPrincipalName,accountEnabled`);
    expect(answer.status).toBe(200);
    expect(answer.body.value).toEqual([
      { id: expect.any(String), userPrincipalName: 'obrien@acme.onmicrosoft.com', accountEnabled: true },
    ]);
    const none = await graph(`/v1.0/users?$filter=${encodeURIComponent("mail eq 'x@acme.test'")}`);
    expect(none.body.value).toEqual([]);
    const alias = encodeURIComponent("proxyAddresses/any(x:x eq 'smtp:o''brien@acme.test')");
    expect((await graph(`/v1.0/users?$filter=${alias}`)).body.value).toHaveLength(1);
  });

  it('refuses a filter it does not understand, an undoubled quote included (400)', async () => {
    for (const filter of ["mail eq 'o'brien@acme.test'", "startswith(mail,'kim')", 'mail eq kim']) {
      const answer = await graph(`/v1.0/users?$filter=${encodeURIComponent(filter)}`);
      expect(answer.status, filter).toBe(400);
    }
  });
});

describe('Graph: throttling and faults', () => {
  it('answers 429 with Retry-After when told, or without one', async () => {
    const bearer = await token();
    idp.stand.throttle('entra', 1, 7);
    idp.stand.throttle('entra', 1);
    const first = await graph('/v1.0/users/kim.lee@acme.test', { bearer });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    expect(first.body.error.code).toBe('TooManyRequests');
    const second = await graph('/v1.0/users/kim.lee@acme.test', { bearer });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBeNull();
    expect((await graph('/v1.0/users/kim.lee@acme.test', { bearer })).status).toBe(200);
  });

  it('hangs when told, until the client gives up', async () => {
    const bearer = await token();
    idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', hang: true });
    const started = Date.now();
    await expect(
      fetch(`${idp.entra.graphUrl}/v1.0/users/kim.lee@acme.test`, {
        headers: { authorization: `Bearer ${bearer}` },
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await graph('/v1.0/users/kim.lee@acme.test', { bearer })).status).toBe(200);
  });
});

describe('Graph: actions', () => {
  const everything = [
    'User.Read.All',
    'User.RevokeSessions.All',
    'User.ReadWrite.All',
    'User.EnableDisableAccount.All',
    'IdentityRiskyUser.ReadWrite.All',
  ];
  const kim = '11111111-2222-4333-8444-555555555555';

  it('revokes sessions (200 {value: true}) and records it', async () => {
    idp.stand.entra.roles = everything;
    const answer = await graph(`/v1.0/users/${kim}/revokeSignInSessions`, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(answer.body.value).toBe(true);
    expect(idp.actions).toEqual([expect.objectContaining({ action: 'revokeSessions', userId: kim })]);
    expect(idp.stand.entra.user(kim)?.signInSessionsValidFromDateTime).toBe(new Date(START).toISOString());
  });

  it('requires a password change and disables, then enables (204 each), changing the account', async () => {
    idp.stand.entra.roles = everything;
    const bearer = await token();
    const patch = (body: unknown) =>
      graph(`/v1.0/users/${kim}`, { method: 'PATCH', body: JSON.stringify(body), bearer });
    expect((await patch({ passwordProfile: { forceChangePasswordNextSignIn: true } })).status).toBe(204);
    expect(idp.stand.entra.user(kim)?.passwordProfile.forceChangePasswordNextSignIn).toBe(true);
    expect((await patch({ accountEnabled: false })).status).toBe(204);
    const read = await graph(`/v1.0/users/${kim}?$select=accountEnabled`, { bearer });
    expect(read.body.accountEnabled).toBe(false);
    expect((await patch({ accountEnabled: true })).status).toBe(204);
    expect(idp.stand.entra.user(kim)?.accountEnabled).toBe(true);
    expect(idp.actions.map((a) => a.action)).toEqual(['requirePasswordChange', 'disable', 'enable']);
  });

  it('refuses each action without its permission (403 Authorization_RequestDenied), changing nothing', async () => {
    idp.stand.entra.roles = ['User.Read.All'];
    const bearer = await token();
    const answers = [
      await graph(`/v1.0/users/${kim}/revokeSignInSessions`, { method: 'POST', bearer }),
      await graph(`/v1.0/users/${kim}`, { method: 'PATCH', body: '{"accountEnabled":false}', bearer }),
      await graph(`/v1.0/users/${kim}`, {
        method: 'PATCH',
        body: '{"passwordProfile":{"forceChangePasswordNextSignIn":true}}',
        bearer,
      }),
      await graph('/v1.0/identityProtection/riskyUsers/confirmCompromised', {
        method: 'POST',
        body: JSON.stringify({ userIds: [kim] }),
        bearer,
      }),
    ];
    expect(answers.map((a) => [a.status, a.body.error.code])).toEqual(
      Array(4).fill([403, 'Authorization_RequestDenied']),
    );
    expect(idp.actions).toEqual([]);
    expect(idp.stand.entra.user(kim)?.accountEnabled).toBe(true);
  });

  it('confirms compromised (204) at most once a second per tenant: a 429 without Retry-After', async () => {
    idp.stand.entra.roles = everything;
    const bearer = await token();
    const confirm = () =>
      graph('/v1.0/identityProtection/riskyUsers/confirmCompromised', {
        method: 'POST',
        body: JSON.stringify({ userIds: [kim] }),
        bearer,
      });
    expect((await confirm()).status).toBe(204);
    expect(idp.stand.entra.user(kim)?.risk).toEqual({ riskLevel: 'high', riskState: 'confirmedCompromised' });
    now += 999;
    const soon = await confirm();
    expect(soon.status).toBe(429);
    expect(soon.headers.get('retry-after')).toBeNull();
    now += 1;
    expect((await confirm()).status).toBe(204);
  });

  it('refuses confirmCompromised in a tenant without P2 (403)', async () => {
    idp.stand.entra.roles = everything;
    idp.stand.entra.identityProtection = false;
    const answer = await graph('/v1.0/identityProtection/riskyUsers/confirmCompromised', {
      method: 'POST',
      body: JSON.stringify({ userIds: [kim] }),
    });
    expect(answer.status).toBe(403);
    expect(answer.body.error.message).toMatch(/P2/);
  });
});

describe('the request log', () => {
  it('keeps every request whole: the secret only in the token request, the token in Graph headers', async () => {
    const bearer = await token();
    await graph('/v1.0/users/kim.lee@acme.test?$select=id', { bearer });
    const [grant, read] = idp.requests;
    expect(grant).toMatchObject({ provider: 'entra', endpoint: 'entraToken', method: 'POST', status: 200 });
    expect(grant?.body).toContain(`client_secret=${encodeURIComponent(idp.entra.clientSecret)}`);
    expect(read).toMatchObject({ endpoint: 'graphUser', query: { $select: 'id' }, status: 200 });
    expect(read?.headers.authorization).toBe(`Bearer ${bearer}`);
    const secretIn = idp.requests.filter((r) => JSON.stringify(r).includes(idp.entra.clientSecret));
    expect(secretIn.map((r) => r.endpoint)).toEqual(['entraToken']);
  });
});
