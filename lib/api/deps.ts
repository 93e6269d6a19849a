/**
 * Longer than 300 lines because it is the one place where the API's parts are built from what a
 * process has (a config, or the stack's settings and the pollers' catalog), and reads best whole.
 *
 * Builds the API's dependencies from the environment and the secret object, the same way for
 * Lambda (functions/api.ts), `serve` and `assets toggle`: the upstream clients with the API's short
 * time budget (loaded with the first request that calls the upstream: upstream-clients.ts; their
 * settings checked at once), the DynamoDB stores (audit trail, silences, status; the table created when
 * DYNAMODB_ENDPOINT points at a local DynamoDB), and the re-reader of `apiClients`. What the alert
 * config says about the API's work comes from the process that read it (`known`, `slackActions`,
 * `identity`: serve and npm start), else from the stack (SLACK_ACTIONS) and the pollers' catalog.
 *
 * @example
 * const env = readEnvironment();
 * const deps = await createApiDeps(env, await loadSecrets(env), { logger });
 * const app = createApiApp(deps);
 */

import { createRequire } from 'node:module';
import type { ActingUpstream } from '../actions/event-upstream.ts';
import { actDeps } from '../actions/events.ts';
import type { SlackWork } from '../actions/slack-work.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Environment } from '../env.ts';
import { ConfigError } from '../errors.ts';
import type { AccountDeps } from '../identity/act.ts';
import { lazily } from '../lazy.ts';
import { createLogger, type Logger } from '../log.ts';
import { EmfMetrics } from '../metrics.ts';
import type { AlertsConfig } from '../rules/schema.ts';
import { loadSecrets, type SecretObject } from '../secrets.ts';
import { DynamoAuditStore, DynamoRefusalAudit, DynamoSilenceAudit } from '../state/audit.ts';
import { type Catalog, CatalogStore } from '../state/catalog.ts';
import { describeSkew, syncedClock } from '../state/clock-sync.ts';
import { IdempotencyStore } from '../state/idempotency.ts';
import { recordAccess } from '../state/records/once.ts';
import { SilenceStore } from '../state/silences.ts';
import { StatusReader } from '../state/status.ts';
import { createDynamoClient, ensureTable } from '../state/table.ts';
import type { UpstreamClientOptions } from '../upstream/client.ts';
import { checkBaseUrl, upstreamCredentials } from '../upstream/settings.ts';
import type { ApiDeps } from './app.ts';
import {
  type ApiClients,
  parseApiClients,
  type RefusedClient,
  readApiClients,
  resolveBinding,
} from './auth.ts';
import type { TestableDestinations } from './console-acts.ts';
import { ApiError } from './errors.ts';
import type { SlackSettings } from './slack.ts';
import type { AssetToggler } from './toggle.ts';
import type { UpstreamClients } from './upstream-clients.ts';

/**
 * A caller of the API must not be left hanging: the whole upstream call, retries included, gets
 * 10 s, each attempt 4 s. A 429 whose wait would pass that budget is answered 503 at once.
 * (Toggling is idempotent: it sets a state, so retrying a 5xx or a timeout is safe.)
 */
export const API_UPSTREAM_BUDGET = { totalMs: 10_000, attemptMs: 4_000, maxAttempts: 3 } as const;

/** An action's upstream call: an attempt of up to 6 s, and one more: within the function's 15 s. */
export const ACTION_UPSTREAM_BUDGET = { attemptMs: 6_000, maxAttempts: 2 } as const;

export interface ApiDepsOptions {
  logger?: Logger;
  clock?: Clock;
  /** Overrides of the upstream client's options (tests shorten timeouts and backoff). */
  upstream?: Partial<UpstreamClientOptions>;
  /** Total upstream budget; default API_UPSTREAM_BUDGET.totalMs. */
  upstreamTimeoutMs?: number;
  /** Reads the secret object afresh; default: SECRET_ID or SECRETS_FILE again, or the secrets given when neither is set. */
  readSecrets?: () => Promise<SecretObject>;
  /**
   * Check `apiClients` now and warn when there is none; default true. The CLI, which
   * authenticates nobody, turns it off.
   */
  checkApiClients?: boolean;
  /** The config's `actions.slack` (npm start, serve); else SLACK_ACTIONS, which the stack sets. */
  slackActions?: unknown;
  /**
   * What the alert config says about the API's work (its tenants, the destinations that hear of
   * actions, the password policy), from a process that read the config (npm start, serve); else
   * the catalog the pollers publish in the table (the Lambda, which has no config).
   */
  known?: Omit<Catalog, 'writtenAt'>;
  /**
   * The identity providers with their secrets, in a process that has them (npm start: its
   * runtime's `identityAct`; serve: made from the config): account actions are taken at once.
   * Without (the Lambda), they are recorded and handed to a worker (identity-routes.ts).
   */
  identity?: Pick<AccountDeps, 'providers' | 'report'>;
  /**
   * The config's destinations with their secrets, for the console's test messages (npm start: the
   * run's own; serve: made from its config). Without, a process with ALERTS_CONFIG (the Lambda,
   * with its config layer) reads the config and resolves them when first asked.
   */
  destinations?: () => Promise<TestableDestinations>;
  /** `start --dry-run`: the routes that would act outside answer 409 `dry_run` (dry-run.ts). */
  dryRun?: boolean;
}

export interface ApiRuntime extends ApiDeps {
  /** Releases the DynamoDB client's sockets. */
  close(): void;
}

/** Throws a ConfigError naming the problem (bad `apiClients`, no upstream credentials, bad URL). */
export async function createApiDeps(
  env: Environment,
  secrets: SecretObject,
  options: ApiDepsOptions = {},
): Promise<ApiRuntime> {
  const logger = options.logger ?? createLogger({ level: env.logLevel, name: 'api' });
  // Under IAM auth there are no bearer tokens, so no apiClients to check.
  const check = (options.checkApiClients ?? true) && env.apiAuth !== 'aws_iam';
  // Checked now, so a malformed map fails the cold start instead of every request.
  const initial = check ? readApiClients(secrets.apiClients) : undefined;
  const initialClients = initial?.clients;
  // Each client refused on its own is named now, never its digest (auth.ts says again at each read).
  for (const { name, why } of [
    ...(initial?.refused ?? []),
    ...refusedBindings(initialClients, options.known),
  ])
    logger.warn(`API client "${name}" refused: ${why}`, { client: name });
  if (initialClients && Object.keys(initialClients).length === 0) {
    logger.warn(
      'no API clients are configured: add apiClients (client name to SHA-256 hex digest of its token) to the secret object; every token is refused until then',
    );
  }
  const dynamo = createDynamoClient({ endpoint: env.dynamodbEndpoint });
  // Audit times and silences on the table's timeline (state/clock-sync.ts).
  const real = syncedClock(systemClock, dynamo, (ms) =>
    logger.warn(`this machine's clock is ${describeSkew(ms)} DynamoDB's; correcting for it`),
  );
  const clock = options.clock ?? real;
  // The upstream clients load with the first request that calls the upstream (upstream-clients.ts);
  // what would make them fail is checked now, as building them did.
  if (!options.upstream?.auth) upstreamCredentials(env, secrets);
  checkBaseUrl(options.upstream?.baseUrl ?? env.apiUrl);
  const clients: () => Promise<UpstreamClients> = lazily(
    'the upstream clients (api/upstream-clients.ts)',
    () =>
      import('./upstream-clients.ts').then(({ upstreamClients }) =>
        upstreamClients({
          env,
          secrets,
          dynamo,
          real,
          clock,
          logger,
          budgets: { toggle: API_UPSTREAM_BUDGET, acting: ACTION_UPSTREAM_BUDGET },
          ...(options.upstream ? { overrides: options.upstream } : {}),
        }),
      ),
  );
  const upstream: AssetToggler = {
    toggleAsset: async (...args) => (await clients()).upstream.toggleAsset(...args),
  };
  // A `tenants` entry's assets are toggled with its own token, which reaches only its assets.
  const upstreamFor = (tenant: number): AssetToggler => ({
    toggleAsset: async (...args) => (await clients()).lookingFor(tenant).toggleAsset(...args),
  });
  const acting = (tenant?: number): ActingUpstream => ({
    eventActions: async (type, uids) => {
      const made = await clients();
      return (tenant === undefined ? made.acting : made.actingFor(tenant)).eventActions(type, uids);
    },
  });
  try {
    if (env.dynamodbEndpoint) await ensureTable(dynamo, env.tableName);
  } catch (error) {
    dynamo.destroy();
    throw error;
  }
  // The secret object is read again for new or removed clients; secrets given with no source to
  // read them from (a bench, an embedding program) are all there is, and stay what they were.
  const readSecrets =
    options.readSecrets ?? (env.secretId || env.secretsFile ? () => loadSecrets(env) : async () => secrets);
  let first = true;
  // Under `start --dry-run` the silences and positions it shows are those the dry run reads,
  // the real run's where its own table has none (state/read-through.ts).
  const client = options.dryRun
    ? (await import('../state/read-through.ts')).readThrough(dynamo, env.tableName)
    : dynamo;
  const io = { client, tableName: env.tableName, clock };
  const silences = new SilenceStore(io);
  const catalog = new CatalogStore(io);
  const fromConfig = options.known;
  const known = fromConfig ? async () => fromConfig : () => catalog.read();
  const slack = slackSettings(options.slackActions ?? env.slackActions, secrets);
  // Follow-ups go to the destinations the config names (read here, or the catalog the pollers publish).
  const act = actDeps({
    upstream: acting(),
    // A `tenants` entry's events are acted on with that tenant's token.
    tenants: {
      ids: async () => (await known())?.tenants?.map((t) => t.id) ?? [],
      upstreamFor: (id) => acting(id),
    },
    io,
    records: recordAccess(io),
    logger,
    targets: async () => (await known())?.followUps ?? [],
  });
  // Acting on accounts: its code loads with the first such request (most APIs never see one).
  let accounts: Promise<AccountDeps> | undefined;
  const given = options.identity;
  const identity: ApiDeps['identity'] = {
    known,
    accounts: () => {
      accounts ??= Promise.all([import('../identity/act.ts'), import('../identity/store.ts')]).then(
        ([{ accountStore }, { IdentityStore }]) => ({
          actions: accountStore(io),
          store: new IdentityStore(io),
          ...(given?.providers ? { providers: given.providers } : {}),
          ...(given?.report ? { report: given.report } : {}),
          fetch,
          clock,
          logger: logger.child({ component: 'identity-act' }),
          followUp: act.followUp,
        }),
      );
      return accounts;
    },
  };
  return {
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(slack ? { slack, metrics: new EmfMetrics({ service: 'api' }) } : {}),
    // On AWS: what a Slack request leaves for after its answer, and account actions, go to a worker.
    ...(env.workQueueUrl ? { handOff: queueHandOff(env.workQueueUrl) } : {}),
    upstream,
    upstreamFor,
    act,
    identity,
    console: {
      io,
      tenants: async () => (await known())?.tenants ?? [],
      ...(options.destinations
        ? { destinations: options.destinations }
        : env.alertsConfig
          ? { destinations: configDestinations(env, readSecrets) }
          : {}),
    },
    credentialDomains: async () => {
      const facts = await known();
      return { tenants: facts?.tenants ?? [], top: facts?.domains ?? [] };
    },
    // With tenants: the tenant a Slack channel's routes carry alone, for its lookups.
    tenantOfChannel: async (channel) => (await known())?.channels?.find((c) => c.channel === channel)?.tenant,
    // As the tenant the query names (a `tenants` entry: its own token), else the top level's; the
    // passwords as the config's policy says (from the catalog alone: masked until a poller has run).
    lookup: async (query) => {
      const [facts, { lookup, lookupTenant }] = await Promise.all([known(), import('../actions/lookup.ts')]);
      let named: { id: number } | undefined;
      try {
        named = lookupTenant(facts?.tenants ?? [], query.tenant);
      } catch (error) {
        throw new ApiError('invalid_request', (error as Error).message);
      }
      const made = await clients();
      return lookup(
        {
          upstream: named ? made.lookingFor(named.id) : made.upstream,
          passwords: facts?.passwords ?? 'masked',
        },
        query,
      );
    },
    audit: new DynamoAuditStore(dynamo, env.tableName),
    refusals: new DynamoRefusalAudit(dynamo, env.tableName),
    idempotency: new IdempotencyStore(io),
    silences,
    silenceAudit: new DynamoSilenceAudit(dynamo, env.tableName),
    status: new StatusReader(io, silences),
    loadApiClients: async () => {
      // The first read is the one just done at start; later ones go back to the source.
      if (first && initialClients) {
        first = false;
        return initialClients;
      }
      return parseApiClients((await readSecrets()).apiClients);
    },
    logger,
    now: () => clock.now(),
    sleep: (ms) => clock.sleep(ms),
    upstreamTimeoutMs: options.upstreamTimeoutMs ?? API_UPSTREAM_BUDGET.totalMs,
    iamCallers: env.apiAuth === 'aws_iam',
    close: () => dynamo.destroy(),
  };
}

/**
 * The destinations of the config at ALERTS_CONFIG, with the secret object's secrets, read when a
 * test message is first asked for (and kept): a destination whose secret is missing is refused
 * by name when tested, the others still can be.
 */
export function configDestinations(
  env: Environment,
  readSecrets: () => Promise<SecretObject>,
): () => Promise<TestableDestinations> {
  let made: Promise<TestableDestinations> | undefined;
  return () => {
    made ??= (async () => {
      const [{ loadAlertsConfig }, { resolveDestination }, secrets] = await Promise.all([
        import('../rules/source.ts'),
        import('../deliver/destinations.ts'),
        readSecrets(),
      ]);
      const { config } = await loadAlertsConfig(env);
      return testable(config, secrets, resolveDestination, env.appUrl);
    })();
    made.catch(() => {
      made = undefined;
    });
    return made;
  };
}

/** A config's destinations resolved one by one: what a missing secret stops is that one's test. */
export function testable(
  config: Pick<AlertsConfig, 'destinations' | 'digest'>,
  secrets: SecretObject,
  resolve: typeof import('../deliver/destinations.ts').resolveDestination,
  appUrl: string,
): TestableDestinations {
  const destinations = new Map<string, import('../deliver/destinations.ts').ResolvedDestination>();
  const unusable = new Map<string, string>();
  for (const [name, d] of Object.entries(config.destinations)) {
    const problems: string[] = [];
    const resolved = resolve(name, d, secrets, problems);
    if (problems.length) unusable.set(name, problems.join('; '));
    else destinations.set(name, resolved);
  }
  return { destinations, unusable, appUrl, digest: config.digest };
}

/**
 * The identity providers of a config, with their secrets, for a process that serves the API
 * beside its config (serve): account actions are then taken at once. A provider whose secret is
 * missing is left out, said in a warning (its logins' actions fail naming it). Undefined without
 * identity; the identity code loads only with it.
 */
export async function configIdentity(
  config: Pick<AlertsConfig, 'identity' | 'tenants'>,
  secrets: SecretObject,
  warn: (text: string) => void,
  env: Pick<Environment, 'dynamodbEndpoint' | 'tableName'>,
): Promise<ApiDepsOptions['identity']> {
  if (config.identity === undefined && !(config.tenants ?? []).some((t) => t.identity !== undefined))
    return undefined;
  const [{ providerClients }, { IdentityLanes }] = await Promise.all([
    import('../identity/index.ts'),
    import('../identity/lanes.ts'),
  ]);
  const problems: string[] = [];
  // The providers' calls take their turns in the lanes every run of the deployment shares.
  const lanes = new IdentityLanes(
    createDynamoClient({ endpoint: env.dynamodbEndpoint }),
    env.tableName,
    systemClock,
  );
  const providers = providerClients(config, secrets, problems, lanes);
  for (const problem of problems) warn(`account actions cannot use this provider: ${problem}`);
  return { providers };
}

/**
 * The Slack app's settings from the config's `actions.slack` (an object, or its JSON), with the
 * signing secret read from the secret object. Undefined without one; a ConfigError naming what is
 * wrong otherwise, so a bad deploy fails its cold start, not every click.
 */
export function slackSettings(value: unknown, secrets: SecretObject): SlackSettings | undefined {
  if (value === undefined || value === null) return undefined;
  let raw: unknown = value;
  if (typeof value === 'string') {
    try {
      raw = JSON.parse(value);
    } catch {
      throw new ConfigError('SLACK_ACTIONS is not JSON');
    }
  }
  const v = (raw ?? {}) as {
    signingSecret?: { secret?: unknown };
    teamId?: unknown;
    allowedUsers?: unknown;
    identityAdmins?: unknown;
    responseUrlPrefix?: unknown;
  };
  const name = v.signingSecret?.secret;
  const secret = typeof name === 'string' ? secrets[name] : undefined;
  if (typeof secret !== 'string' || secret === '')
    throw new ConfigError(
      `actions.slack.signingSecret: the secret object has no ${typeof name === 'string' ? JSON.stringify(name) : 'name for it'}`,
    );
  const users = Array.isArray(v.allowedUsers)
    ? v.allowedUsers.filter((u): u is string => typeof u === 'string')
    : [];
  if (typeof v.teamId !== 'string' || users.length === 0)
    throw new ConfigError('actions.slack needs teamId and allowedUsers');
  return {
    signingSecret: secret,
    teamId: v.teamId,
    allowedUsers: users,
    // Named one by one: a "*" here would let anyone disable accounts, so it is never honoured.
    ...(Array.isArray(v.identityAdmins)
      ? { identityAdmins: v.identityAdmins.filter((u): u is string => typeof u === 'string' && u !== '*') }
      : {}),
    responseUrlPrefix:
      typeof v.responseUrlPrefix === 'string' ? v.responseUrlPrefix : 'https://hooks.slack.com/',
  };
}

/**
 * Hands Slack work, and account actions, to the events worker through its queue (on AWS: the
 * function is frozen once it has answered, so the work cannot wait in it; and only the workers
 * read the identity providers' secrets). The SQS client is the runtime's, loaded with
 * `require` as the dispatchers load it; it is not in the bundle.
 */
function queueHandOff(queueUrl: string): (work: SlackWork) => Promise<void> {
  type Sqs = typeof import('@aws-sdk/client-sqs');
  let sqs: { module: Sqs; client: InstanceType<Sqs['SQSClient']> } | undefined;
  return async (work) => {
    if (!sqs) {
      const module = createRequire(import.meta.url)('@aws-sdk/client-sqs') as Sqs;
      sqs = { module, client: new module.SQSClient({}) };
    }
    await sqs.client.send(
      new sqs.module.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(work) }),
    );
  };
}

/** The clients whose binding names no tenant of a config that is known at start (serve, npm start). */
function refusedBindings(clients: ApiClients | undefined, known: ApiDepsOptions['known']): RefusedClient[] {
  if (!clients || !known) return [];
  return Object.entries(clients).flatMap(([name, client]) => {
    const { refused } = resolveBinding(name, client, known.tenants ?? []);
    return refused ? [{ name, why: refused }] : [];
  });
}
