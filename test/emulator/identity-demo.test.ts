/**
 * `npm start`'s identity demo: the emulator serves both providers at its origin with a directory
 * made from its leaked logins, the demo config names them there, the local run supplies their
 * secrets, and the logins npm start's first credential poll finds meet every verdict. Also the
 * stand-in's knobs over the emulator's `/_emulator/identity` routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_EMULATOR, withLocalSecrets } from '../../lib/cli/local.ts';
import { Dataset } from '../../lib/emulator/dataset.ts';
import { CYCLE, demoIdentityOptions, demoLogins } from '../../lib/emulator/identity/demo-directory.ts';
import { DEMO_ENTRA, DEMO_OKTA, type RunningEmulator, startEmulator } from '../../lib/emulator/index.ts';
import type { EntraConfig, OktaConfig } from '../../lib/identity/schema.ts';
import { type Account, type Answer, decideVerdict, leakDateOf } from '../../lib/identity/verdict.ts';
import { VERDICTS } from '../../lib/identity/words.ts';
import { demoConfig, demoConfigAt, demoConfigInput } from '../../lib/rules/demo-config.ts';
import { loadAlertsConfig } from '../../lib/rules/source.ts';
import type { Credential } from '../../lib/upstream/schemas.ts';

const anchor = new Date('2026-11-20T12:00:00Z');
const DAY = 86_400_000;
let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ seed: LOCAL_EMULATOR.seed, anchor, now: () => anchor.getTime() });
});
afterAll(async () => {
  await emu?.close();
});

/** What npm start's first credential cycle finds: each demo domain's leaks of the lookback (P7D). */
async function polledCredentials(): Promise<Credential[]> {
  const { lookback, domains } = demoConfigInput.sources.credentials;
  expect(lookback).toBe('P7D');
  const found: Credential[] = [];
  for (const fqdn of domains) {
    let from: string | null = null;
    do {
      const answer = await fetch(`${emu.url}/firework/v4/credentials/global/_search`, {
        method: 'POST',
        headers: { authorization: 'Bearer emu-acme-token', 'content-type': 'application/json' },
        body: JSON.stringify({
          query: { type: 'domain', fqdn },
          filters: { imported_at: { gte: new Date(anchor.getTime() - 7 * DAY).toISOString() } },
          size: 100,
          order: 'asc',
          ...(from ? { from } : {}),
        }),
      });
      const page = (await answer.json()) as { items: Credential[]; next: string | null };
      found.push(...page.items);
      from = page.items.length ? page.next : null;
    } while (from);
  }
  return found;
}

/** An Entra lookup as docs/identity.md has it: a token, the UPN, then `mail eq '…'`. */
async function entraAnswer(provider: EntraConfig, secret: string, login: string): Promise<Answer> {
  const form = new URLSearchParams({
    client_id: provider.clientId,
    client_secret: secret,
    scope: 'https://graph.microsoft.com/.default',
    grant_type: 'client_credentials',
  });
  const grant = await fetch(`${provider.loginUrl}/${provider.tenantId}/oauth2/v2.0/token`, {
    method: 'POST',
    body: form,
  });
  expect(grant.status).toBe(200);
  const { access_token } = (await grant.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${access_token}` };
  const select = '$select=id,displayName,accountEnabled,lastPasswordChangeDateTime,onPremisesSyncEnabled';
  let answer = await fetch(`${provider.graphUrl}/v1.0/users/${encodeURIComponent(login)}?${select}`, {
    headers,
  });
  let user: Record<string, unknown> | undefined;
  if (answer.status === 200) user = (await answer.json()) as Record<string, unknown>;
  else {
    expect(answer.status).toBe(404);
    const filter = encodeURIComponent(`mail eq '${login.replaceAll("'", "''")}'`);
    answer = await fetch(`${provider.graphUrl}/v1.0/users?$filter=${filter}&${select}`, { headers });
    expect(answer.status).toBe(200);
    user = ((await answer.json()) as { value: Record<string, unknown>[] }).value[0];
  }
  if (!user) return { found: false };
  const account: Account = {
    id: user.id as string,
    displayName: user.displayName as string,
    enabled: user.accountEnabled as boolean,
    passwordChangedAt: user.lastPasswordChangeDateTime as string,
    unmanaged: user.onPremisesSyncEnabled === true,
  };
  return { found: true, account };
}

async function oktaAnswer(provider: OktaConfig, token: string, login: string): Promise<Answer> {
  const answer = await fetch(`${provider.orgUrl}/api/v1/users/${encodeURIComponent(login)}`, {
    headers: { authorization: `SSWS ${token}`, accept: 'application/json' },
  });
  if (answer.status === 404) return { found: false };
  expect(answer.status).toBe(200);
  const user = (await answer.json()) as {
    id: string;
    status: string;
    passwordChanged: string | null;
    credentials: { provider: { type: string } };
  };
  const account: Account = {
    id: user.id,
    enabled: !['STAGED', 'PROVISIONED', 'SUSPENDED', 'DEPROVISIONED'].includes(user.status),
    passwordChangedAt: user.passwordChanged,
    unmanaged: user.credentials.provider.type !== 'OKTA',
  };
  return { found: true, account };
}

describe("npm start's demo", () => {
  it('names both providers at the emulator, with secrets the local run supplies', () => {
    const config = demoConfigAt(emu.url);
    expect(config.identity?.providers).toEqual({
      [DEMO_ENTRA.name]: expect.objectContaining({
        type: 'entra',
        domains: ['acme.test'],
        loginUrl: `${emu.url}/entra/login`,
        graphUrl: `${emu.url}/entra/graph`,
        clientSecret: { secret: DEMO_ENTRA.secretName },
      }),
      [DEMO_OKTA.name]: expect.objectContaining({
        type: 'okta',
        domains: ['example.com'],
        orgUrl: `${emu.url}/okta`,
        token: { secret: DEMO_OKTA.secretName },
      }),
    });
    const secrets = withLocalSecrets(
      { localEmulatorUrl: emu.url },
      { mine: 'x', [DEMO_OKTA.secretName]: 'own' },
    );
    expect(secrets).toEqual({
      mine: 'x',
      [DEMO_ENTRA.secretName]: DEMO_ENTRA.clientSecret,
      [DEMO_OKTA.secretName]: 'own',
    });
    expect(withLocalSecrets({}, { mine: 'x' })).toEqual({ mine: 'x' });
    // The plain demo config (no emulator of npm start's) names no provider and needs no secret.
    expect(demoConfig.identity).toBeUndefined();
  });

  it('is what loadAlertsConfig gives under npm start only, and never when a config file is named', async () => {
    const local = await loadAlertsConfig({ localEmulatorUrl: emu.url });
    expect(local.source).toBe('built-in demo config');
    expect(Object.keys(local.config.identity?.providers ?? {})).toEqual([DEMO_ENTRA.name, DEMO_OKTA.name]);
    expect((await loadAlertsConfig({})).config.identity).toBeUndefined();
    await expect(
      loadAlertsConfig({ alertsConfig: 'missing.json', localEmulatorUrl: emu.url }),
    ).rejects.toThrow();
  });

  it('meets every verdict, for each provider, among the logins npm start polls (seed LOCAL_EMULATOR)', async () => {
    const providers = demoConfigAt(emu.url).identity?.providers ?? {};
    const entra = providers[DEMO_ENTRA.name] as EntraConfig;
    const okta = providers[DEMO_OKTA.name] as OktaConfig;
    const secrets: Record<string, unknown> = withLocalSecrets({ localEmulatorUrl: emu.url }, {});
    const credentials = await polledCredentials();
    expect(credentials.length).toBeGreaterThan(10);
    const verdicts = { entra: new Map<string, string>(), okta: new Map<string, string>() };
    for (const credential of credentials) {
      const login = credential.identity_name;
      const isEntra = login.endsWith('@acme.test');
      const answer = isEntra
        ? await entraAnswer(entra, secrets[DEMO_ENTRA.secretName] as string, login)
        : await oktaAnswer(okta, secrets[DEMO_OKTA.secretName] as string, login);
      const verdict = decideVerdict(isEntra ? 'corp' : 'shop', answer, leakDateOf(credential));
      const word = verdict.reason ? `${verdict.verdict}:${verdict.reason}` : verdict.verdict;
      verdicts[isEntra ? 'entra' : 'okta'].set(login, word);
    }
    const every = [...VERDICTS.filter((v) => v !== 'unknown'), 'unknown:unmanaged'].sort();
    expect([...new Set(verdicts.entra.values())].sort()).toEqual(every);
    expect([...new Set(verdicts.okta.values())].sort()).toEqual(every);
    // The mail search found one whose UPN is not the leaked login.
    expect(
      emu.emulator.identity.control.calls({ endpoint: 'graphUsers' }).some((r) => r.status === 200),
    ).toBe(true);
    // Dates alone: no password or hash of a leak ever reached a provider.
    const sent = JSON.stringify(emu.emulator.identity.control.requests);
    for (const credential of credentials) expect(sent).not.toContain(credential.hash);
  });

  it('is the same directory for the same seed, and every case comes in the first five logins', () => {
    const a = demoIdentityOptions(new Dataset({ seed: LOCAL_EMULATOR.seed, anchor }));
    const b = demoIdentityOptions(new Dataset({ seed: LOCAL_EMULATOR.seed, anchor }));
    expect(a).toEqual(b);
    expect(new Set(CYCLE.slice(0, 5)).size).toBe(5);
    const logins = demoLogins(new Dataset({ seed: LOCAL_EMULATOR.seed, anchor }), 'example.com');
    expect(logins.some((l) => l.login.endsWith('@mail.example.com'))).toBe(true);
    expect(a.okta?.users?.length).toBe(logins.filter((l) => l.case !== 'no_account').length);
  });
});

describe('the knobs over /_emulator/identity', () => {
  const admin = (path: string, method = 'GET', body?: unknown) =>
    fetch(`${emu.url}/_emulator/identity${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });

  it('shows the state, and changes settings, accounts, faults and the logs', async () => {
    const state = (await (await admin('')).json()) as { entra: { tenantId: string; users: unknown[] } };
    expect(state.entra.tenantId).toBe(DEMO_ENTRA.tenantId);
    expect(state.entra.users.length).toBeGreaterThan(10);

    const set = await admin('/settings', 'PUT', {
      latencyMs: 0,
      entra: { roles: ['User.Read.All'] },
      okta: { rateLimit: { limit: 50, remaining: 3 } },
    });
    expect(set.status).toBe(200);
    expect(emu.emulator.identity.entra.roles).toEqual(['User.Read.All']);
    expect((await admin('/settings', 'PUT', { okta: { rateLimit: { limit: -1 } } })).status).toBe(400);

    const added = await admin('/okta/users', 'POST', { login: 'new.hire@example.com', status: 'SUSPENDED' });
    expect(added.status).toBe(201);
    const headers = { authorization: `SSWS ${DEMO_OKTA.token}` };
    const read = await fetch(`${emu.url}/okta/api/v1/users/new.hire%40example.com`, { headers });
    expect(((await read.json()) as { status: string }).status).toBe('SUSPENDED');
    expect(read.headers.get('x-rate-limit-remaining')).toBe('2');
    expect((await admin('/okta/users/new.hire%40example.com', 'PATCH', { status: 'ACTIVE' })).status).toBe(
      200,
    );
    expect(emu.emulator.identity.okta.user('new.hire@example.com')?.status).toBe('ACTIVE');
    expect((await admin('/okta/users/new.hire%40example.com', 'DELETE')).status).toBe(204);

    expect((await admin('/faults', 'POST', { provider: 'okta', status: 500 })).status).toBe(204);
    expect((await fetch(`${emu.url}/okta/api/v1/users/x%40example.com`, { headers })).status).toBe(500);
    expect((await admin('/throttle', 'POST', { provider: 'entra', retryAfter: 3 })).status).toBe(204);
    expect(emu.emulator.identity.control.pendingFaults()).toEqual([
      expect.objectContaining({ provider: 'entra', status: 429, retryAfter: 3 }),
    ]);
    expect((await admin('/faults', 'DELETE')).status).toBe(204);

    const log = (await (await admin('/requests')).json()) as { requests: { path: string; status: number }[] };
    expect(log.requests.at(-1)).toMatchObject({ path: '/okta/api/v1/users/x%40example.com', status: 500 });
    expect((await admin('/requests', 'DELETE')).status).toBe(204);
    expect(emu.emulator.identity.control.requests).toEqual([]);
  });
});
