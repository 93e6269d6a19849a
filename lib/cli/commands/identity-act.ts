/**
 * `identity revoke-sessions|require-password-change|confirm-compromised|disable|enable <login>...
 * [--tenant T] [--reason TEXT]`: act on leaked logins' accounts in their identity providers
 * through the one action module every door uses (lib/identity/act.ts), as `cli:<user>`, then send
 * the follow-ups it queued in a delivery pass right away.
 *
 * Only logins with a stored verdict in the tenant (looked up because they leaked) may be acted
 * on: any other is named and nothing at all is done. The providers are the config's, with their
 * secrets; in the folder of `npm start`, its emulator stands in for the demo config's.
 *
 * Exit 0 when every login's action was taken; 3 when a provider refused (our credentials, or a
 * permission or role it names); 1 when one failed otherwise or has no answer yet (a later
 * delivery pass makes at most one more call, within 5 minutes); 2 for a usage error, a config
 * without identity for the tenant, or a login never leaked.
 */
import { randomUUID } from 'node:crypto';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { LoginResult } from '../../identity/act.ts';
import { ACTION_COMMANDS, ACTION_WORDS, type AccountAction, ADMIN_ACTIONS } from '../../identity/words.ts';
import { type Command, type CommandContext, cliClientName } from '../command.ts';
import { withLocalSecrets } from '../local.ts';
import { terminalSafe, useColor } from '../terminal.ts';
import { describeDelivery } from './poll.ts';

/** How long the follow-ups' delivery pass may start sends. */
const FOLLOW_UP_SECONDS = 30;
/** The longest reason kept (as the API takes it). */
const MAX_REASON_CHARS = 500;

const DONE: Record<AccountAction, string> = {
  revokeSessions: 'sessions revoked',
  requirePasswordChange: 'password change required at the next sign-in',
  confirmCompromised: 'confirmed compromised',
  disable: 'disabled',
  enable: 'enabled',
};

const SUMMARY: Record<AccountAction, string> = {
  revokeSessions: 'revoke sessions: sign the account out everywhere (its refresh tokens and sessions)',
  requirePasswordChange: 'require a password change at the account’s next sign-in',
  confirmCompromised: 'confirm the account compromised (Entra ID Protection; Okta with userRisk: true)',
  disable: 'disable the account (it can no longer sign in); `identity enable` undoes it',
  enable: 'enable an account disabled before',
};

/** A provider's refusal, as opposed to a failure or no answer: the CLI's exit 3, like a refused upstream token. */
const refused = (r: LoginResult) => r.refused === true;

function resultLine(action: AccountAction, r: LoginResult): string {
  if (r.ok) return `${r.login}  ${DONE[action]}`;
  return `${r.login}  ${refused(r) ? 'REFUSED' : 'NOT DONE'}: ${r.error ?? 'no reason given'}`;
}

async function act(action: AccountAction, ctx: CommandContext): Promise<number> {
  const [
    { lookupTenant },
    { runDeliveryPass },
    { accountActionProblem, actOnAccounts, neverLeaked },
    { createRuntime },
    { loadSecrets },
  ] = await Promise.all([
    import('../../actions/lookup.ts'),
    import('../../deliver/pass.ts'),
    import('../../identity/act.ts'),
    import('../../runtime.ts'),
    import('../../secrets.ts'),
  ]);
  const reason = typeof ctx.values.reason === 'string' ? ctx.values.reason.trim() : undefined;
  const logins = ctx.positionals;
  const problem = accountActionProblem({ action, logins });
  if (problem) throw new UsageError(problem);
  if (reason !== undefined && reason.length > MAX_REASON_CHARS)
    throw new UsageError(`--reason: at most ${MAX_REASON_CHARS} characters (got ${reason.length})`);
  // In npm start's folder the emulator stands in for the demo config's providers (cli/local.ts).
  const env = {
    ...readEnvironment(ctx.io.env),
    ...(ctx.localEmulatorUrl ? { localEmulatorUrl: ctx.localEmulatorUrl } : {}),
  };
  const runtime = await createRuntime({
    polls: false,
    env,
    secrets: withLocalSecrets(env, await loadSecrets(env)),
    logger: ctx.logger,
    warn: ctx.warn,
    write: (text) => ctx.io.stdout(text.endsWith('\n') ? text : `${text}\n`),
    color: useColor(ctx.io),
  });
  const { config } = runtime;
  let tenant: NonNullable<typeof config.tenants>[number] | undefined;
  try {
    tenant = lookupTenant(config.tenants ?? [], ctx.values.tenant as string | undefined);
  } catch (error) {
    throw new UsageError(`--tenant: ${(error as Error).message}`);
  }
  const where = tenant ? `in tenant ${tenant.name} (${tenant.id})` : 'at the top level';
  const deps = runtime.identityAct;
  if (!deps || !(tenant ? tenant.identity : config.identity))
    throw new UsageError(
      `${runtime.configSource} has no identity providers ${where}${tenant ? ' (a tenant never inherits the top level’s)' : ''}: there is no account to act on`,
    );
  const scope = tenant ? { tenant: tenant.id } : {};
  const never = await neverLeaked(deps, { logins, ...scope });
  if (never.length)
    throw new UsageError(
      `never leaked ${where} (no stored verdict names ${never.length === 1 ? 'it' : 'them'}): ${never.join(', ')}; nothing was done`,
    );
  const outcome = await actOnAccounts(deps, {
    action,
    logins,
    ...scope,
    ...(reason ? { reason } : {}),
    by: cliClientName(),
    id: randomUUID(),
  });
  // The provider's words and the logins are outside text: shown made safe for the terminal.
  for (const r of outcome.results) ctx.io.stdout(`${terminalSafe(resultLine(action, r))}\n`);
  const done = outcome.results.filter((r) => r.ok).length;
  ctx.io.stdout(
    `action ${outcome.id}: ${ACTION_WORDS[action]}, ${done} of ${outcome.results.length} account${outcome.results.length === 1 ? '' : 's'} done${outcome.open ? '; the ones with no answer yet get at most one more call from the next delivery pass, within 5 minutes' : ''}\n`,
  );
  if (done > 0) {
    // Where the credentials were alerted hears of it now, not at the next scheduled pass.
    const pass = await runDeliveryPass(runtime.deliver, {
      deadline: Date.now() + FOLLOW_UP_SECONDS * 1000,
      stop: ctx.signal,
    });
    const busy = { ...pass, destinations: pass.destinations.filter((d) => d.sent || d.retrying || d.dead) };
    for (const line of describeDelivery(busy)) ctx.io.stdout(`${line}\n`);
  }
  if (outcome.results.some(refused)) return 3;
  return done === outcome.results.length ? 0 : 1;
}

function identityActCommand(action: AccountAction): Command {
  const word = ACTION_COMMANDS[action];
  return {
    path: ['identity', word],
    example: `exposure-alerts identity ${word} kim.lee@acme.com --reason "leaked in the Acme combo list"`,
    usage: `identity ${word} <login>... [--tenant ID|NAME] [--reason TEXT]`,
    summary: `${SUMMARY[action]}, in its identity provider, once; only for leaked logins with a verdict`,
    details: [
      'Each login must have a stored verdict in the tenant: a login the credentials poll looked up',
      'because it leaked. Any other is named, and nothing is done. The action is recorded before the',
      'provider is called, audited (by cli:<user>), and followed up where the credentials were alerted.',
      ...(ADMIN_ACTIONS.has(action)
        ? ['In the API it needs the scope identity:disable; in Slack, a user of identityAdmins.']
        : []),
      'Exit codes: 0 done for every login; 1 a provider failed or has not answered yet; 2 a usage',
      'error, no identity for the tenant, or a login never leaked; 3 a provider refused (our',
      'credentials, or a permission or role it names).',
    ],
    options: { tenant: { type: 'string' }, reason: { type: 'string' } },
    optionHelp: {
      tenant: "the tenants entry whose logins these are (its id or name); without it, the top level's",
      reason: `why, at most ${MAX_REASON_CHARS} characters: kept in the audit trail, shown in the follow-ups, given to Okta's user risk`,
    },
    // The folder's npm start: its table, and its emulator standing in for the demo's providers.
    uses: { table: true, upstream: true },
    beside: 'refuse',
    positionals: [1, Number.POSITIVE_INFINITY],
    run: (ctx) => act(action, ctx),
  };
}

export const identityRevokeSessionsCommand = identityActCommand('revokeSessions');
export const identityRequirePasswordChangeCommand = identityActCommand('requirePasswordChange');
export const identityConfirmCompromisedCommand = identityActCommand('confirmCompromised');
export const identityDisableCommand = identityActCommand('disable');
export const identityEnableCommand = identityActCommand('enable');
