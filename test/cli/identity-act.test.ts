/**
 * `identity revoke-sessions|require-password-change|confirm-compromised|disable|enable <login>...`
 * through the real CLI (runCli in this process; `serve` a process of its own, stopped by SIGTERM)
 * (issue 37), against dynalite, the emulator and the providers' stand-in over HTTP,
 * with verdicts stored as a credentials poll stores them. Each login's outcome is printed and
 * the exit code says how it went: 0 every login done, 1 a provider failed, 2 a usage error or a
 * login never leaked (named, nothing called), 3 a provider refused (the missing permission named,
 * nothing changed). Audited as `cli:<user>`; no secret in the output.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { runCli } from '../../lib/cli/run.ts';
import { systemClock } from '../../lib/clock.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { accountStore } from '../../lib/identity/act.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { marshall } from '../../lib/state/marshall.ts';
import { GetItemCommand } from '../../lib/state/sdk.ts';
import { startCliService } from '../helpers/cli-process.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { captureIo } from '../helpers/io.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const LOGINS = ['kim@acme.test', 'lee@acme.test', 'pat@acme.test', 'ann@acme.test'];
const SOAR = randomBytes(24).toString('base64url');
let idp: IdentityProviders;
/** An app granted only what lookups need: every action is refused. */
let bare: IdentityProviders;
let env: Record<string, string>;
let bareEnv: Record<string, string>;

/** A deployment of its own: a table with the logins' verdicts, a config naming `idp`'s providers. */
async function deployment(providers: IdentityProviders, name: string): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), `ea-identity-act-${name}-`));
  const config = join(dir, 'alerts.config.json');
  await writeFile(
    config,
    JSON.stringify({
      sources: { credentials: { domains: ['acme.test'], lookback: 'P1D' } },
      identity: { providers: providers.providers({ entra: ['acme.test'] }) },
      destinations: { local: { type: 'console' } },
      routes: [{ name: 'all', to: ['local'] }],
    }),
  );
  const secrets = join(dir, 'secrets.json');
  await writeFile(
    secrets,
    JSON.stringify({
      ...providers.secrets,
      apiClients: { soar: { digest: sha256Hex(SOAR), scopes: ['identity:act'] } },
    }),
  );
  const table = await db.table();
  await new IdentityStore({ client: db.client, tableName: table, clock: systemClock }).keepVerdicts(
    LOGINS.map((login, i) => ({
      key: `cred-${i}`,
      scope: 'top' as const,
      login,
      verdict: {
        provider: 'corp',
        verdict: 'at_risk' as const,
        userId: providers.stand.entra.user(login)?.id as string,
        leakDate: '2026-01-02',
      },
    })),
    true,
  );
  return {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: db.endpoint,
    TABLE_NAME: table,
    ALERTS_CONFIG: config,
    SECRETS_FILE: secrets,
  };
}

beforeAll(async () => {
  const users = LOGINS.map((userPrincipalName) => ({ userPrincipalName }));
  idp = await identityProviders({ entra: { roles: ALL_ENTRA_ROLES, users } });
  bare = await identityProviders({ entra: { users } });
  env = await deployment(idp, 'granted');
  bareEnv = await deployment(bare, 'bare');
});
afterAll(async () => {
  await Promise.all([idp.close(), bare.close()]);
});

async function identity(args: string[], e = env) {
  const io = captureIo({ ...e });
  const code = await runCli(['identity', ...args], io);
  return { code, out: io.out, err: io.err };
}
const secretsIn = (text: string) =>
  [...Object.values(idp.secrets), ...Object.values(bare.secrets)].filter((s) => text.includes(s));

describe('identity <action> <login>...', () => {
  it('revokes each login’s sessions once, prints each outcome, audits it as cli:<user>, exit 0', async () => {
    const run = await identity([
      'revoke-sessions',
      'kim@acme.test',
      'lee@acme.test',
      '--reason',
      'combo list',
    ]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('kim@acme.test  sessions revoked\n');
    expect(run.out).toContain('lee@acme.test  sessions revoked\n');
    expect(run.out).toMatch(/action \S+: revoke sessions, 2 of 2 accounts done\n/);
    expect(idp.actions.map((a) => `${a.action} ${a.login}`)).toEqual([
      'revokeSessions kim@acme.test',
      'revokeSessions lee@acme.test',
    ]);
    const io = { client: db.client, tableName: env.TABLE_NAME as string, clock: systemClock };
    const [entry] = await accountStore(io).auditTrail();
    expect(entry).toMatchObject({
      type: 'revokeSessions',
      reason: 'combo list',
      uids: ['kim@acme.test', 'lee@acme.test'],
    });
    expect(entry?.by).toMatch(/^cli/);
    expect(secretsIn(`${run.out}${run.err}`)).toEqual([]);
  });

  it('refuses a login never leaked, naming it, and does nothing at all: exit 2', async () => {
    const requests = idp.requests.length;
    const run = await identity(['disable', 'pat@acme.test', 'nobody@acme.test']);
    expect(run.code).toBe(2);
    expect(run.err).toContain('never leaked at the top level');
    expect(run.err).toContain('nobody@acme.test');
    expect(run.err).not.toContain('pat@acme.test');
    expect(idp.requests).toHaveLength(requests);
    expect(idp.stand.entra.user('pat@acme.test')?.accountEnabled).toBe(true);
  });

  it('a provider refusing for lack of a permission: named, nothing changed, exit 3', async () => {
    const before = bare.stand.entra.user('pat@acme.test')?.signInSessionsValidFromDateTime;
    const run = await identity(['revoke-sessions', 'pat@acme.test'], bareEnv);
    expect(run.code, run.err).toBe(3);
    expect(run.out).toMatch(
      /pat@acme\.test {2}REFUSED: Entra ID corp answered HTTP 403 .*User\.RevokeSessions\.All/,
    );
    expect(run.out).toContain('0 of 1 account done');
    expect(bare.actions).toEqual([]);
    expect(bare.stand.entra.user('pat@acme.test')?.signInSessionsValidFromDateTime).toBe(before);
    expect(secretsIn(`${run.out}${run.err}`)).toEqual([]);
  });

  it('a provider that fails: the login is not done, exit 1', async () => {
    idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUpdateUser', status: 500 });
    const run = await identity(['require-password-change', 'pat@acme.test']);
    expect(run.code, run.err).toBe(1);
    expect(run.out).toContain('pat@acme.test  NOT DONE: Entra ID corp: HTTP 500');
    expect(idp.stand.entra.user('pat@acme.test')?.passwordProfile.forceChangePasswordNextSignIn).toBe(false);
  });

  it('usage errors exit 2: no login, a tenant the config does not have', async () => {
    const none = await identity(['revoke-sessions']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('usage: exposure-alerts identity revoke-sessions <login>...');
    const tenant = await identity(['enable', 'pat@acme.test', '--tenant', '9']);
    expect(tenant.code).toBe(2);
    expect(tenant.err).toContain('--tenant: no tenant "9": the config has no tenants');
  });

  it('--help documents each action; `identity --help` lists them beside identity test', async () => {
    const help = await identity(['disable', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain(
      'usage: exposure-alerts identity disable <login>... [--tenant ID|NAME] [--reason TEXT]',
    );
    expect(help.out).toContain('identity:disable');
    expect(help.out).toMatch(/3 a provider refused/);
    const group = await identity(['--help']);
    expect(group.code).toBe(0);
    for (const word of [
      'revoke-sessions',
      'require-password-change',
      'confirm-compromised',
      'disable',
      'enable',
      'test',
    ])
      expect(group.out).toMatch(new RegExp(`^  ${word} +\\S`, 'm'));
  });
});

describe('serve with identity in its config', () => {
  it('takes an account action at once with the config’s providers: 200 with each login’s result', async () => {
    const service = await startCliService(['serve'], { env: { ...env, PORT: '0', LOG_LEVEL: 'error' } });
    try {
      const res = await fetch(`${service.url}/identity/actions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SOAR}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ action: 'revokeSessions', logins: ['ann@acme.test'] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { results: unknown }).results).toEqual([
        { login: 'ann@acme.test', ok: true },
      ]);
      expect(idp.actions.filter((a) => a.login === 'ann@acme.test').map((a) => a.action)).toEqual([
        'revokeSessions',
      ]);
      // Its call took a turn in the provider's lane, which every run of the deployment shares.
      const lane = await db.client.send(
        new GetItemCommand({
          TableName: env.TABLE_NAME,
          Key: marshall({ pk: 'governor', sk: 'idp#top#corp' }),
          ConsistentRead: true,
        }),
      );
      expect(lane.Item).toBeDefined();
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expect(secretsIn(`${service.out()}${service.err()}`)).toEqual([]);
  });
});
