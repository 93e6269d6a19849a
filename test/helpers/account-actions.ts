/**
 * The world an account-action test acts in (lib/identity/act.ts): the verdicts a lookup would have
 * kept for its logins (`keepAtRisk`), a config naming the providers' stand-in (`actionsConfig`),
 * and the action's deps on a table (`accountDeps`), whose follow-ups and reports are kept for the
 * test to read. The parts are the real ones: the table, the provider clients over HTTP.
 *
 * @example
 * const io = { client: db.client, tableName: await db.table(), clock };
 * const { deps, reports } = accountDeps(idp, io, actionsConfig(idp, { entra: ['acme.com'] }));
 * await keepAtRisk(deps.store, ['kim@acme.com'], () => ({ provider: 'corp', userId: 'u-kim' }));
 */
import type { ItemChange } from '../../lib/deliver/follow-up.ts';
import { type AccountDeps, accountStore } from '../../lib/identity/act.ts';
import { providerClients } from '../../lib/identity/index.ts';
import type { IdentityLanes } from '../../lib/identity/lanes.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { AlertsConfig } from '../../lib/rules/config.ts';
import type { TableIo } from '../../lib/state/io.ts';
import type { IdentityProviders } from './identity-providers.ts';
import { configFrom } from './world.ts';

/**
 * Keeps, in the top scope, an `at_risk` verdict for each login (keys '0', '1', … in order) naming
 * the account `account` gives, leaked on 20 November 2026 and enabled unless `extra` says other.
 */
export async function keepAtRisk(
  store: IdentityStore,
  logins: readonly string[],
  account: (login: string) => { provider: string; userId: string },
  extra: { enabled?: boolean; leakDate: string } = { enabled: true, leakDate: '2026-11-20T00:00:00Z' },
): Promise<void> {
  await store.keepVerdicts(
    logins.map((login, i) => ({
      key: String(i),
      scope: 'top' as const,
      login,
      verdict: { ...account(login), ...extra, verdict: 'at_risk' as const },
    })),
    true,
  );
}

/** A config whose only destination is the console, its identity providers the stand-in's for `domains`. */
export function actionsConfig(
  idp: IdentityProviders,
  domains: { entra?: string[]; okta?: string[] },
  /** Each provider's lane rate, where a test needs the deployment's real one (default: the stand-in's). */
  requestsPerSecond?: number,
): AlertsConfig {
  const providers = Object.fromEntries(
    Object.entries(idp.providers(domains)).map(([name, p]) => [
      name,
      requestsPerSecond === undefined ? p : { ...(p as object), requestsPerSecond },
    ]),
  );
  return configFrom({ destinations: { t: { type: 'console' } }, identity: { providers } });
}

/**
 * An action's deps on `io`: its record store, a new verdict store, the provider clients of
 * `config` (through `lanes` when given), a logger of its own; `followUps` and `reports` keep what
 * it followed up and reported (`title: text`). `over` replaces any of them.
 */
export function accountDeps(
  idp: IdentityProviders,
  io: TableIo,
  config: AlertsConfig,
  over: Partial<AccountDeps> & { lanes?: IdentityLanes } = {},
) {
  const followUps: ItemChange[] = [];
  const reports: string[] = [];
  const { lanes, ...rest } = over;
  const deps: AccountDeps = {
    actions: accountStore(io),
    store: new IdentityStore(io),
    providers: providerClients(config, idp.secrets, [], lanes),
    fetch,
    clock: io.clock,
    logger: memoryLogger(),
    followUp: async (change) => {
      followUps.push(change);
      return [];
    },
    report: async (title, text) => {
      reports.push(`${title}: ${text}`);
    },
    ...rest,
  };
  return { deps, followUps, reports };
}
