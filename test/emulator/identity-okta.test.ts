/**
 * The Okta stand-in over HTTP: the user read by id, login or short name with `SSWS`, Okta's error
 * objects, the rate headers on every answer and the 429 when the window is spent, and the actions
 * with the lifecycle rules they follow.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const START = Date.parse('2026-11-20T12:00:00.250Z');
let now = START;
let idp: IdentityProviders;

beforeAll(async () => {
  idp = await identityProviders({
    now: () => now,
    okta: {
      readOnlyToken: 'okta-read-only',
      rateLimit: { limit: 5, windowSeconds: 60 },
      users: [
        {
          login: 'kim.lee@example.com',
          id: '00u1kimlee00000000001',
          passwordChanged: '2026-03-01T08:00:00.000Z',
        },
        { login: 'never@example.com', passwordChanged: null },
        { login: 'ad.user@example.com', providerType: 'ACTIVE_DIRECTORY' },
        { login: 'a/b@example.com' },
      ],
    },
  });
});

beforeEach(() => {
  now = START;
  idp.stand.okta.userRisk = false;
  idp.stand.okta.setRateLimit({ limit: 600, windowSeconds: 60, remaining: 600 });
  idp.stand.okta.updateUser('kim.lee@example.com', { status: 'ACTIVE' });
  idp.stand.control.clearFaults();
  idp.stand.control.clearLog();
});

async function okta(path: string, init: RequestInit & { auth?: string } = {}) {
  const answer = await fetch(`${idp.okta.orgUrl}${path}`, {
    ...init,
    headers: {
      authorization: init.auth ?? `SSWS ${idp.okta.token}`,
      accept: 'application/json',
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

describe('a user', () => {
  it('is found by URL-encoded login, by id and by short name, with the fields a verdict needs', async () => {
    const answer = await okta(`/api/v1/users/${encodeURIComponent('Kim.Lee@example.com')}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: '00u1kimlee00000000001',
      status: 'ACTIVE',
      passwordChanged: '2026-03-01T08:00:00.000Z',
      created: expect.any(String),
      profile: {
        login: 'kim.lee@example.com',
        email: 'kim.lee@example.com',
        firstName: 'Kim',
        lastName: 'Lee',
      },
      credentials: { provider: { type: 'OKTA', name: 'OKTA' } },
    });
    expect(answer.body._links.self.href).toBe(`${idp.okta.orgUrl}/api/v1/users/00u1kimlee00000000001`);
    expect(answer.body).not.toHaveProperty('risk');
    expect((await okta('/api/v1/users/00u1kimlee00000000001')).body.profile.login).toBe(
      'kim.lee@example.com',
    );
    expect((await okta('/api/v1/users/kim.lee')).body.id).toBe('00u1kimlee00000000001');
  });

  it('says null for a password never changed, and names a delegated credentials provider', async () => {
    expect((await okta('/api/v1/users/never%40example.com')).body.passwordChanged).toBeNull();
    const ad = await okta('/api/v1/users/ad.user%40example.com');
    expect(ad.body.credentials.provider).toEqual({ type: 'ACTIVE_DIRECTORY', name: 'corp.local' });
  });

  it('answers 404 E0000007 for no such user, and for a login with / (only an id may be looked up then)', async () => {
    for (const key of ['nobody%40example.com', 'a%2Fb%40example.com']) {
      const answer = await okta(`/api/v1/users/${key}`);
      expect(answer.status, key).toBe(404);
      expect(answer.body).toMatchObject({ errorCode: 'E0000007', errorLink: 'E0000007', errorCauses: [] });
      expect(idp.requests.at(-1)?.endpoint).toBe('oktaUser');
    }
    expect(idp.stand.okta.user('a/b@example.com')).toBeUndefined();
    expect(idp.stand.okta.users.size).toBe(4);
  });

  it('refuses a bad, missing or Bearer-scheme token (401 E0000011), with the rate headers still on', async () => {
    for (const auth of ['SSWS wrong', '', `Bearer ${idp.okta.token}`]) {
      const answer = await okta('/api/v1/users/kim.lee%40example.com', { auth });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ errorCode: 'E0000011', errorSummary: 'Invalid token provided' });
      expect(answer.headers.get('x-rate-limit-limit')).toBe('600');
    }
    expect(JSON.stringify(idp.requests.map((r) => r.status))).toBe('[401,401,401]');
  });
});

describe('rate limits', () => {
  it('counts down X-Rate-Limit-Remaining with the reset in epoch seconds, then 429 E0000047 without Retry-After', async () => {
    idp.stand.okta.setRateLimit({ limit: 3 });
    const reset = String(Math.ceil((START + 60_000) / 1000));
    const seen: [number, string | null, string | null][] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await okta('/api/v1/users/kim.lee%40example.com');
      seen.push([
        answer.status,
        answer.headers.get('x-rate-limit-remaining'),
        answer.headers.get('x-rate-limit-reset'),
      ]);
      if (answer.status === 429) {
        expect(answer.body.errorCode).toBe('E0000047');
        expect(answer.headers.get('retry-after')).toBeNull();
      }
    }
    expect(seen).toEqual([
      [200, '2', reset],
      [200, '1', reset],
      [200, '0', reset],
      [429, '0', reset],
    ]);
    now = START + 60_000;
    const after = await okta('/api/v1/users/kim.lee%40example.com');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-rate-limit-remaining')).toBe('2');
  });

  it('spends the window at once when told (remaining 0)', async () => {
    idp.stand.okta.setRateLimit({ remaining: 0 });
    expect((await okta('/api/v1/users/kim.lee%40example.com')).status).toBe(429);
  });

  it('answers an injected 429 as Okta does: E0000047, no Retry-After', async () => {
    idp.stand.throttle('okta', 1, 9);
    const answer = await okta('/api/v1/users/kim.lee%40example.com');
    expect(answer.status).toBe(429);
    expect(answer.body.errorCode).toBe('E0000047');
    expect(answer.headers.get('retry-after')).toBeNull();
  });
});

describe('actions', () => {
  const kim = '00u1kimlee00000000001';

  it('expires the password (200, the user PASSWORD_EXPIRED) and clears sessions with OAuth tokens (204)', async () => {
    const expired = await okta(`/api/v1/users/${kim}/lifecycle/expire_password`, { method: 'POST' });
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ id: kim, status: 'PASSWORD_EXPIRED' });
    const cleared = await okta(`/api/v1/users/${kim}/sessions?oauthTokens=true`, { method: 'DELETE' });
    expect(cleared.status).toBe(204);
    expect(idp.requests.at(-1)?.query).toEqual({ oauthTokens: 'true' });
    expect(idp.stand.okta.user(kim)?.sessionsClearedAt).toBe(new Date(START).toISOString());
    expect(idp.actions.map((a) => a.action)).toEqual(['requirePasswordChange', 'revokeSessions']);
  });

  it('suspends an ACTIVE user and unsuspends a SUSPENDED one (200); any other move is 403 E0000038', async () => {
    expect((await okta(`/api/v1/users/${kim}/lifecycle/unsuspend`, { method: 'POST' })).body.errorCode).toBe(
      'E0000038',
    );
    const suspended = await okta(`/api/v1/users/${kim}/lifecycle/suspend`, { method: 'POST' });
    expect(suspended.status).toBe(200);
    expect((await okta(`/api/v1/users/${kim}`)).body.status).toBe('SUSPENDED');
    const again = await okta(`/api/v1/users/${kim}/lifecycle/suspend`, { method: 'POST' });
    expect([again.status, again.body.errorCode]).toEqual([403, 'E0000038']);
    expect((await okta(`/api/v1/users/${kim}/lifecycle/expire_password`, { method: 'POST' })).status).toBe(
      403,
    );
    expect((await okta(`/api/v1/users/${kim}/lifecycle/unsuspend`, { method: 'POST' })).status).toBe(200);
    expect((await okta(`/api/v1/users/${kim}`)).body.status).toBe('ACTIVE');
    expect(idp.actions.map((a) => a.action)).toEqual(['disable', 'enable']);
  });

  it('sets user risk only in an org that has the API (404 otherwise)', async () => {
    const body = JSON.stringify({ riskLevel: 'HIGH', riskReason: 'leaked credential' });
    const off = await okta(`/api/v1/users/${kim}/risk`, { method: 'PUT', body });
    expect([off.status, off.body.errorCode]).toEqual([404, 'E0000007']);
    idp.stand.okta.userRisk = true;
    const on = await okta(`/api/v1/users/${kim}/risk`, { method: 'PUT', body });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ riskLevel: 'HIGH', reason: 'leaked credential' });
    expect(
      (await okta(`/api/v1/users/${kim}/risk`, { method: 'PUT', body: '{"riskLevel":"DIRE"}' })).status,
    ).toBe(400);
    expect(idp.actions.map((a) => a.action)).toEqual(['setRisk']);
  });

  it('lets a read-only token read but not act (403 E0000006)', async () => {
    const auth = 'SSWS okta-read-only';
    expect((await okta(`/api/v1/users/${kim}`, { auth })).status).toBe(200);
    const refused = await okta(`/api/v1/users/${kim}/lifecycle/suspend`, { method: 'POST', auth });
    expect([refused.status, refused.body.errorCode]).toEqual([403, 'E0000006']);
    expect(idp.stand.okta.user(kim)?.status).toBe('ACTIVE');
  });

  it('fails the next requests when told, in Okta shape, then answers again', async () => {
    idp.stand.control.addFault({ provider: 'okta', status: 503, times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await okta(`/api/v1/users/${kim}`)).status);
    expect(statuses).toEqual([503, 503, 200]);
    expect(idp.requests[0]?.fault).toContain('503');
  });
});
