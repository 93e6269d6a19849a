/**
 * Builds the product's world from the environment, once: the alert config, the secret object,
 * the upstream client, DynamoDB and its stores, resolved destinations, and the dependencies of the
 * poll cycle and the delivery pass. Lambda handlers call this at cold start; CLI commands and
 * `npm start` call it with their own logger and console.
 *
 * The hops an alert takes, and the file that does each:
 * 1. a dispatcher hands the streams out, longest waiting first, to workers that each run a cycle
 *    over theirs, then a delivery pass: poll/dispatch.ts, poll/cycle.ts (functions/dispatch.ts,
 *    functions/worker.ts)
 * 2. a stream takes its lease, knows where its walk stands, and pages: poll/stream.ts, poll/walk.ts
 *    (its request: poll/streams.ts; the upstream: upstream/client.ts)
 * 3. each item of a page gets the password policy, is cut to fit, and routed: poll/page.ts,
 *    rules/passwords.ts, state/limits.ts, rules/match.ts
 * 4. its delivery records are created once (dedupe): state/records/index.ts; then the cursor moves
 * 5. webhook deliveries of an exclusive stream are sent right away: deliver/inline.ts
 * 6. the pass reads what is due per destination, under its lease: deliver/pass.ts,
 *    state/records/queue.ts, state/destinations.ts
 * 7. renders it (digests over the threshold): deliver/messages.ts, render/
 * 8. sends it and records the outcome (sent, retry, dead): deliver/senders.ts, deliver/post.ts,
 *    deliver/settle.ts, deliver/retry.ts
 *
 * It is longer than 300 lines because it is the one place where every part is wired to the others
 * (options, the runtime's shape, and the wiring), and it reads best whole.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ActDeps } from './actions/events.ts';
import { type Clock, systemClock } from './clock.ts';
import {
  dryRunDestinations,
  type ResolvedDestination,
  resolveDestinations,
  resolveValue,
} from './deliver/destinations.ts';
import { followUpTargets, keepsItems } from './deliver/follow-up-targets.ts';
import type { HttpPost } from './deliver/post.ts';
import type { DeliverDeps } from './deliver/types.ts';
import { kindOptions } from './destinations/kinds.ts';
import type { Environment } from './env.ts';
import { ConfigError } from './errors.ts';
import type { AccountDeps } from './identity/act.ts';
import { lazily } from './lazy.ts';
import type { Logger } from './log.ts';
import { MemoryMetrics, type Metrics } from './metrics.ts';
import type { Alert } from './model.ts';
import type { CycleDeps } from './poll/cycle.ts';
import type { Pinger } from './poll/heartbeat.ts';
import { type TenantRef, tenantOfStream, tenantRef } from './poll/ids.ts';
import type { QuotaGate } from './poll/quota.ts';
import { tenantRefusals } from './poll/refusals.ts';
import type { PollKind, UpstreamFor } from './poll/streams.ts';
import type { PollDeps } from './poll/types.ts';
import { noticeFor, renderFor } from './render/lazy.ts';
import type { RenderOptions } from './render/types.ts';
import type { AlertsConfig } from './rules/config.ts';
import { decide } from './rules/match.ts';
import { applyPasswordPolicy, maskRawItem } from './rules/passwords.ts';
import { loadAlertsConfig } from './rules/source.ts';
import { loadSecrets, type SecretObject } from './secrets.ts';
import { describeSkew, syncedClock } from './state/clock-sync.ts';
import { DestinationStateStore } from './state/destinations.ts';
import { DynamoRateGovernor, type UpstreamRates } from './state/governor.ts';
import { runOwner } from './state/lease.ts';
import { anyUnfinished, EVENT_ACTIONS_OPEN, STALE_ACTION_MS } from './state/open-actions.ts';
import { QuarantineStore } from './state/quarantine.ts';
import { type DeliveryQueue, DeliveryRecords } from './state/records/index.ts';
import { SilenceStore, silenceSource } from './state/silences.ts';
import { StreamStore } from './state/streams.ts';
import { createDynamoClient, ensureTable } from './state/table.ts';
import { TenantStateStore } from './state/tenants.ts';
import { ThreadStore } from './state/threads.ts';
import type { TokenProvider } from './upstream/auth.ts';
import type { UpstreamClient } from './upstream/client.ts';
import {
  createUpstreamClient,
  tenantTokenProvider,
  tokenProviderFor,
  usesStaticToken,
} from './upstream/index.ts';
import { tenantClients } from './upstream/tenants.ts';

/**
 * The credentials of a run that does not poll (`deliver --once`): it calls the upstream only to
 * finish an action a crash interrupted, so it runs without credentials too, and says what is
 * missing only if such an action needs them (the action stays open for a pass that has them).
 */
function deliveryCredentials(make: () => TokenProvider): TokenProvider {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const missing = new ConfigError(
      `finishing an interrupted action needs the upstream, and this run has ${error.message.replace(/^no upstream credentials: /, 'no credentials: ')}`,
    );
    return { getToken: () => Promise.reject(missing), invalidate: () => false };
  }
}

/** The POST every delivery makes (deliver/post.ts), loaded with the first send. */
const post = lazily('the POST of deliveries (deliver/post.ts)', () => import('./deliver/post.ts'));
const httpPost: HttpPost = async (url, init) => (await post()).httpPost(url, init);

// What only some configs or runs use, loaded when first needed (lib/lazy.ts).
const heartbeatCode = lazily('the heartbeat (poll/heartbeat.ts)', () => import('./poll/heartbeat.ts'));
const quotaCode = lazily('the global-search quota (poll/quota.ts, state/quota.ts)', async () => {
  const [{ QuotaGate }, { QuotaStore }] = await Promise.all([
    import('./poll/quota.ts'),
    import('./state/quota.ts'),
  ]);
  return { QuotaGate, QuotaStore };
});
const catalogCode = lazily('the catalog for status (poll/catalog.ts, state/catalog.ts)', async () => {
  const [{ catalogOf }, { CatalogStore }] = await Promise.all([
    import('./poll/catalog.ts'),
    import('./state/catalog.ts'),
  ]);
  return { catalogOf, CatalogStore };
});

export interface Optimisations {
  /** Final records of positioned items written as packs (state/records/packs.ts). */
  packs?: boolean;
  /** The claim mark: no reading for items above it (state/records/packs.ts). */
  claimMark?: boolean;
  /** New webhook deliveries of exclusive streams sent while polling (deliver/inline.ts). */
  inline?: boolean;
  /** Pages written while the next is fetched (poll/stream.ts); off means one page at a time. */
  pipeline?: boolean;
  /**
   * The console's alert index (state/records/alert-index.ts). A feature, not an optimisation: off
   * only in the bench, to show what its writes cost a drain.
   */
  alertIndex?: boolean;
}

export interface RuntimeOptions {
  env: Environment;
  logger: Logger;
  config?: AlertsConfig;
  secrets?: SecretObject;
  metrics?: Metrics;
  clock?: Clock;
  /** The upstream client's fetch (tests, benchmarks). */
  fetch?: typeof fetch;
  /** The POST deliveries make; `httpPost` (deliver/post.ts) by default. */
  post?: HttpPost;
  /** Where the console destination writes; stdout by default. */
  write?: (text: string) => void;
  color?: boolean;
  dynamo?: DynamoDBClient;
  upstream?: UpstreamClient;
  /** Counts DynamoDB requests (benchmarks). */
  onDynamoRequest?: (operation: string) => void;
  /**
   * Rates for the shared governor instead of the config's `upstream` (npm start, whose own
   * emulator allows more than the real service).
   */
  rates?: UpstreamRates;
  /**
   * Whether this run polls (default true). A run that only delivers (`deliver --once`) calls the
   * upstream only to finish an interrupted action, so it starts without credentials too.
   */
  polls?: boolean;
  /**
   * The kinds this run polls (a worker: its own); both by default. A run that polls no credentials
   * loads no quota gate.
   */
  kinds?: readonly PollKind[];
  /**
   * Print what every destination would receive instead of sending it (`npm start -- --dry-run`):
   * no destination secret is needed.
   */
  dryRun?: boolean;
  /** A dry run's folder where each message's items are left for `preview` (console/body.ts). */
  dryRunFiles?: string;
  /**
   * Whether this run's cycles ping the config's heartbeat (default true). The AWS workers do not:
   * there a dispatch and its jobs are the cycle (functions/worker.ts).
   */
  cycleHeartbeat?: boolean;
  /**
   * Identity lookups' bounds, shorter than section 12's 3 and 30 seconds (tests); and the fetch
   * the providers are asked with (default `fetch`, or `fetch` above).
   */
  identity?: { lookupTimeoutMs?: number; cycleLookupMs?: number; fetch?: typeof fetch };
  /** Optimisations the bench turns off one at a time, to show what each is worth. All on by default. */
  optimisations?: Optimisations;
  /**
   * Where warnings an operator must see go (config warnings, a low quota): the log by default; a
   * one-shot CLI command prints them as `warning:` lines instead.
   */
  warn?: (text: string) => void;
}

export interface Runtime {
  env: Environment;
  config: AlertsConfig;
  configSource: string;
  secrets: SecretObject;
  /** The client of the top-level sources (the token's tenant, or EXPOSURE_TENANT_ID's). */
  upstream: UpstreamClient;
  /** The client of a `tenants` entry (its own token), or the top level's for none. */
  upstreamFor: UpstreamFor;
  /** The `tenants` entry a stream belongs to, with its name; none for the top-level sources. */
  tenantOf(source: string): TenantRef | undefined;
  /** The heartbeat of a kind, when the config has one (poll/heartbeat.ts); none in a dry run. */
  heartbeat(kind: PollKind): Pinger | undefined;
  dynamo: DynamoDBClient;
  /** Creating delivery records (the poll cycle's dedupe step). */
  records: DeliveryRecords;
  /** The records' outbox: what the delivery pass reads, and `deliveries list` / `retry`. */
  deliveries: DeliveryQueue;
  streams: StreamStore;
  /** Run-time silences (docs/runbook.md). */
  silences: SilenceStore;
  quarantine: QuarantineStore;
  destinationState: DestinationStateStore;
  destinations: Map<string, ResolvedDestination>;
  poll: PollDeps;
  deliver: DeliverDeps;
  cycle: CycleDeps;
  /**
   * What acting on events needs (actions/events.ts): the upstream, the records, the follow-ups;
   * built, with the code, at the first call.
   */
  act(): Promise<ActDeps>;
  /** Acting on accounts (lib/identity/act.ts), when the config has `identity`. */
  identityAct?: AccountDeps;
  /** The shared rate governor every upstream request of this run takes its turn from. */
  governor: DynamoRateGovernor;
  metrics: Metrics;
  logger: Logger;
  /** A dry run (`dryRun` above): its summaries say what it would send. */
  dryRun?: boolean;
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { env, logger } = options;
  const warn = options.warn ?? ((text: string) => logger.warn(text));
  const loaded = options.config
    ? { config: options.config, source: 'given' }
    : await loadAlertsConfig(env, (text) => warn(`config: ${text}`));
  const config = loaded.config;
  const secrets = options.secrets ?? (await loadSecrets(env));
  const destinations = options.dryRun
    ? dryRunDestinations(config, options.dryRunFiles)
    : resolveDestinations(config, secrets);
  const metrics = options.metrics ?? new MemoryMetrics();
  let quotaWarned = false;
  const client = options.dynamo ?? createDynamoClient({ endpoint: env.dynamodbEndpoint });
  if (env.dynamodbEndpoint && !options.dynamo) await ensureTable(client, env.tableName);
  // A dry run's table (`<real table>-dry-run`) reads what it has no record of yet from the real
  // run's, writing only to its own (state/read-through.ts).
  const dynamo = options.dryRun
    ? (await import('./state/read-through.ts')).readThrough(client, env.tableName)
    : client;
  // The times this run writes for others (leases, pauses, when a stream was polled) are on the
  // table's timeline, whatever this host's clock says (state/clock-sync.ts). A test's own clock
  // is used as it is.
  const real = syncedClock(systemClock, client, (ms) =>
    warn(
      `this machine's clock is ${describeSkew(ms)} DynamoDB's; this run corrects for it, but fix the clock (NTP): other tools trust it`,
    ),
  );
  const clock = options.clock ?? real;
  // Real time, whatever clock the rest runs on: slots are shared with other processes.
  const governor = new DynamoRateGovernor(dynamo, env.tableName, real, {
    rates: options.rates ?? config.upstream,
    searching: (config.sources.credentials?.domains.length ?? 0) > 0,
    onRequest: options.onDynamoRequest,
  });
  // The global-search quota, for a run that polls credentials (loaded only then).
  const searches =
    options.polls !== false &&
    (options.kinds ?? ['credentials']).includes('credentials') &&
    [config.sources, ...(config.tenants ?? []).map((t) => t.sources)].some(
      (sources) => (sources?.credentials?.domains.length ?? 0) > 0,
    );
  let quota: QuotaGate | undefined;
  if (searches) {
    const { QuotaGate, QuotaStore } = await quotaCode();
    quota = new QuotaGate(new QuotaStore(dynamo, env.tableName), clock);
  }
  const upstream =
    options.upstream ??
    createUpstreamClient(env, secrets, {
      ...(options.polls === false
        ? { auth: deliveryCredentials(() => tokenProviderFor(env, secrets, options.fetch, governor)) }
        : {}),
      logger: logger.child({ component: 'upstream' }),
      fetch: options.fetch,
      clock,
      governor,
      onQuota: (reading) => {
        if (reading.remaining === null) return;
        quota?.observe(reading.remaining);
        metrics.gauge('GlobalSearchQuotaRemaining', reading.remaining);
        // Warned once a run, ahead of the pause (at quotaReserve) while there is still time to act.
        if (reading.remaining < 2 * config.upstream.quotaReserve && !quotaWarned) {
          quotaWarned = true;
          warn(
            `the monthly global-search quota is running low (${reading.remaining} searches left); credential polling pauses below ${config.upstream.quotaReserve} (upstream.quotaReserve): poll credentials less often, or watch fewer domains`,
          );
        }
      },
    });
  const { upstreamFor, checkTenants } = tenantClients(upstream, config, {
    auth: (id) =>
      options.polls === false
        ? deliveryCredentials(() => tenantTokenProvider(env, secrets, id, options.fetch, governor))
        : tenantTokenProvider(env, secrets, id, options.fetch, governor),
    staticToken: usesStaticToken(env, secrets),
    tenantId: env.tenantId,
  });
  const tenantOf = (source: string) => tenantRef(config, tenantOfStream(source));
  // The heartbeat's URLs, their secrets looked up now: a missing one is named at start. A dry run
  // sends nothing, heartbeats included.
  const beats = new Map<PollKind, Pinger>();
  const beatProblems: string[] = [];
  // Loaded only for a config with a heartbeat.
  const beating =
    !options.dryRun && (config.heartbeat?.events ?? config.heartbeat?.credentials) !== undefined
      ? await heartbeatCode()
      : undefined;
  for (const kind of ['events', 'credentials'] as const) {
    const wanted = config.heartbeat?.[kind];
    if (wanted === undefined || !beating) continue;
    const { heartbeatProblem, pinger } = beating;
    const url = resolveValue(wanted, secrets, `heartbeat.${kind}`, beatProblems);
    const named = typeof wanted === 'string' ? '' : ` (secret ${JSON.stringify(wanted.secret)})`;
    const problem = url ? heartbeatProblem(`heartbeat.${kind}${named}`, url) : undefined;
    if (problem) beatProblems.push(problem);
    if (!url || problem) continue;
    beats.set(
      kind,
      pinger(url, config.heartbeat?.style ?? 'healthchecks', {
        logger: logger.child({ component: 'heartbeat' }),
      }),
    );
  }
  if (beatProblems.length) throw new ConfigError(beatProblems.join('; '));
  const heartbeatOf = (kind: PollKind) => beats.get(kind);
  const tuning = options.optimisations ?? {};
  const records = new DeliveryRecords(dynamo, env.tableName, clock, {
    onRequest: options.onDynamoRequest,
    keepItems: (name) => keepsItems(destinations.get(name)),
    tenants: (config.tenants ?? []).map((t) => t.id),
    packs: tuning.packs,
    claimMark: tuning.claimMark,
    alertIndex: tuning.alertIndex,
  });
  const deliveries = records.queue;
  const io = { client: dynamo, tableName: env.tableName, clock, onRequest: options.onDynamoRequest };
  const silences = new SilenceStore(io);
  let published: Promise<void> | undefined;
  // Once a run (a Lambda's cold start), with the first cycle: what `status` needs of this config,
  // for the API to read. Loaded then: an invocation that polls nothing never needs it.
  const publish = () =>
    (published ??= catalogCode()
      .then(({ catalogOf, CatalogStore }) =>
        new CatalogStore(io).write(catalogOf(config, destinations.values())),
      )
      .catch((error: unknown) => {
        published = undefined;
        warn(
          `could not store the streams and destinations for status (${String(error)}); retried next cycle`,
        );
      }));
  const streams = new StreamStore(dynamo, env.tableName, clock);
  const quarantine = new QuarantineStore(dynamo, env.tableName, clock, options.onDynamoRequest);
  const destinationState = new DestinationStateStore(dynamo, env.tableName, clock);
  const owner = runOwner();
  const policy = config.passwords;
  const write =
    options.write ?? ((text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`));
  // What a credential's identity line calls its provider (`Entra ID corp`), once identity loads.
  let identityLabel: RenderOptions['identityLabel'];
  const run = { actions: config.actions, color: options.color ?? false };
  const renderOptions = (destination: ResolvedDestination, now: Date) => ({
    destination: destination.name,
    appUrl: env.appUrl,
    digest: config.digest,
    now,
    kindOptions: kindOptions(destination, run),
    ...(identityLabel ? { identityLabel } : {}),
  });
  const poll: PollDeps = {
    streams,
    records,
    quarantine,
    route: (alert, now) => decide(config, alert, now),
    // The config's own silences are in `route` already.
    silences,
    applyPasswordPolicy: <T extends Alert>(alert: T): T =>
      alert.kind === 'credential'
        ? ({ ...alert, item: applyPasswordPolicy(alert.item, policy) } as T)
        : alert,
    maskRawItem: (raw) => maskRawItem(raw, policy),
    clock,
    ...(tuning.pipeline === false ? { pipelineDepth: 0 } : {}),
    logger: logger.child({ component: 'poll' }),
    metrics,
    owner,
    reported: new Set(),
  };
  const tenantIds = (config.tenants ?? []).map((t) => t.id);
  // Acting on events (actions/events.ts) is loaded when first needed: a worker's pass that finds
  // no action left open, and a run that acts on nothing, never load it.
  const act: () => Promise<ActDeps> = lazily('acting on events (actions/events.ts)', () =>
    import('./actions/events.ts').then(({ actDeps }) =>
      actDeps({
        upstream,
        tenants: { ids: async () => tenantIds, upstreamFor: (id) => upstreamFor(tenantRef(config, id)) },
        io,
        records,
        logger,
        targets: followUpTargets(destinations.values()),
      }),
    ),
  );
  const deliver: DeliverDeps = {
    deliveries,
    destinationState,
    destinations,
    // Each kind's renderer loaded when it is first needed (render/lazy.ts).
    render: (destination, alerts, now) => renderFor(destination, alerts, renderOptions(destination, now)),
    renderNotice: (destination, notice, now) =>
      noticeFor(destination, notice, renderOptions(destination, now)),
    renderOptions,
    opsDestinations: config.ops?.to ?? [],
    tenantOf,
    post: options.post ?? httpPost,
    clock,
    logger: logger.child({ component: 'deliver' }),
    metrics,
    owner,
    write,
    silences: silenceSource(config.silences, silences),
    threads: new ThreadStore(io),
    // An action a crash interrupted is finished by the next pass (actions/events.ts); never by a
    // dry run's, which acts on nothing outside, whatever its table holds.
    finishActions: async () => {
      if (options.dryRun) return 0;
      if (!(await anyUnfinished(io, EVENT_ACTIONS_OPEN, clock.now() - STALE_ACTION_MS))) return 0;
      const { finishActions } = await import('./actions/events.ts');
      return finishActions(await act());
    },
  };
  let identityAct: AccountDeps | undefined;
  // Loaded only when some scope has `identity`: the lookup code is not in anyone else's start.
  if (config.identity !== undefined || (config.tenants ?? []).some((t) => t.identity !== undefined)) {
    const { identityForRun, identityLabels } = await import('./identity/index.ts');
    identityLabel = identityLabels(config);
    const identity = await identityForRun({
      config,
      env,
      secrets,
      warn,
      io,
      fetch: options.identity?.fetch ?? options.fetch,
      logger,
      metrics,
      deliver,
      lookupTimeoutMs: options.identity?.lookupTimeoutMs,
      cycleLookupMs: options.identity?.cycleLookupMs,
      dryRun: options.dryRun,
      followUp: async (change) => (await act()).followUp(change),
    });
    poll.identity = identity.lookups;
    identityAct = identity.account;
  }
  return {
    env,
    config,
    configSource: loaded.source,
    secrets,
    upstream,
    upstreamFor,
    tenantOf,
    heartbeat: heartbeatOf,
    dynamo,
    records,
    deliveries,
    streams,
    quarantine,
    destinationState,
    destinations,
    silences,
    poll,
    deliver,
    cycle: {
      config,
      upstream,
      upstreamFor,
      checkTenants,
      ...(options.cycleHeartbeat === false ? {} : { heartbeat: heartbeatOf }),
      ...tenantRefusals({
        store: new TenantStateStore(dynamo, env.tableName),
        deliver,
        logger: logger.child({ component: 'poll' }),
        metrics,
        now: () => clock.now(),
      }),
      poll,
      deliver,
      ...(quota ? { quota } : {}),
      warn,
      publish,
      ...(tuning.inline === false ? { inline: false } : {}),
    },
    governor,
    metrics,
    logger,
    act,
    ...(identityAct ? { identityAct } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
  };
}
