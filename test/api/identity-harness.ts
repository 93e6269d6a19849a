/**
 * The API under test with its account actions (lib/api/identity-routes.ts) on a real table: the
 * action module's store and the verdicts' store in dynalite, and, when given, the providers'
 * stand-in (test/helpers/identity-providers.ts) as the providers, so the API acts at once (serve,
 * npm start); without them it records and hands off (the Lambda), the work kept in `handed`.
 * `seed` writes stored verdicts as a credentials poll would, so logins count as leaked.
 */
import { randomUUID } from 'node:crypto';
import type { SlackWork } from '../../lib/actions/slack-work.ts';
import { createApiApp } from '../../lib/api/app.ts';
import type { IdentityApiDeps } from '../../lib/api/identity-routes.ts';
import { systemClock } from '../../lib/clock.ts';
import { type AccountDeps, accountStore } from '../../lib/identity/act.ts';
import { providerClients } from '../../lib/identity/index.ts';
import { identitySchema } from '../../lib/identity/schema.ts';
import { IdentityStore, type Scope } from '../../lib/identity/store.ts';
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import type { Catalog } from '../../lib/state/catalog.ts';
import type { IdentityProviders } from '../helpers/identity-providers.ts';
import type { ApiUnderTest, TableRef } from './harness.ts';

export interface IdentityApi {
  app: ReturnType<typeof createApiApp>;
  /** What `app` was made of, for an app of the same parts on another clock. */
  deps: Parameters<typeof createApiApp>[0];
  accounts: AccountDeps;
  /** The work handed to a worker (no providers here). */
  handed: SlackWork[];
  /** Stored verdicts naming each login (as `corp`'s, at risk), each on an item of its own. */
  seed(logins: readonly string[], scope?: Scope): Promise<void>;
}

/**
 * `api` with account actions. `idp` given: the providers, from its `corp` (Entra) and `shop`
 * (Okta), domains as given; `known`: what the config says (default: identity at the top level).
 */
export function identityApi(
  api: ApiUnderTest,
  table: TableRef,
  options: {
    idp?: IdentityProviders;
    domains?: { entra?: string[]; okta?: string[] };
    known?: Pick<Catalog, 'tenants' | 'identity'>;
    scopes?: Scope[];
    /** A provider's answer to an action, at most (act.ts CALL_TIMEOUT_MS). */
    callTimeoutMs?: number;
  } = {},
): IdentityApi {
  const io = { client: table.client, tableName: table.name, clock: systemClock };
  const store = new IdentityStore(io);
  const domains = options.domains ?? { entra: ['acme.test'] };
  const scopes = options.scopes ?? ['top'];
  let providers: AccountDeps['providers'];
  if (options.idp) {
    const identity = identitySchema.parse({ providers: options.idp.providers(domains) });
    const config = {
      ...(scopes.includes('top') ? { identity } : {}),
      tenants: scopes.filter((s) => s !== 'top').map((id) => ({ id: id as number, identity })),
    };
    const problems: string[] = [];
    // Only the parts providerClients reads of a config: the top level's identity and each tenant's.
    providers = providerClients(
      config as Parameters<typeof providerClients>[0],
      options.idp.secrets,
      problems,
    );
    if (problems.length) throw new Error(problems.join('; '));
  }
  const accounts: AccountDeps = {
    actions: accountStore(io),
    store,
    ...(providers ? { providers } : {}),
    fetch,
    clock: systemClock,
    logger: api.logger,
    followUp: async () => [],
    ...(options.callTimeoutMs ? { callTimeoutMs: options.callTimeoutMs } : {}),
  };
  const known = options.known ?? {
    identity: scopes.map((scope) => ({ scope, provider: 'corp', type: 'entra' })),
    tenants: scopes.filter((s) => s !== 'top').map((id) => ({ id: id as number, name: `Tenant ${id}` })),
  };
  const identity: IdentityApiDeps = { accounts: async () => accounts, known: async () => known };
  const handed: SlackWork[] = [];
  const deps: Parameters<typeof createApiApp>[0] = {
    ...api.deps,
    identity,
    // Kept here, and passed on to the API's own hand-off (Slack's work, in `api.handed`).
    handOff: async (work) => {
      handed.push(work);
      await api.deps.handOff?.(work);
    },
  };
  const app = createApiApp(deps);
  return {
    app,
    deps,
    accounts,
    handed,
    async seed(logins, scope = 'top') {
      await store.keepVerdicts(
        logins.map((login) => {
          const user = options.idp?.stand.entra.user(login);
          const verdict: IdentityVerdict = {
            provider: 'corp',
            verdict: 'at_risk',
            ...(user ? { userId: user.id, displayName: user.displayName, enabled: user.accountEnabled } : {}),
            leakDate: '2026-01-02',
          };
          return { key: `${scope === 'top' ? '' : `${scope}:`}cred-${randomUUID()}`, verdict, scope, login };
        }),
        true,
      );
    },
  };
}
