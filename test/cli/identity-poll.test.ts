/**
 * Identity verdicts end to end (issue 36): `poll credentials --once` through the real CLI (runCli
 * in this process: each run is a fresh runtime; what lasts across runs is in the table), against the
 * emulator and dynalite over HTTP, the providers' stand-in and real receivers. Each verdict is
 * reached and carried as `_identity`; a route on `identity: ["at_risk"]` gets exactly the at-risk
 * logins; a login is looked up once an hour across cycles; a provider down or slow gives
 * `unknown` while every alert still arrives once, in bounded time; no password or hash reaches a
 * provider, and no secret reaches the output.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { captureIo } from '../helpers/io.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const emu = useEmulator({ credentials: 0 });
const db = useDynalite();
let idp: IdentityProviders;
let all: Receiver;
let page: Receiver;
let dir: string;
let env: Record<string, string>;

const LONG_AGO = '2001-01-01T00:00:00Z';
const KINDS = {
  'risky@acme.com': 'at_risk',
  'changed@acme.com': 'rotated',
  'off@acme.com': 'disabled',
  'ghost@acme.com': 'no_account',
  'synced@acme.com': 'unknown',
} as const;

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: [
        { userPrincipalName: 'risky@acme.com', lastPasswordChangeDateTime: LONG_AGO },
        {
          userPrincipalName: 'changed@acme.com',
          lastPasswordChangeDateTime: new Date(Date.now() + 86_400_000).toISOString(),
        },
        { userPrincipalName: 'off@acme.com', accountEnabled: false },
        { userPrincipalName: 'synced@acme.com', onPremisesSyncEnabled: true },
        { userPrincipalName: 'slow@acme.com', lastPasswordChangeDateTime: LONG_AGO },
      ],
    },
  });
  all = await startReceiver();
  page = await startReceiver();
  dir = await mkdtemp(join(tmpdir(), 'ea-identity-'));
  const config = join(dir, 'alerts.config.json');
  await writeFile(
    config,
    JSON.stringify({
      sources: { credentials: { domains: ['acme.com'], lookback: 'P1D' } },
      identity: { providers: idp.providers({ entra: ['acme.com'] }) },
      destinations: { siem: { type: 'webhook', url: all.url }, oncall: { type: 'webhook', url: page.url } },
      routes: [
        { name: 'all', to: ['siem'] },
        { name: 'live accounts', match: { identity: ['at_risk'] }, to: ['oncall'] },
      ],
      upstream: { requestsPerSecond: 200, searchRequestsPerSecond: 200 },
    }),
  );
  const secrets = join(dir, 'secrets.json');
  await writeFile(secrets, JSON.stringify(idp.secrets));
  env = {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: await db.table(),
    ALERTS_CONFIG: config,
    SECRETS_FILE: secrets,
  };
});
afterAll(async () => {
  await Promise.all([idp.close(), all.close(), page.close()]);
});

type Item = {
  id: number;
  identity_name: string;
  _identity?: { verdict: string; reason?: string; provider: string };
};
const items = (r: Receiver) => r.requests.flatMap((q) => (q.json() as { items: Item[] }).items);
const lookups = () =>
  idp.requests.filter((r) => r.endpoint === 'graphUser' || r.endpoint === 'graphUsers').length;
async function cli(argv: string[]) {
  const io = captureIo({ ...env });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}
const poll = () => cli(['poll', 'credentials', '--once']);

describe('poll credentials with an identity provider', () => {
  it('reaches each verdict, routes exactly the at-risk logins, and sends nothing but logins to the provider', async () => {
    const leaked = emu.running.emulator.dataset.appendCredentials(10, { logins: Object.keys(KINDS) });
    const run = await poll();
    expect(run.code, run.err).toBe(0);
    const got = items(all);
    expect(got.map((i) => i.id).sort()).toEqual(leaked.map((c) => c.id).sort());
    for (const item of got) {
      expect(item._identity?.verdict).toBe(KINDS[item.identity_name as keyof typeof KINDS]);
      expect(item._identity?.provider).toBe('corp');
    }
    expect(got.find((i) => i.identity_name === 'synced@acme.com')?._identity?.reason).toBe('unmanaged');
    expect(items(page).map((i) => i.identity_name)).toEqual(['risky@acme.com', 'risky@acme.com']);
    // Ten leaks of five people: five logins looked up (a mail search for the one with no account).
    expect(idp.requests.filter((r) => r.endpoint === 'graphUser')).toHaveLength(5);
    const secrets = [...leaked.flatMap((c) => [c.password, c.hash]), ...Object.values(idp.secrets)];
    for (const request of idp.requests) {
      const seen = JSON.stringify({ path: request.path, query: request.query, body: request.body });
      for (const secret of leaked.flatMap((c) => [c.password, c.hash])) expect(seen).not.toContain(secret);
    }
    const nonToken = idp.requests.filter((r) => r.endpoint !== 'entraToken');
    expect(nonToken.some((r) => JSON.stringify(r).includes(idp.entra.clientSecret))).toBe(false);
    for (const secret of secrets) expect(`${run.out}${run.err}`).not.toContain(secret);
  });

  it('status lists the provider with its last lookup, as the poll left it', async () => {
    const run = await cli(['status']);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('identity providers:');
    const line = run.out.split('\n').find((l) => l.includes('corp')) ?? '';
    expect(line).toContain('Entra ID');
    expect(line).toMatch(/ago/);
    expect(line).toMatch(/ no\s*$/);
  });

  it('a login is looked up once an hour across cycles: new leaks of the same people cost no lookup', async () => {
    const before = lookups();
    all.requests.length = 0;
    const leaked = emu.running.emulator.dataset.appendCredentials(5, { logins: Object.keys(KINDS) });
    const run = await poll();
    expect(run.code, run.err).toBe(0);
    expect(lookups()).toBe(before);
    expect(
      items(all)
        .map((i) => i.id)
        .sort(),
    ).toEqual(leaked.map((c) => c.id).sort());
    expect(
      items(all).every((i) => i._identity?.verdict === KINDS[i.identity_name as keyof typeof KINDS]),
    ).toBe(true);
  });

  it('a provider down or slow: the logins are unknown, every alert arrives once, and the cycle is not held', async () => {
    all.requests.length = 0;
    page.requests.length = 0;
    idp.stand.control.addFault({ provider: 'entra', path: 'down', status: 503, times: 10 });
    idp.stand.control.addFault({ provider: 'entra', path: 'slow', hang: true });
    const leaked = emu.running.emulator.dataset.appendCredentials(4, {
      logins: ['down1@acme.com', 'down2@acme.com', 'slow@acme.com', 'down3@acme.com'],
    });
    const started = Date.now();
    const run = await poll();
    expect(run.code, run.err).toBe(0);
    // The hanging lookup ends at its 3 s (generous for a busy machine).
    expect(Date.now() - started).toBeLessThan(20_000);
    idp.stand.control.releaseHangs();
    const got = items(all);
    expect(got.map((i) => i.id).sort()).toEqual(leaked.map((c) => c.id).sort());
    expect(got.every((i) => i._identity?.verdict === 'unknown' && i._identity.reason === 'unavailable')).toBe(
      true,
    );
    expect(items(page)).toEqual([]);
    // Once: polling again sends nothing more, and the verdicts stand.
    const again = await poll();
    expect(again.code).toBe(0);
    expect(items(all)).toHaveLength(4);
  });
});
