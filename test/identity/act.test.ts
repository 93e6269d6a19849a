/**
 * Acting on accounts (lib/identity/act.ts) against real dynalite and the providers' stand-in over
 * HTTP: once per id through replays and 20 calls at once; only on a login with a stored verdict of
 * the tenant; a refusal names the missing permission and changes nothing; a call without an answer
 * is made once more within 5 minutes, else its outcome is unknown and reported; audited; followed up
 * wherever the login's credentials went.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { forgetEntraToken } from '../../lib/entra-token.ts';
import { actOnAccounts, finishAccountActions, RESUME_WINDOW_MS } from '../../lib/identity/act.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { accountDeps } from '../helpers/account-actions.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { configFrom } from '../helpers/world.ts';

const db = useDynalite();
let idp: IdentityProviders;

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: [
        { userPrincipalName: 'jane@acme.com', id: 'u-jane' },
        { userPrincipalName: 'bob@acme.com', id: 'u-bob' },
      ],
    },
    okta: { users: [{ login: 'kim@acme.io', id: '00ukim' }] },
  });
  // Every permission the actions need; a test that takes one away buys a token without it.
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
});
afterAll(() => idp.close());

const verdict = (provider: string, userId: string): IdentityVerdict => ({
  provider,
  verdict: 'at_risk',
  userId,
  enabled: true,
  leakDate: '2026-11-20T00:00:00Z',
});

async function setup(options: { tenant?: number; callTimeoutMs?: number } = {}) {
  const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
  const table = await db.table();
  const io = { client: db.client, tableName: table, clock };
  const store = new IdentityStore(io);
  const scope = options.tenant ?? 'top';
  const key = (id: number) => (options.tenant ? `${options.tenant}:${id}` : String(id));
  await store.keepVerdicts(
    [
      { key: key(1), verdict: verdict('corp', 'u-jane'), scope, login: 'jane@acme.com' },
      { key: key(2), verdict: verdict('corp', 'u-jane'), scope, login: 'jane@acme.com' },
      { key: key(3), verdict: verdict('corp', 'u-bob'), scope, login: 'bob@acme.com' },
      { key: key(4), verdict: verdict('shop', '00ukim'), scope, login: 'kim@acme.io' },
    ],
    true,
  );
  const config = configFrom({
    destinations: { t: { type: 'console' } },
    ...(options.tenant
      ? {
          tenants: [
            {
              id: options.tenant,
              name: 't',
              identity: { providers: idp.providers({ entra: ['acme.com'], okta: ['acme.io'] }) },
            },
          ],
        }
      : { identity: { providers: idp.providers({ entra: ['acme.com'], okta: ['acme.io'] }) } }),
  });
  const { deps, followUps, reports } = accountDeps(idp, io, config, {
    store,
    callTimeoutMs: options.callTimeoutMs ?? 3_000,
  });
  return { clock, deps, followUps, reports, io, store };
}

const done = (action: string, login: string) =>
  idp.actions.filter((a) => a.action === action && a.login === login).length;

describe('acting on accounts', () => {
  it('acts once per id through a replay and 20 calls at once, audits it, and follows up every credential of the login', async () => {
    const s = await setup();
    const before = done('revokeSessions', 'jane@acme.com');
    const request = {
      action: 'revokeSessions' as const,
      logins: ['jane@acme.com'],
      by: 'api:alice',
      id: 'a-1',
    };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => actOnAccounts(s.deps, request)));
    const again = await actOnAccounts(s.deps, request);
    expect(done('revokeSessions', 'jane@acme.com') - before).toBe(1);
    for (const o of [...outcomes, again]) expect(o.results).toEqual([{ login: 'jane@acme.com', ok: true }]);
    expect(again.replayed).toBe(true);
    expect(s.followUps.map((f) => f.key).sort()).toEqual(['1', '2']);
    expect(s.followUps[0]?.action).toMatchObject({ id: 'a-1', type: 'revokeSessions', by: 'api:alice' });
    const trail = await new ActionStore(s.io).auditTrail();
    expect(trail.filter((e) => e.id === 'a-1')).toHaveLength(1);
    expect(trail[0]).toMatchObject({ type: 'revokeSessions', by: 'api:alice', uids: ['jane@acme.com'] });
  });

  it('only on a login with a stored verdict of that tenant: another tenant’s or a never-leaked login gets no call', async () => {
    const s = await setup({ tenant: 7 });
    const calls = idp.requests.length;
    const outcome = await actOnAccounts(s.deps, {
      action: 'revokeSessions',
      logins: ['nobody@acme.com'],
      tenant: 7,
      by: 'cli:x',
    });
    expect(outcome.results[0]).toMatchObject({ ok: false, error: expect.stringContaining('never leaked') });
    const top = await actOnAccounts(s.deps, {
      action: 'revokeSessions',
      logins: ['jane@acme.com'],
      by: 'cli:x',
    });
    expect(top.results[0]?.ok).toBe(false);
    expect(idp.requests.length).toBe(calls);
  });

  it('a refusal for a missing permission names it and changes nothing', async () => {
    const s = await setup();
    const roles = idp.stand.entra.roles;
    idp.stand.entra.roles = ['User.Read.All'];
    const app = idp.providers({ entra: ['acme.com'] }).corp as {
      loginUrl: string;
      tenantId: string;
      clientId: string;
    };
    forgetEntraToken(
      { ...app, clientSecret: idp.entra.clientSecret },
      'https://graph.microsoft.com/.default',
    );
    try {
      const before = idp.actions.length;
      const outcome = await actOnAccounts(s.deps, {
        action: 'disable',
        logins: ['bob@acme.com'],
        by: 'cli:x',
      });
      expect(outcome.results[0]?.ok).toBe(false);
      expect(outcome.results[0]?.error).toContain('User.EnableDisableAccount.All');
      expect(idp.actions.length).toBe(before);
      expect(idp.stand.entra.user('bob@acme.com')?.accountEnabled).toBe(true);
      expect(s.followUps).toEqual([]);
    } finally {
      idp.stand.entra.roles = roles;
      forgetEntraToken(
        { ...app, clientSecret: idp.entra.clientSecret },
        'https://graph.microsoft.com/.default',
      );
    }
  });

  it('Okta without userRisk cannot confirm compromised: said, and no call', async () => {
    const s = await setup();
    const calls = idp.requests.length;
    const outcome = await actOnAccounts(s.deps, {
      action: 'confirmCompromised',
      logins: ['kim@acme.io'],
      by: 'cli:x',
    });
    if (idp.stand.okta.userRisk) expect(outcome.results[0]?.ok).toBe(true);
    else {
      expect(outcome.results[0]?.error).toContain('userRisk');
      expect(idp.requests.length).toBe(calls);
    }
  });

  it('a call without an answer is made once more within 5 minutes, then the outcome is unknown, reported, and left to a person', async () => {
    const s = await setup({ callTimeoutMs: 150 });
    // The provider acts, but its answer comes too late twice.
    idp.stand.control.addFault({ provider: 'entra', path: 'u-bob', delayMs: 400, times: 2 });
    const before = done('requirePasswordChange', 'bob@acme.com');
    const first = await actOnAccounts(s.deps, {
      action: 'requirePasswordChange',
      logins: ['bob@acme.com'],
      by: 'cli:x',
      id: 'p-1',
    });
    expect(first.open).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    // A pass a minute later: one more call (its answer is late too).
    s.clock.advance(61_000);
    await finishAccountActions(s.deps);
    await new Promise((r) => setTimeout(r, 500));
    // Another pass: no more calls; unknown, reported.
    s.clock.advance(61_000);
    await finishAccountActions(s.deps);
    expect(done('requirePasswordChange', 'bob@acme.com') - before).toBe(2);
    const record = await s.deps.actions.get('p-1');
    expect(record?.status).toBe('done');
    expect(record?.progress['bob@acme.com']?.result).toMatchObject({ ok: false, outcome: 'unknown' });
    expect(s.reports).toHaveLength(1);
    expect(s.reports[0]).toContain('outcome unknown');
  });

  it('interrupted and taken up after 5 minutes: no second call at all', async () => {
    const s = await setup({ callTimeoutMs: 150 });
    idp.stand.control.addFault({ provider: 'entra', path: 'u-jane', delayMs: 400, times: 1 });
    const before = done('disable', 'jane@acme.com');
    const first = await actOnAccounts(s.deps, {
      action: 'disable',
      logins: ['jane@acme.com'],
      by: 'cli:x',
      id: 'd-1',
    });
    expect(first.open).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    s.clock.advance(RESUME_WINDOW_MS + 1_000);
    await finishAccountActions(s.deps);
    expect(done('disable', 'jane@acme.com') - before).toBe(1);
    const record = await s.deps.actions.get('d-1');
    expect(record?.progress['jane@acme.com']?.result?.outcome).toBe('unknown');
    idp.stand.entra.updateUser('jane@acme.com', { accountEnabled: true });
  });
});
