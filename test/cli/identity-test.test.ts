/**
 * `identity test [provider] [--login L] [--tenant T]` through the real CLI (runCli in this
 * process; a process of its own only for npm start's folder, which it finds from its cwd), against
 * the identity providers' stand-in (Entra's token endpoint and Graph, Okta's users API, over
 * HTTP): the Entra token's permissions against what each use needs, a login's account and its
 * verdict for a leak dated today, an Okta token's read; refusals exit 3, failures 1, a scope
 * without identity 2; no secret and no token ever printed. With IDENTITY_SECRET_ID, the providers'
 * secrets are read as a worker reads them (Secrets Manager's stand-in): the identity secret first.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tokenRoles } from '../../lib/cli/commands/identity-test.ts';
import { runCli } from '../../lib/cli/run.ts';
import { forgetEntraToken } from '../../lib/entra-token.ts';
import { GRAPH_SCOPE } from '../../lib/identity/entra.ts';
import { runCliProcess } from '../helpers/cli-process.ts';
import {
  type IdentityProviders,
  identityProviders,
  STAND_IN_SECRET_NAMES,
} from '../helpers/identity-providers.ts';
import { captureIo } from '../helpers/io.ts';
import { secretsManager } from '../helpers/secrets-manager.ts';

let idp: IdentityProviders;
let dir: string;
let secretsFile: string;

const config = (extra: Record<string, unknown> = {}) => ({
  sources: { credentials: { domains: ['acme.test', 'example.com'] } },
  destinations: { local: { type: 'console' } },
  routes: [{ name: 'all', to: ['local'] }],
  identity: {
    providers: idp.providers({ entra: ['acme.test'], okta: ['example.com'] }),
    auto: { atRisk: ['revokeSessions'] },
  },
  ...extra,
});

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      users: [
        {
          userPrincipalName: 'kim.lee@acme.test',
          displayName: 'Kim <!channel> Lee',
          lastPasswordChangeDateTime: '2020-01-01T00:00:00Z',
        },
      ],
    },
    okta: { users: [{ login: 'sam.roe@example.com', providerType: 'ACTIVE_DIRECTORY' }] },
  });
  dir = await mkdtemp(join(tmpdir(), 'ea-identity-test-'));
  secretsFile = join(dir, 'secrets.json');
  await writeFile(secretsFile, JSON.stringify(idp.secrets));
});

afterEach(() => {
  idp.stand.control.clearFaults();
  idp.stand.entra.roles = ['User.Read.All', 'User.RevokeSessions.All'];
});

/**
 * The command in this process: its exit code and what it printed, as a process's run gives them.
 * A process starts with no Entra token; this one forgets the last run's, whose roles a test may
 * have changed since.
 */
async function inProcess(argv: string[], env: Record<string, string>) {
  forgetEntraToken(idp.entra, GRAPH_SCOPE);
  const io = captureIo(env);
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

async function identityTest(args: string[], cfg: unknown = config(), secrets = secretsFile) {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(cfg));
  const r = await inProcess(['identity', 'test', ...args], { ALERTS_CONFIG: file, SECRETS_FILE: secrets });
  // Never a secret, nor an access token (a JWT starts with eyJ).
  for (const value of Object.values(idp.secrets)) expect(`${r.out}${r.err}`).not.toContain(value);
  expect(`${r.out}${r.err}`).not.toMatch(/eyJ[\w-]{10,}/);
  return r;
}

describe('identity test', () => {
  it('every provider answers: the token’s permissions against each use, a login’s account and verdict, an Okta read (exit 0)', async () => {
    idp.stand.entra.roles = ['User.Read.All', 'User.RevokeSessions.All'];
    const r = await identityTest(['--login', 'kim.lee@acme.test']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const out = r.out;
    expect(out).toContain('Entra ID corp (top level): ok\n');
    expect(out).toContain(
      "  application permissions (the token's roles): User.Read.All, User.RevokeSessions.All\n",
    );
    expect(out).toMatch(/^ {4}FOR\s+LEAST PERMISSION\s+GRANTED$/m);
    expect(out).toMatch(/^ {4}lookups\s+User\.Read\.All\s+yes$/m);
    expect(out).toMatch(/^ {4}revokeSessions \(automatic\)\s+User\.RevokeSessions\.All\s+yes$/m);
    expect(out).toMatch(/^ {4}requirePasswordChange\s+User\.ReadWrite\.All\s+NO$/m);
    expect(out).toMatch(/^ {4}confirmCompromised\s+IdentityRiskyUser\.ReadWrite\.All\s+NO$/m);
    expect(out).toContain('User Administrator directory role');
    expect(out).toMatch(/ {4}account: found, id [\w-]+, "Kim <!channel> Lee"\n/);
    expect(out).toContain('    can sign in: yes\n');
    expect(out).toContain('    password last changed: 2020-01-01T00:00:00Z\n');
    expect(out).toContain('    password held by: this provider\n');
    expect(out).toMatch(/ {4}verdict for a leak dated today \(\d{4}-\d\d-\d\d\): at risk\n/);
    // Okta: the same login is outside its domains (said so), and looked up all the same.
    expect(out).toContain('Okta shop (top level): ok\n');
    expect(out).toContain(
      '  (kim.lee@acme.test is outside its domains, example.com: a run would not look it up here)\n',
    );
    expect(out).toContain('    account: none found\n');
    expect(out).toContain('    verdict for a leak dated today');
    expect(out.trimEnd().split('\n').at(-1)).toBe('every provider answered (2)');
    // Graph was asked with the verdict's fields selected; Okta with its API token.
    const graph = idp.requests.filter((q) => q.endpoint === 'graphUser');
    expect(graph.at(-1)?.query.$select).toContain('accountEnabled');
  });

  it('one provider by name; an Okta login whose password another directory holds: unknown (unmanaged)', async () => {
    const r = await identityTest(['shop', '--login', 'sam.roe@example.com']);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('Entra ID corp');
    expect(r.out).toContain(
      '  token: an API token, used as is (it has no scopes: its admin’s role decides what it may do)\n',
    );
    expect(r.out).toContain(
      '    password held by: another directory (synced from on-premises or delegated): its date says nothing\n',
    );
    expect(r.out).toMatch(/verdict for a leak dated today \([\d-]+\): unknown \(unmanaged\)\n/);
  });

  it('without --login, Okta is checked with a read of a made-up login', async () => {
    const before = idp.requests.length;
    const r = await identityTest(['shop']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('  read: ok (the token may read users: a made-up login was looked up)\n');
    const asked = idp.requests.slice(before).filter((q) => q.endpoint === 'oktaUser');
    expect(asked).toHaveLength(1);
  });

  it('a wrong Entra client secret: REFUSED, exit 3, the secret never printed', async () => {
    const wrong = join(dir, 'wrong.json');
    await writeFile(wrong, JSON.stringify({ ...idp.secrets, idpEntraSecret: 'not-the-secret-42' }));
    const r = await identityTest(['corp'], config(), wrong);
    expect(r.code).toBe(3);
    expect(r.out).toContain('Entra ID corp (top level): REFUSED\n');
    expect(r.out).toMatch(
      / {2}token: REFUSED: Entra token: HTTP 40\d \w+: check tenantId, clientId and the client secret\n/,
    );
    expect(r.out).toContain('1 refused our credentials (of 1); after a fix: exposure-alerts identity test\n');
    expect(r.out).not.toContain('not-the-secret-42');
  });

  it('a token without a permission to read users: lookups will be refused (exit 3)', async () => {
    idp.stand.entra.roles = ['User.RevokeSessions.All'];
    const r = await identityTest(['corp']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/^ {4}lookups\s+.*\s+NO$/m);
    expect(r.out).toContain('  lookups will be refused: grant the app User.Read.All');
  });

  it('Okta refusing its token is exit 3; a provider failing otherwise is exit 1', async () => {
    idp.stand.control.addFault({ provider: 'okta', endpoint: 'oktaUser', status: 401 });
    const refused = await identityTest(['shop']);
    expect(refused.code).toBe(3);
    expect(refused.out).toMatch(/ {2}read: REFUSED: Okta shop answered HTTP 401/);
    idp.stand.control.addFault({ provider: 'okta', endpoint: 'oktaUser', status: 500 });
    const failed = await identityTest(['shop', '--login', 'sam.roe@example.com']);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('  sam.roe@example.com: FAILED: Okta shop: HTTP 500');
    expect(failed.out).toContain('1 failed (of 1)');
  });

  it("a tenant's scope is its own: no identity there is a usage error saying so (exit 2); so is an unknown provider", async () => {
    const withTenant = config({ tenants: [{ id: 7, name: 'Globex' }] });
    const own = config({
      tenants: [{ id: 7, name: 'Globex', identity: { providers: idp.providers({ okta: ['example.com'] }) } }],
    });
    // Three runs that share nothing but the stand-in, side by side.
    const [tenant, unknown, tenantOwn] = await Promise.all([
      identityTest(['--tenant', 'globex'], withTenant),
      identityTest(['nope']),
      identityTest(['--tenant', '7'], own),
    ]);
    expect(tenant.code).toBe(2);
    expect(tenant.err).toMatch(
      /tenant Globex \(7\) has no identity of its own in .*: a tenant never inherits the top level's\n$/,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /no identity provider named "nope" at the top level of .* \(it has: corp, shop\)/,
    );
    expect(tenantOwn.code).toBe(0);
    expect(tenantOwn.out).toContain('Okta shop (tenant Globex (7)): ok\n');
  });

  it('a broader permission that also does is named as the one held', async () => {
    idp.stand.entra.roles = ['User.ReadWrite.All'];
    const r = await identityTest(['corp']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {4}lookups\s+User\.Read\.All\s+yes, by User\.ReadWrite\.All$/m);
    expect(r.out).toMatch(/^ {4}confirmCompromised\s+IdentityRiskyUser\.ReadWrite\.All\s+NO$/m);
  });

  it("in npm start's folder, with no config of its own: the emulator's demo providers and their local secrets", async () => {
    const folder = await mkdtemp(join(tmpdir(), 'ea-identity-local-'));
    await mkdir(join(folder, '.data'));
    const r = await runCliProcess(['identity', 'test'], { cwd: folder });
    expect(r.code).toBe(0);
    expect(r.err).toContain('this command opened its emulator from .data/');
    expect(r.out).toContain('Entra ID corp (top level): ok\n');
    expect(r.out).toContain('Okta shop (top level): ok\n');
    expect(r.out).toContain('every provider answered (2)\n');
  });

  it('a missing secret is a configuration error naming it (exit 2)', async () => {
    const none = join(dir, 'none.json');
    await writeFile(none, '{}');
    const r = await identityTest(['corp'], config(), none);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'identity.providers.corp: secret "idpEntraSecret" is not a non-empty string in the secret object',
    );
  });
});

describe('tokenRoles', () => {
  it("reads a JWT payload's roles without its signature; undefined for what is not a JWT", () => {
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    expect(tokenRoles(`${part({ alg: 'RS256' })}.${part({ roles: ['User.Read.All', 7] })}.sig`)).toEqual([
      'User.Read.All',
    ]);
    expect(tokenRoles(`${part({})}.${part({ appid: 'x' })}.`)).toEqual([]);
    expect(tokenRoles('opaque-token')).toBeUndefined();
    expect(tokenRoles('a.%%%.c')).toBeUndefined();
  });
});

describe('identity test with the identity secret (IDENTITY_SECRET_ID)', () => {
  it("reads the providers' secrets from it, as a worker does; one not moved yet from the main secret, with a warning", async () => {
    const sm = await secretsManager({
      main: { [STAND_IN_SECRET_NAMES.entra]: idp.entra.clientSecret },
      identity: { [STAND_IN_SECRET_NAMES.okta]: idp.okta.token },
    });
    const file = join(dir, 'config-two-secrets.json');
    await writeFile(file, JSON.stringify(config()));
    const env = { ALERTS_CONFIG: file, ...sm.env, SECRET_ID: 'main', IDENTITY_SECRET_ID: 'identity' };
    // The AWS SDK reads its region, keys and endpoint from process.env, as it would in a process.
    const saved = { ...process.env };
    Object.assign(process.env, sm.env);
    const r = await inProcess(['identity', 'test'], env).finally(() => {
      for (const key of Object.keys(sm.env)) delete process.env[key];
      Object.assign(process.env, saved);
    });
    expect(r.code, r.err).toBe(0);
    expect(sm.read).toEqual(['main', 'identity']);
    expect(r.out).toContain('Entra ID corp (top level): ok\n');
    expect(r.out).toMatch(/^Okta shop \(top level\): ok$/m);
    expect(r.err).toContain(
      `"${STAND_IN_SECRET_NAMES.entra}" is not in the identity secret (IDENTITY_SECRET_ID) yet`,
    );
    expect(r.err).not.toContain(`"${STAND_IN_SECRET_NAMES.okta}"`);
    for (const value of Object.values(idp.secrets)) expect(`${r.out}${r.err}`).not.toContain(value);
  });
});
