/**
 * Identity for a run (docs/identity.md), loaded only when the config has `identity`
 * somewhere (runtime.ts imports this module then, and only then): each scope's provider clients
 * with their secrets, the store, and how a refusing provider is reported (once for the deployment,
 * like a refusing tenant: an error line, the metric, a notice to each ops destination).
 */
import { systemClock } from '../clock.ts';
import { notifyOps } from '../deliver/notify.ts';
import type { DeliverDeps } from '../deliver/types.ts';
import { ConfigError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { redactor } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { AlertsConfig } from '../rules/config.ts';
import type { SecretObject } from '../secrets.ts';
import type { TableIo } from '../state/io.ts';
import {
  type AccountDeps,
  accountStore,
  finishAccountAction,
  finishAccountActions,
  recordAccountAction,
} from './act.ts';
import { AutoResponse } from './auto.ts';
import type { ProviderClient } from './client.ts';
import { entraClient } from './entra.ts';
import { IdentityLanes } from './lanes.ts';
import { type IdentityDeps, IdentityLookups } from './lookup.ts';
import { oktaClient } from './okta.ts';
import type { IdentityConfig } from './schema.ts';
import { identitySecrets } from './secrets.ts';
import { IdentityStore, type Scope } from './store.ts';
import { PROVIDER_LABELS } from './words.ts';

export * from './act.ts';
export { IdentityCycle, IdentityLookups } from './lookup.ts';
export { identitySecrets } from './secrets.ts';
export { IdentityStore } from './store.ts';

/** Whether any scope of the config has identity providers. */
export function hasIdentity(config: Pick<AlertsConfig, 'identity' | 'tenants'>): boolean {
  return config.identity !== undefined || (config.tenants ?? []).some((t) => t.identity !== undefined);
}

/** Each scope's `identity`, the top level's first: a tenant never inherits the top level's. */
export function identityScopes(
  config: Pick<AlertsConfig, 'identity' | 'tenants'>,
): [Scope, IdentityConfig][] {
  const out: [Scope, IdentityConfig][] = [];
  if (config.identity) out.push(['top', config.identity]);
  for (const t of config.tenants ?? []) if (t.identity) out.push([t.id, t.identity]);
  return out;
}

/** The path of a scope's identity in the config, for messages. */
export const identityPath = (config: Pick<AlertsConfig, 'tenants'>, scope: Scope) =>
  scope === 'top'
    ? 'identity'
    : `tenants[${(config.tenants ?? []).findIndex((t) => t.id === scope)}].identity`;

/**
 * Each scope's provider clients with their secrets; problems name the missing secrets' paths.
 * With `lanes` (a run that has the table), every request takes its turn of the provider's share of
 * the deployment's rate (lanes.ts).
 */
export function providerClients(
  config: Pick<AlertsConfig, 'identity' | 'tenants'>,
  secrets: SecretObject,
  problems: string[],
  lanes?: IdentityLanes,
): Map<Scope, ProviderClient[]> {
  const out = new Map<Scope, ProviderClient[]>();
  for (const [scope, identity] of identityScopes(config)) {
    const clients: ProviderClient[] = [];
    for (const [name, provider] of Object.entries(identity.providers)) {
      const ref = provider.type === 'entra' ? provider.clientSecret : provider.token;
      const key = provider.type === 'entra' ? 'clientSecret' : 'token';
      const secret = secrets[ref.secret];
      if (typeof secret !== 'string' || secret === '') {
        problems.push(
          `${identityPath(config, scope)}.providers.${name}.${key}: secret "${ref.secret}" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)`,
        );
        continue;
      }
      redactor.add(secret);
      const share = lanes?.of(scope, name, provider);
      clients.push(
        provider.type === 'entra'
          ? entraClient(name, provider, secret, share)
          : oktaClient(name, provider, secret, share),
      );
    }
    out.set(scope, clients);
  }
  return out;
}

/**
 * Each scope's `identity.auto` and where decisions are kept; a dry run's (`auto: 'decide'`) are
 * noted on the alert, and no action is recorded, so nothing takes one.
 */
function autoOf(options: IdentityRunOptions): Pick<IdentityDeps, 'auto' | 'recordAuto'> {
  const config = new Map(
    identityScopes(options.config).flatMap(([scope, identity]) =>
      identity.auto ? [[scope, identity.auto] as const] : [],
    ),
  );
  if (options.auto === false || !config.size) return {};
  if (options.auto === 'decide')
    return {
      auto: { config, response: new AutoResponse(options.io, { dryRun: true }) },
      recordAuto: async () => {},
    };
  const actions = accountStore(options.io);
  return {
    auto: { config, response: new AutoResponse(options.io) },
    recordAuto: async ({ id, action, login, scope }) => {
      await recordAccountAction(
        { actions, clock: options.io.clock },
        {
          id,
          action,
          logins: [login],
          ...(scope === 'top' ? {} : { tenant: scope }),
          by: 'auto',
          reason: 'automatic response to an at-risk leaked login (identity.auto)',
        },
      );
    },
  };
}

/** What a credential's identity line calls its provider: `Entra ID corp` (render/identity.ts). */
export function identityLabels(
  config: Pick<AlertsConfig, 'identity' | 'tenants'>,
): (tenant: number | undefined, provider: string) => string | undefined {
  const labels = new Map<string, string>();
  for (const [scope, identity] of identityScopes(config))
    for (const [name, provider] of Object.entries(identity.providers))
      labels.set(`${scope}#${name}`, `${PROVIDER_LABELS[provider.type]} ${name}`);
  return (tenant, provider) => labels.get(`${tenant ?? 'top'}#${provider}`);
}

const scopeName = (scope: Scope) => (scope === 'top' ? "the top-level sources'" : `tenant ${scope}'s`);

export interface IdentityRunOptions {
  config: AlertsConfig;
  secrets: SecretObject;
  io: TableIo;
  fetch?: typeof fetch;
  logger: Logger;
  metrics: Metrics;
  deliver: DeliverDeps;
  /** Automatic responses (`identity.auto`): taken (default), or only decided (`'decide'`: a dry run). */
  auto?: boolean | 'decide';
  /** Tests: shorter bounds than section 12's 3 and 30 seconds. */
  lookupTimeoutMs?: number;
  cycleLookupMs?: number;
}

/** The run's identity lookups; throws nothing: missing secrets come back as problems. */
export function identityRun(options: IdentityRunOptions, problems: string[]): IdentityLookups {
  const store = new IdentityStore(options.io);
  const logger = options.logger.child({ component: 'identity' });
  const deps: IdentityDeps = {
    store,
    providers: providerClients(
      options.config,
      options.secrets,
      problems,
      // Real time, whatever clock the run's table writes use: the lanes are shared with other processes.
      new IdentityLanes(options.io.client, options.io.tableName, systemClock, options.io.onRequest),
    ),
    fetch: options.fetch ?? fetch,
    now: () => Date.now(),
    logger,
    metrics: options.metrics,
    ...(options.lookupTimeoutMs ? { lookupTimeoutMs: options.lookupTimeoutMs } : {}),
    ...(options.cycleLookupMs ? { cycleLookupMs: options.cycleLookupMs } : {}),
    ...autoOf(options),
    async refused(scope, provider, message) {
      const fields = { scope, provider, error: message };
      const first = await store.markRefused(scope, provider, new Date(), message);
      if (!first) {
        logger.warn('an identity provider still refuses our credentials; its logins are unknown', fields);
        return;
      }
      logger.error(
        'an identity provider refuses our credentials; its logins are unknown until it accepts them',
        fields,
      );
      await notifyOps(
        options.deliver,
        {
          kind: 'ops',
          title: `identity provider ${provider} refuses our credentials`,
          text: `The identity provider ${provider} of ${scopeName(scope)} config refused our credentials (${message}). Its logins get the verdict unknown (unavailable) and their alerts still go out. Fix the provider's credentials or permissions; \`exposure-alerts identity test ${provider}\` checks them.`,
        },
        logger,
      );
    },
    async accepted(scope, provider) {
      if (await store.clearRefused(scope, provider))
        logger.info('an identity provider accepts our credentials again', { scope, provider });
    },
  };
  return new IdentityLookups(deps);
}

/** Acting on accounts in a run that has the providers' secrets (a worker, the CLI, `serve`). */
export function accountActions(parts: {
  io: TableIo;
  lookups: IdentityLookups;
  followUp: AccountDeps['followUp'];
  logger: Logger;
  deliver: DeliverDeps;
  fetch?: typeof fetch;
}): AccountDeps {
  const logger = parts.logger.child({ component: 'identity-act' });
  const deps: AccountDeps = {
    actions: accountStore(parts.io),
    store: parts.lookups.deps.store,
    providers: parts.lookups.deps.providers,
    fetch: parts.fetch ?? fetch,
    clock: parts.io.clock,
    logger,
    followUp: parts.followUp,
    report: (title, text) => notifyOps(parts.deliver, { kind: 'ops', title, text }, logger),
    // A failed automatic response frees its account for a later leak.
    auto: new AutoResponse(parts.io),
  };
  parts.lookups.deps.runAuto = async (ids) => {
    for (const id of ids) await finishAccountAction(deps, id);
  };
  return deps;
}

/**
 * Identity as a run has it (lib/runtime.ts, which loads this module only when some scope has
 * `identity`): the lookups with their secrets (on AWS the providers' own secret: secrets.ts), and
 * account actions, which the delivery pass also finishes when a crash interrupted them. A dry run
 * looks up and decides but acts on no account (section 12), and needs no secret: a provider
 * without one looks nothing up, and `warn` says so.
 */
export async function identityForRun(
  options: Omit<IdentityRunOptions, 'auto'> & {
    env: { identitySecretId?: string };
    warn: (text: string) => void;
    dryRun?: boolean;
    followUp: AccountDeps['followUp'];
  },
): Promise<{ lookups: IdentityLookups; account?: AccountDeps }> {
  const problems: string[] = [];
  const secrets = await identitySecrets(options.env, options.secrets, options.config, options.warn);
  const lookups = identityRun({ ...options, secrets, auto: options.dryRun ? 'decide' : true }, problems);
  if (options.dryRun) {
    for (const problem of problems)
      options.warn(`identity lookups are off for this provider in this dry run: ${problem}`);
    return { lookups };
  }
  if (problems.length) throw new ConfigError(problems.join('; '));
  const account = accountActions({ ...options, lookups });
  // The pass finishes interrupted account actions too, after the event actions.
  const { deliver } = options;
  const finishEvents = deliver.finishActions;
  deliver.finishActions = async (deadline) =>
    ((await finishEvents?.()) ?? 0) + (await finishAccountActions(account, { deadline }));
  return { lookups, account };
}
