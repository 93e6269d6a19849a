/**
 * The Entra and Okta clients (lib/identity/entra.ts, okta.ts) against the providers' stand-in over
 * HTTP (test/helpers/identity-providers.ts), which checks what the real services check: the token,
 * the `$select`, the auth header. Each account kind comes back as the verdict rules need it; each
 * refusal, failure and rate answer as the lookup step treats it; and nothing but the login leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupResult, ProviderClient } from '../../lib/identity/client.ts';
import { entraClient } from '../../lib/identity/entra.ts';
import { oktaClient } from '../../lib/identity/okta.ts';
import type { EntraConfig, OktaConfig } from '../../lib/identity/schema.ts';
import { decideVerdict } from '../../lib/identity/verdict.ts';
import { standInClients } from '../helpers/identity-lookup.ts';
import type { IdentityProviders } from '../helpers/identity-providers.ts';

const LEAK = '2026-11-20T00:00:00Z';
let idp: IdentityProviders;
let entra: ProviderClient;
let okta: ProviderClient;

beforeAll(async () => {
  ({ idp, entra, okta } = await standInClients({
    entra: {
      users: [
        {
          userPrincipalName: 'old@acme.com',
          displayName: 'Old Pass',
          lastPasswordChangeDateTime: '2026-03-01T00:00:00Z',
        },
        { userPrincipalName: 'new@acme.com', lastPasswordChangeDateTime: '2026-11-22T00:00:00Z' },
        { userPrincipalName: 'off@acme.com', accountEnabled: false },
        { userPrincipalName: 'synced@acme.com', onPremisesSyncEnabled: true },
        {
          userPrincipalName: 'kim.lee@acme.onmicrosoft.com',
          mail: "kim.o'lee@acme.com",
          lastPasswordChangeDateTime: '2026-01-01T00:00:00Z',
        },
      ],
    },
    okta: {
      users: [
        { login: 'old@acme.io', passwordChanged: '2026-03-01T00:00:00.000Z' },
        { login: 'never@acme.io', passwordChanged: null },
        { login: 'new@acme.io', passwordChanged: '2026-11-25T00:00:00.000Z' },
        { login: 'staged@acme.io', status: 'STAGED' },
        { login: 'locked@acme.io', status: 'LOCKED_OUT', passwordChanged: '2026-01-01T00:00:00.000Z' },
        { login: 'ad@acme.io', providerType: 'ACTIVE_DIRECTORY' },
        { login: 'a/b@acme.io', passwordChanged: '2026-11-25T00:00:00.000Z' },
      ],
    },
  }));
});
afterAll(() => idp.close());

const ctx = (ms = 3_000) => ({ fetch, now: () => Date.now(), signal: AbortSignal.timeout(ms) });
const verdict = (result: LookupResult) =>
  'answer' in result ? decideVerdict('p', result.answer, LEAK).verdict : Object.keys(result)[0];

describe('the Entra ID client', () => {
  it('finds each kind of account, a mail address through the mail search, and no one for an unknown login', async () => {
    const found: Record<string, string | undefined> = {};
    for (const login of [
      'old@acme.com',
      'new@acme.com',
      'off@acme.com',
      'synced@acme.com',
      "kim.o'lee@acme.com",
      'nobody@acme.com',
    ])
      found[login] = verdict(await entra.lookup(login, ctx()));
    expect(found).toEqual({
      'old@acme.com': 'at_risk',
      'new@acme.com': 'rotated',
      'off@acme.com': 'disabled',
      'synced@acme.com': 'unknown',
      "kim.o'lee@acme.com": 'at_risk',
      'nobody@acme.com': 'no_account',
    });
    const old = await entra.lookup('old@acme.com', ctx());
    expect(old).toMatchObject({
      answer: { found: true, account: { displayName: 'Old Pass', enabled: true } },
    });
  });

  it('asks for the deciding fields by name, buys one token for many lookups, and sends no secret but in the token request', async () => {
    const before = idp.requests.length;
    for (let i = 0; i < 5; i++) await entra.lookup('old@acme.com', ctx());
    const seen = idp.requests.slice(before);
    expect(seen.filter((r) => r.endpoint === 'entraToken')).toHaveLength(0);
    for (const r of seen) {
      expect(r.query.$select).toContain('accountEnabled');
      expect(r.query.$select).toContain('lastPasswordChangeDateTime');
      expect(r.query.$select).toContain('onPremisesSyncEnabled');
    }
    const tokens = idp.requests.filter((r) => r.endpoint === 'entraToken');
    expect(tokens).toHaveLength(1);
    const others = idp.requests.filter((r) => r.endpoint !== 'entraToken');
    expect(others.some((r) => JSON.stringify(r).includes(idp.entra.clientSecret))).toBe(false);
  });

  it('lookups at the same moment share one token request, and one giving up fails none of the others', async () => {
    const { forgetEntraToken } = await import('../../lib/entra-token.ts');
    const providers = idp.providers({ entra: ['acme.com'] }) as { corp: EntraConfig };
    forgetEntraToken(
      { ...providers.corp, clientSecret: idp.entra.clientSecret },
      'https://graph.microsoft.com/.default',
    );
    const before = idp.requests.filter((r) => r.endpoint === 'entraToken').length;
    const impatient = new AbortController();
    const results = Promise.all(Array.from({ length: 8 }, () => entra.lookup('old@acme.com', ctx())));
    const gaveUp = entra.lookup('old@acme.com', { ...ctx(), signal: impatient.signal });
    impatient.abort();
    expect(((await gaveUp) as { failed?: string }).failed).toBeDefined();
    expect((await results).every((r) => 'answer' in r)).toBe(true);
    expect(idp.requests.filter((r) => r.endpoint === 'entraToken').length - before).toBe(1);
  });

  it('a wrong client secret is a refusal that names what to check, without the secret', async () => {
    const providers = idp.providers({ entra: ['acme.com'] }) as { corp: EntraConfig };
    const bad = entraClient('corp', providers.corp, 'not-the-secret-xyz');
    const result = await bad.lookup('old@acme.com', ctx());
    expect(result).toHaveProperty('refused');
    const text = (result as { refused: string }).refused;
    expect(text).toContain('invalid_client');
    expect(text).toContain('client secret');
    expect(text).not.toContain('not-the-secret-xyz');
  });

  it('an app without User.Read.All is refused with the permission named', async () => {
    const roles = idp.stand.entra.roles;
    idp.stand.entra.roles = [];
    const providers = idp.providers({ entra: ['acme.com'] }) as { corp: EntraConfig };
    // Another app id: a token of its own (the stand-in fixes roles when it issues one).
    const fresh = entraClient(
      'corp',
      { ...providers.corp, tenantId: providers.corp.tenantId },
      `${idp.entra.clientSecret}`,
    );
    try {
      const { forgetEntraToken } = await import('../../lib/entra-token.ts');
      forgetEntraToken(
        { ...providers.corp, clientSecret: idp.entra.clientSecret },
        'https://graph.microsoft.com/.default',
      );
      const result = await fresh.lookup('old@acme.com', ctx());
      expect((result as { refused: string }).refused).toContain('User.Read.All');
    } finally {
      idp.stand.entra.roles = roles;
      const { forgetEntraToken } = await import('../../lib/entra-token.ts');
      forgetEntraToken(
        { ...providers.corp, clientSecret: idp.entra.clientSecret },
        'https://graph.microsoft.com/.default',
      );
    }
  });

  it('a 429 says when to ask again; an answer later than the lookup’s time is a failure, not a hang', async () => {
    await entra.lookup('old@acme.com', ctx()); // a token in hand: the 429 is the lookup's
    idp.stand.throttle('entra', 1, 7);
    const throttled = await entra.lookup('old@acme.com', ctx());
    expect(throttled).toHaveProperty('failed');
    const retryAt = (throttled as { retryAt?: number }).retryAt ?? 0;
    expect(retryAt - Date.now()).toBeGreaterThan(5_000);
    expect(retryAt - Date.now()).toBeLessThanOrEqual(7_000);
    idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', hang: true });
    const started = Date.now();
    const hung = await entra.lookup('old@acme.com', ctx(200));
    // Ended by its 200 ms, not hung (generous, for a busy machine).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((hung as { failed: string }).failed).toContain('no answer in time');
    idp.stand.control.releaseHangs();
  });
});

describe('the Okta client', () => {
  it('finds each kind of account by its status, password date and credentials provider', async () => {
    const found: Record<string, string | undefined> = {};
    for (const login of [
      'old@acme.io',
      'never@acme.io',
      'new@acme.io',
      'staged@acme.io',
      'locked@acme.io',
      'ad@acme.io',
      'a/b@acme.io',
      'gone@acme.io',
    ])
      found[login] = verdict(await okta.lookup(login, ctx()));
    expect(found).toEqual({
      'old@acme.io': 'at_risk',
      'never@acme.io': 'at_risk',
      'new@acme.io': 'rotated',
      'staged@acme.io': 'disabled',
      'locked@acme.io': 'at_risk',
      'ad@acme.io': 'unknown',
      'a/b@acme.io': 'rotated',
      'gone@acme.io': 'no_account',
    });
  });

  it('sends the token as SSWS and nothing but the login; a bad token is a refusal', async () => {
    const last = idp.requests.filter((r) => r.provider === 'okta').at(-1);
    expect(last?.headers.authorization).toBe(`SSWS ${idp.okta.token}`);
    expect(last?.body).toBe('');
    const bad = oktaClient(
      'shop',
      (idp.providers({ okta: ['acme.io'] }) as { shop: OktaConfig }).shop,
      'wrong-token-abc',
    );
    const result = await bad.lookup('old@acme.io', ctx());
    expect((result as { refused: string }).refused).toContain('E0000011');
    expect((result as { refused: string }).refused).not.toContain('wrong-token-abc');
  });

  it('a 429 says when Okta’s rate resets (the pause every run keeps is lanes.int.test.ts’)', async () => {
    idp.stand.okta.setRateLimit({ limit: 600, remaining: 1 });
    const reset = Number(idp.stand.okta.rateHeaders()['X-Rate-Limit-Reset']);
    const last = await okta.lookup('old@acme.io', ctx());
    expect(last).toHaveProperty('answer');
    const refused = await okta.lookup('old@acme.io', ctx());
    expect(refused).toHaveProperty('failed');
    expect((refused as { retryAt?: number }).retryAt).toBeLessThanOrEqual(reset * 1000 + 1_000);
    idp.stand.okta.setRateLimit({ limit: 600, remaining: 600, windowSeconds: 60 });
  });
});
