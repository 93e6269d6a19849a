/**
 * Longer than 300 lines because it reports, provider by provider, everything a person needs to
 * fix a provider's setup (token, permissions per action, a lookup), in one command.
 *
 * `identity test [provider] [--login L] [--tenant T]`: checks that each identity provider of a
 * scope (the top level's, or a tenant's own) takes our credentials, and what it says of a login.
 *
 * Entra ID: a token is bought as the lookups buy it (lib/entra-token.ts, Graph's scope); its
 * payload (a JWT, read without checking its signature: Entra signed it for Graph, not for us)
 * lists the application permissions granted (`roles`), held against what lookups and each action
 * need. Directory roles are not in the token: they are named as a reminder. Okta: the API token is
 * used as is; it has no scopes, so a read (a lookup of a made-up login) is its test. With `--login`,
 * the login is looked up with the provider's own client, and what it could read is printed: the
 * account, whether it can sign in, its password's last change, whether the provider manages that
 * password, and the verdict a leak dated today would get.
 *
 * Exit 0 when every provider answered, 3 when one refused our credentials (or its token lacks the
 * permission to read users), 1 otherwise. No secret is printed: neither the secret nor the token.
 */

import type { lookupTenant } from '../../actions/lookup.ts';
import { entraToken } from '../../entra-token.ts';
import { readEnvironment } from '../../env.ts';
import { ConfigError, UsageError } from '../../errors.ts';
import type { LookupResult, ProviderClient } from '../../identity/client.ts';
import { entraClient, GRAPH_SCOPE } from '../../identity/entra.ts';
import { oktaClient } from '../../identity/okta.ts';
import type { EntraConfig, IdentityConfig, ProviderConfig } from '../../identity/schema.ts';
import { decideVerdict, domainOfLogin } from '../../identity/verdict.ts';
import { PROVIDER_LABELS, verdictWords } from '../../identity/words.ts';
import { domainWithin } from '../../rules/match.ts';
import type { loadAlertsConfig } from '../../rules/source.ts';
import type { Command } from '../command.ts';
import { withLocalSecrets } from '../local.ts';
import { formatTable, tableWidth, terminalSafe } from '../terminal.ts';

/** A provider's request gets this long here: an operator waits, but not for ever. */
const TIMEOUT_MS = 10_000;

/** What each use of Entra needs of the app: any one of these application permissions. */
export const ENTRA_PERMISSIONS: { use: string; action?: string; anyOf: string[]; also?: string }[] = [
  {
    use: 'lookups',
    anyOf: ['User.Read.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  },
  {
    use: 'revokeSessions',
    action: 'revokeSessions',
    anyOf: ['User.RevokeSessions.All', 'User.ReadWrite.All', 'Directory.ReadWrite.All'],
  },
  {
    use: 'requirePasswordChange',
    action: 'requirePasswordChange',
    anyOf: ['User.ReadWrite.All', 'User-PasswordProfile.ReadWrite.All', 'Directory.ReadWrite.All'],
    also: 'directory role',
  },
  {
    use: 'disable, enable',
    action: 'disable',
    anyOf: ['User.EnableDisableAccount.All', 'User.ReadWrite.All', 'Directory.ReadWrite.All'],
    also: 'directory role',
  },
  {
    use: 'confirmCompromised',
    action: 'confirmCompromised',
    anyOf: ['IdentityRiskyUser.ReadWrite.All'],
    also: 'Entra ID P2',
  },
];

/** The `roles` claim of a JWT's payload; undefined when the token is not a JWT one can read. */
export function tokenRoles(token: string): string[] | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { roles?: unknown };
    return Array.isArray(claims.roles) ? claims.roles.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return undefined;
  }
}

type Outcome = 'answered' | 'refused' | 'failed';

interface Tested {
  lines: string[];
  outcome: Outcome;
}

/** What a lookup result says, in lines, and how it ended. */
function describeLookup(provider: string, login: string, result: LookupResult, now: Date): Tested {
  if ('refused' in result) return { lines: [`  ${login}: REFUSED: ${result.refused}`], outcome: 'refused' };
  if ('failed' in result) return { lines: [`  ${login}: FAILED: ${result.failed}`], outcome: 'failed' };
  const today = now.toISOString().slice(0, 10);
  const verdict = decideVerdict(provider, result.answer, today);
  const lines = [`  ${login}:`];
  if (!result.answer.found) lines.push('    account: none found');
  else {
    const a = result.answer.account;
    lines.push(
      `    account: found, id ${a.id}${a.displayName ? `, "${a.displayName}"` : ''}`,
      `    can sign in: ${a.enabled ? 'yes' : 'no (disabled)'}`,
      `    password last changed: ${a.passwordChangedAt ?? 'never (since the account was made)'}`,
      `    password held by: ${a.unmanaged ? 'another directory (synced from on-premises or delegated): its date says nothing' : 'this provider'}`,
    );
  }
  lines.push(
    `    verdict for a leak dated today (${today}): ${verdictWords(verdict.verdict, verdict.reason)}`,
  );
  return { lines, outcome: 'answered' };
}

interface TestContext {
  login?: string;
  auto: readonly string[];
  signal: AbortSignal;
  width: number;
}

const lookupCtx = (signal: AbortSignal) => ({
  fetch: (input: string | URL | Request, init?: RequestInit) => fetch(input, init),
  now: () => Date.now(),
  signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
});

async function testEntra(
  name: string,
  config: EntraConfig,
  secret: string,
  ctx: TestContext,
): Promise<Tested> {
  const app = {
    loginUrl: config.loginUrl,
    tenantId: config.tenantId,
    clientId: config.clientId,
    clientSecret: secret,
  };
  const token = await entraToken(app, GRAPH_SCOPE, {
    post: (url, init) => fetch(url, init),
    now: () => Date.now(),
    timeoutMs: TIMEOUT_MS,
    signal: ctx.signal,
  });
  if ('failure' in token) {
    const { failure } = token;
    return failure.permanent
      ? {
          lines: [`  token: REFUSED: ${failure.error}: check tenantId, clientId and the client secret`],
          outcome: 'refused',
        }
      : { lines: [`  token: FAILED: ${failure.error}`], outcome: 'failed' };
  }
  const lines = [`  token: granted (scope ${GRAPH_SCOPE})`];
  let outcome: Outcome = 'answered';
  const roles = tokenRoles(token.token);
  if (!roles) lines.push('  application permissions: unknown (the token is not a JWT this can read)');
  else {
    lines.push(`  application permissions (the token's roles): ${roles.length ? roles.join(', ') : 'none'}`);
    // The least permission each use needs; a broader one that also does is named when it is the one held.
    const rows = [['FOR', 'LEAST PERMISSION', 'GRANTED']];
    for (const need of ENTRA_PERMISSIONS) {
      const held = need.anyOf.find((p) => roles.includes(p));
      const auto = need.action !== undefined && ctx.auto.includes(need.action) ? ' (automatic)' : '';
      const least = need.anyOf[0] as string;
      rows.push([`${need.use}${auto}`, least, held ? (held === least ? 'yes' : `yes, by ${held}`) : 'NO']);
      if (need.use === 'lookups' && !held) outcome = 'refused';
    }
    lines.push(...formatTable(rows, { width: ctx.width, keep: [0, 1, 2] }).map((l) => `  ${l}`));
    if (outcome === 'refused')
      lines.push('  lookups will be refused: grant the app User.Read.All (application, with admin consent)');
  }
  lines.push(
    '  not in the token, so not checked: requirePasswordChange, disable and enable also need the app to hold the User Administrator directory role (Privileged Authentication Administrator to act on admins); confirmCompromised needs Entra ID P2',
  );
  if (ctx.login && outcome !== 'refused') {
    const looked = describeLookup(
      name,
      ctx.login,
      await entraClient(name, config, secret).lookup(ctx.login, lookupCtx(ctx.signal)),
      new Date(),
    );
    lines.push(...looked.lines);
    outcome = looked.outcome;
  }
  return { lines, outcome };
}

/** A login no one has: a read that proves the token may read users, whatever it finds. */
const probeLogin = (domain: string) => `exposure-alerts-identity-test@${domain}`;

async function testOkta(client: ProviderClient, userRisk: boolean, ctx: TestContext): Promise<Tested> {
  const lines = [
    '  token: an API token, used as is (it has no scopes: its admin’s role decides what it may do)',
  ];
  const login = ctx.login ?? probeLogin(client.domains[0] ?? 'example.com');
  const result = await client.lookup(login, lookupCtx(ctx.signal));
  let looked: Tested;
  if (ctx.login) looked = describeLookup(client.name, login, result, new Date());
  else if ('answer' in result)
    looked = {
      lines: ['  read: ok (the token may read users: a made-up login was looked up)'],
      outcome: 'answered',
    };
  else looked = { ...describeLookup(client.name, 'read', result, new Date()) };
  lines.push(
    `  actions: revokeSessions, requirePasswordChange, disable and enable need the token's admin to hold a role that may manage users (not checked: that would act); confirmCompromised ${userRisk ? "uses Okta's user-risk API (userRisk: true)" : 'is off (userRisk: false)'}`,
    ...looked.lines,
  );
  return { lines, outcome: looked.outcome };
}

async function scopeOf(
  config: Awaited<ReturnType<typeof loadAlertsConfig>>['config'],
  tenantArg: string | undefined,
  source: string,
): Promise<{ identity: IdentityConfig; label: string; flag: string }> {
  const { lookupTenant } = await import('../../actions/lookup.ts');
  let tenant: ReturnType<typeof lookupTenant<NonNullable<typeof config.tenants>[number]>>;
  try {
    tenant = lookupTenant(config.tenants ?? [], tenantArg);
  } catch (error) {
    throw new UsageError(`--tenant: ${(error as Error).message}`);
  }
  if (tenant) {
    if (!tenant.identity)
      throw new UsageError(
        `tenant ${tenant.name} (${tenant.id}) has no identity of its own in ${source}: a tenant never inherits the top level's`,
      );
    return {
      identity: tenant.identity,
      label: `tenant ${tenant.name} (${tenant.id})`,
      flag: ` --tenant ${tenant.id}`,
    };
  }
  if (!config.identity) {
    const others = (config.tenants ?? []).filter((t) => t.identity).map((t) => `--tenant ${t.id}`);
    throw new UsageError(
      `${source} has no identity providers at the top level${others.length ? ` (its tenants have: ${others.join(', ')})` : ''}`,
    );
  }
  return { identity: config.identity, label: 'top level', flag: '' };
}

export const identityTestCommand: Command = {
  path: ['identity', 'test'],
  example: 'exposure-alerts identity test corp --login kim.lee@acme.com',
  usage: 'identity test [provider] [--login L] [--tenant ID|NAME]',
  summary:
    "check that each identity provider (or one) takes our credentials: Entra ID's token and its permissions, an Okta token's read; with --login, what the provider says of that login",
  options: { login: { type: 'string' }, tenant: { type: 'string' } },
  optionHelp: {
    login:
      'look this login up and print what the provider says: the account, can it sign in, its password’s last change, the verdict for a leak dated today',
    tenant: "a tenants entry's own providers (its id or name); without it, the top level's",
  },
  // The folder's npm start emulator stands in for the demo config's providers.
  uses: { upstream: true },
  positionals: [0, 1],
  async run({ positionals, values, io, warn, signal, localEmulatorUrl }) {
    const env = { ...readEnvironment(io.env), ...(localEmulatorUrl ? { localEmulatorUrl } : {}) };
    const [{ identitySecrets }, { loadAlertsConfig }, { loadSecrets }] = await Promise.all([
      import('../../identity/secrets.ts'),
      import('../../rules/source.ts'),
      import('../../secrets.ts'),
    ]);
    const { config, source } = await loadAlertsConfig(env, warn);
    const scope = await scopeOf(config, values.tenant as string | undefined, source);
    const names = Object.keys(scope.identity.providers);
    const [only] = positionals;
    if (only !== undefined && !names.includes(only))
      throw new UsageError(
        `no identity provider named "${only}" at the ${scope.label} of ${source} (it has: ${names.join(', ')})`,
      );
    const login = typeof values.login === 'string' ? values.login.trim() : undefined;
    if (login !== undefined && !/^[^\s@]+@[^\s@]+$/.test(login))
      throw new UsageError('--login takes a login as providers know it: name@domain');
    // As a worker reads them: the identity secret first when IDENTITY_SECRET_ID is set.
    const secrets = await identitySecrets(env, withLocalSecrets(env, await loadSecrets(env)), config, warn);
    const chosen = Object.entries(scope.identity.providers).filter(
      ([name]) => only === undefined || name === only,
    );
    const secretOf = (p: ProviderConfig) => (p.type === 'entra' ? p.clientSecret : p.token).secret;
    const missing = chosen.flatMap(([name, p]) => {
      const value = secrets[secretOf(p)];
      return typeof value === 'string' && value !== ''
        ? []
        : [
            `${scope.label === 'top level' ? '' : `${scope.label}: `}identity.providers.${name}: secret "${secretOf(p)}" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
          ];
    });
    if (missing.length)
      throw new ConfigError(
        missing.length === 1
          ? (missing[0] as string)
          : `${missing.length} identity provider secrets are missing`,
        missing,
      );
    const ctx = {
      ...(login ? { login } : {}),
      auto: scope.identity.auto?.atRisk ?? [],
      signal,
      width: tableWidth(io),
    };
    const outcomes: Outcome[] = [];
    for (const [name, provider] of chosen) {
      const secret = secrets[secretOf(provider)] as string;
      const outside =
        login && !provider.domains.some((d) => domainWithin(domainOfLogin(login), d))
          ? [
              `  (${login} is outside its domains, ${provider.domains.join(', ')}: a run would not look it up here)`,
            ]
          : [];
      const tested =
        provider.type === 'entra'
          ? await testEntra(name, provider, secret, ctx)
          : await testOkta(oktaClient(name, provider, secret), provider.userRisk, ctx);
      outcomes.push(tested.outcome);
      // The provider's words (display names, error codes) are shown, made safe for the terminal.
      io.stdout(
        `${[
          `${PROVIDER_LABELS[provider.type]} ${name} (${scope.label}): ${tested.outcome === 'answered' ? 'ok' : tested.outcome.toUpperCase()}`,
          ...outside,
          ...tested.lines,
        ]
          .map((l) => terminalSafe(l))
          .join('\n')}\n`,
      );
    }
    const refused = outcomes.filter((o) => o === 'refused').length;
    const failed = outcomes.filter((o) => o === 'failed').length;
    io.stdout(
      refused || failed
        ? `${refused ? `${refused} refused our credentials` : ''}${refused && failed ? ', ' : ''}${failed ? `${failed} failed` : ''} (of ${outcomes.length}); after a fix: exposure-alerts identity test${scope.flag}\n`
        : `every provider answered (${outcomes.length})\n`,
    );
    return refused ? 3 : failed ? 1 : 0;
  },
};
