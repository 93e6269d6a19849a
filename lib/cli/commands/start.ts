/**
 * `npm start`: the whole product on one machine, on embedded defaults.
 * - DynamoDB: dynalite, persisted under `.data/` (DYNAMODB_ENDPOINT overrides it), a table for each
 *   config (cli/local-tables.ts), so a real config never inherits the demo's state.
 * - Upstream: the emulator, with a demo tenant that gains a few events every 20 s, unless
 *   EXPOSURE_API_URL is set.
 * - Pollers on timers: events every 30 s, credentials every 5 min (first cycles at once).
 * - The HTTP API on PORT; without `apiClients` in the secret object, a demo token is made for this
 *   run and printed. Its request lines go to `.data/requests.log`, not the terminal (unless
 *   LOG_LEVEL=debug): the terminal is for the alerts.
 * - Alerts to the configured destinations; the built-in demo config prints them here.
 * - One instance per folder: a lock under `.data/` says which process holds it.
 * - The emulator's cursor key, anchor and live events are kept under `.data/` too, so a restart
 *   resumes where it stopped, quietly.
 * - Both kinds of cycle share one delivery pass at a time (they would otherwise meet each other's
 *   destination leases and report "another run").
 * - `--dry-run`: its own table, `<the real run's>-dry-run`, read through to the real run's
 *   (state/read-through.ts); each message printed with the `preview` that shows it as its
 *   destination would receive it (its items under `.data/dry-run/`).
 * Ctrl-C stops it cleanly: timers stop, the running cycle finishes, servers close; a second Ctrl-C
 * stops it at once, leaving no lock or local.json (cli/local.ts). An upstream that
 * refuses the credentials stops it too, with exit code 3.
 *
 * It is longer than 300 lines because `run` is one sequence, in the order the parts start and
 * stop (DynamoDB, the emulator, the runtime, the API, the cycles), and reads best whole.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DeliveryPassOptions, DeliverySummary } from '../../deliver/types.ts';
import { type Environment, readEnvironment } from '../../env.ts';
import { redactor } from '../../log.ts';
import type { PollKind } from '../../poll/streams.ts';
import type { SecretObject } from '../../secrets.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { type Command, untilAborted } from '../command.ts';
import {
  DATA_DIR,
  LOCAL_EMULATOR,
  type LocalDeployment,
  localCredentials,
  lockDataDir,
  recordLocal,
  withLocalSecrets,
} from '../local.ts';
import { REQUEST_LOG_FILE, requestLog } from '../request-log.ts';
import { terminalSafe, useColor } from '../terminal.ts';
import { DRY_RUN_FILES, describeDelivery, describeStream } from './poll.ts';

export const SCHEDULE = { events: 30_000, credentials: 300_000 } as const;
/**
 * The rate tiers of the emulator `start` runs: ten times the real service's, so the demo is quick
 * and still paced by the same shared governor the deployment uses.
 */
export const LOCAL_RATES = { requestsPerSecond: 40, searchRequestsPerSecond: 10 } as const;
/** Workers `start` runs in the process, as the deployment's worker functions run concurrently. */
export const LOCAL_WORKERS = 3;
/**
 * What the demo token may do: everything the console offers but `identity:disable`. Disabling an
 * account locks a person out, and under `npm start` with a real config the providers may be real:
 * a token printed in a terminal should not do that. Give a named client that scope to try it.
 */
export const DEMO_SCOPES = [
  'read',
  'assets:write',
  'silences:write',
  'events:act',
  'lookup',
  'destinations:write',
  'identity:act',
] as const;
/** `dir`, emptied: a new dry run's messages are its own. */
function emptied(dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/**
 * One delivery pass at a time in this process: a pass asked for while one runs waits for it, and
 * every such ask shares the one pass that follows (it sees what they would have).
 */
export function serialPasses(
  run: (options: DeliveryPassOptions) => Promise<DeliverySummary>,
): (options: DeliveryPassOptions) => Promise<DeliverySummary> {
  let tail: Promise<unknown> = Promise.resolve();
  let next: { promise: Promise<DeliverySummary>; deadline: number } | undefined;
  return (options) => {
    if (next) {
      next.deadline = Math.min(next.deadline, options.deadline);
      return next.promise;
    }
    const queued = { deadline: options.deadline, promise: undefined as unknown as Promise<DeliverySummary> };
    queued.promise = tail.then(() => {
      next = undefined;
      return run({ ...options, deadline: queued.deadline });
    });
    next = queued;
    tail = queued.promise.catch(() => {});
    return queued.promise;
  };
}

export const startCommand: Command = {
  path: ['start'],
  example: 'exposure-alerts start --dry-run',
  optionHelp: {
    'dry-run':
      'predict the real run and send nothing (no destination secrets needed): start where the real run stands, on a table of its own; print each message here with the preview command that shows it as its destination would receive it; act on nothing outside: the API and this folder’s commands refuse to',
  },
  service: true,
  usage: 'start [--dry-run]',
  summary:
    'everything locally: DynamoDB, the emulator (unless EXPOSURE_API_URL is set), both pollers, the HTTP API; --dry-run prints what each destination of your config would get, sending nothing',
  options: { 'dry-run': { type: 'boolean' } },
  async run({ io, logger, signal: outside, values }) {
    // What it starts, loaded by this command only: not by `--help` or any other (build.mjs).
    const [
      { createApiApp },
      { sha256Hex },
      { createApiDeps },
      { runDeliveryPass },
      { startEmulator },
      { combineSummaries, runWorkers },
      { withHeartbeat },
      { dispatchStreams },
      { createRuntime },
      { loadSecrets },
      { startDynalite },
      { dryRunTable },
      { localConfigPath, localTableFor, settleOldTable },
      { apiKnowledge, listenApi, withLocalSlackWork },
    ] = await Promise.all([
      import('../../api/app.ts'),
      import('../../api/auth.ts'),
      import('../../api/deps.ts'),
      import('../../deliver/pass.ts'),
      import('../../emulator/index.ts'),
      import('../../poll/dispatch.ts'),
      import('../../poll/heartbeat.ts'),
      import('../../poll/turn.ts'),
      import('../../runtime.ts'),
      import('../../secrets.ts'),
      import('../../state/local.ts'),
      import('../../state/read-through.ts'),
      import('../local-tables.ts'),
      import('../api-local.ts'),
    ]);
    const dryRun = values['dry-run'] === true;
    const cleanup: (() => Promise<void>)[] = [];
    const lines: string[] = ['exposure-alerts is running locally:'];
    // Stops on Ctrl-C, or on a failure no later cycle can mend (refused credentials).
    const stop = new AbortController();
    const signal = AbortSignal.any([outside, stop.signal]);
    let fatal: unknown;
    try {
      const overrides: Record<string, string> = {};
      const base = readEnvironment(io.env);
      // Absolute, so the data stays where it was started whatever the process's directory becomes.
      const data = resolve(DATA_DIR);
      const unlock = lockDataDir(data);
      cleanup.unshift(async () => unlock());
      if (!base.dynamodbEndpoint) {
        mkdirSync(join(data, 'dynamodb'), { recursive: true });
        const dynamo = await startDynalite({ path: join(data, 'dynamodb') });
        cleanup.unshift(() => dynamo.close());
        overrides.DYNAMODB_ENDPOINT = dynamo.endpoint;
        lines.push(`  DynamoDB (dynalite):  ${dynamo.endpoint}, data in ${DATA_DIR}/dynamodb`);
        // Each config its own table under .data/ (cli/local-tables.ts); TABLE_NAME, when set, wins.
        if (!io.env.TABLE_NAME?.trim()) {
          const config = localConfigPath(io.env);
          const say = (line: string) => lines.push(`                        ${line.trimEnd()}`);
          if (config) await settleOldTable(data, config, dynamo.endpoint, say);
          overrides.TABLE_NAME = localTableFor(config, data);
        }
      } else {
        lines.push(`  DynamoDB:             ${base.dynamodbEndpoint}`);
      }
      // A dry run writes only to a table of its own, `<the real run's>-dry-run` (TABLE_NAME set or
      // not), and reads through to the real run's what it has no record of (state/read-through.ts).
      if (dryRun) overrides.TABLE_NAME = dryRunTable(overrides.TABLE_NAME ?? base.tableName);
      if (!base.apiUrlSet) {
        const emulator = await startEmulator({
          seed: LOCAL_EMULATOR.seed,
          stateFile: join(data, LOCAL_EMULATOR.stateFile),
        });
        // The demo tenant's token; for a config with tenants, a key for the emulator's MSSP tenants.
        const local = await localCredentials({ ...io.env, ...overrides }, emulator.emulator.dataset);
        const stops = local.tenants.map((t) =>
          emulator.emulator.startLiveEvents({ tenant: t.id, everyMs: 20_000 }),
        );
        cleanup.unshift(async () => {
          for (const stopLive of stops) stopLive();
          await emulator.close();
        });
        overrides.EXPOSURE_API_URL = emulator.url;
        Object.assign(overrides, local.env);
        lines.push(
          `  Upstream (emulator):  ${emulator.url}  (demo tenant${local.tenants.length > 1 ? 's' : ''} ${local.tenants.map((t) => t.name).join(' and ')}, new events every ~20 s)`,
        );
      } else {
        lines.push(`  Upstream:             ${base.apiUrl}`);
      }
      const env: Environment = {
        ...readEnvironment({ ...io.env, ...overrides }),
        // The emulator also stands in for the demo config's identity providers (cli/local.ts).
        ...(base.apiUrlSet ? {} : { localEmulatorUrl: overrides.EXPOSURE_API_URL }),
      };
      let secrets: SecretObject = withLocalSecrets(env, await loadSecrets(env));
      let demoToken: string | undefined;
      if (secrets.apiClients === undefined) {
        demoToken = `local-${randomBytes(12).toString('hex')}`;
        secrets = {
          ...secrets,
          apiClients: { local: { digest: sha256Hex(demoToken), scopes: [...DEMO_SCOPES] } },
        };
      }
      const runtime = await createRuntime({
        env,
        logger,
        secrets,
        // Our own emulator takes LOCAL_RATES; the real service takes what the config says.
        ...(base.apiUrlSet ? {} : { rates: LOCAL_RATES }),
        dryRun,
        // A dry run leaves each message's items here, for the `preview` its heading names.
        ...(dryRun ? { dryRunFiles: emptied(join(data, DRY_RUN_FILES)) } : {}),
        write: (text) => io.stdout(text.endsWith('\n') ? text : `${text}\n`),
        color: useColor(io),
      });
      // Tenants the credentials cannot serve as configured stop the run here (exit 2), not each cycle.
      await runtime.cycle.checkTenants?.();
      const fixedSecrets = secrets;
      const api = withLocalSlackWork(
        await createApiDeps(env, secrets, {
          logger: logger.child({ component: 'api' }),
          readSecrets: async () => (demoToken ? fixedSecrets : withLocalSecrets(env, await loadSecrets(env))),
          // What the config says of the API's work (actions.slack, tenants, who hears of actions).
          ...apiKnowledge(runtime.config, runtime.destinations.values()),
          ...(runtime.identityAct ? { identity: runtime.identityAct } : {}),
          // The console's test messages go out through the run's own destinations.
          destinations: async () => ({
            destinations: runtime.destinations,
            appUrl: env.appUrl,
            digest: runtime.config.digest,
          }),
          dryRun, // what would act outside answers 409 dry_run (api/dry-run.ts)
        }),
      );
      // The terminal is for alerts: the API's request lines go to a file (cli/request-log.ts).
      const requests = requestLog(logger.child({ component: 'api' }), data);
      cleanup.unshift(() => requests.close());
      const app = createApiApp({ ...api, requestLog: requests.logger });
      const server = await listenApi(app.fetch, env.port).catch((error: unknown) => {
        api.close();
        throw error;
      });
      cleanup.unshift(async () => {
        await server.close();
        api.close();
      });
      lines.push(
        `  HTTP API:             ${server.url}  (GET /health, POST /assets/{id}/toggle, /silences, GET /status, GET /openapi.json)`,
      );
      lines.push(`  Console:              ${server.url}/console`);
      if (requests.file)
        lines.push(
          `  Request log:          ${join(DATA_DIR, REQUEST_LOG_FILE)}  (the API's requests; LOG_LEVEL=debug prints them here)`,
        );
      if (demoToken) {
        lines.push(
          `  API demo token:       ${demoToken}  (no apiClients configured: this run's only client, "local"; sign in to the console with it)`,
          `                        curl -H "Authorization: Bearer ${demoToken}" ${server.url}/alerts`,
        );
      }
      // For the other commands run in this folder (cli/local.ts); removed when this one stops.
      const deployment: LocalDeployment = {
        pid: process.pid,
        dynamodb: env.dynamodbEndpoint ?? '',
        tableName: env.tableName,
        ...(overrides.EXPOSURE_API_URL
          ? {
              upstream: {
                url: overrides.EXPOSURE_API_URL,
                ...(overrides.EXPOSURE_API_KEY
                  ? { apiKey: overrides.EXPOSURE_API_KEY }
                  : { token: overrides.EXPOSURE_API_TOKEN ?? '' }),
              },
            }
          : {}),
        api: { url: server.url, ...(demoToken ? { token: demoToken } : {}) },
        // Absolute: the folder's commands read the destinations' secrets where this run does.
        ...(env.secretsFile ? { secretsFile: resolve(env.secretsFile) } : {}),
        ...(dryRun ? { dryRun: true } : {}), // the folder's other commands follow (cli/local.ts)
      };
      const forget = recordLocal(data, deployment);
      cleanup.unshift(async () => forget());
      lines.push(`  Alert config:         ${runtime.configSource}  (its state: table ${env.tableName})`);
      if (dryRun)
        lines.push(
          `  Dry run:              nothing is sent: each destination's messages are printed here instead, each with the preview command that shows it as that destination would receive it (records in table ${env.tableName}, reading the real run's where it has none); nothing is done outside: the API and this folder's commands refuse to act`,
        );
      lines.push(
        `  Pollers:              events every ${SCHEDULE.events / 1000} s, credentials every ${SCHEDULE.credentials / 60_000} min`,
      );
      lines.push('Ctrl-C stops it.', '');
      io.stdout(lines.join('\n'));
      // The banner shows the demo token on purpose; after it, the token is redacted like any secret.
      redactor.add(demoToken);

      const running = new Map<PollKind, Promise<void>>();
      /** A block of lines as they read on a terminal; in a log, one entry (JSON keeps its newlines). */
      const show = (title: string, lines: string[]) => {
        if (io.isTTY && (logger.level === 'info' || logger.level === 'debug'))
          io.stdout(`${new Date().toISOString().slice(11, 19)} INFO  ${title}:\n${lines.join('\n')}\n`);
        else logger.info([`${title}:`, ...lines].join('\n'));
      };
      // The two kinds' cycles share a delivery pass when they end together, so what a pass sent is
      // said once, by the pass, not under whichever cycle asked for it (its items may be the other's).
      const pass = serialPasses(async (options) => {
        const delivered = await runDeliveryPass(runtime.deliver, options);
        if (delivered.sent || delivered.dead)
          show(
            'delivery pass',
            describeDelivery(delivered, dryRun).map((line) => terminalSafe(line)),
          );
        return delivered;
      });
      const cycle = (kind: PollKind) => {
        if (running.has(kind) || signal.aborted) return;
        const budgetMs = Math.min(SCHEDULE[kind] - 5_000, kind === 'events' ? 25_000 : 240_000);
        // The deployed design in small: a dispatcher hands the streams out, a few workers poll them.
        // The heartbeat pings once for the whole cycle, not once a worker.
        const deps = { ...runtime.cycle, pass, heartbeat: undefined };
        const deadline = Date.now() + budgetMs;
        const task = withHeartbeat(runtime.heartbeat(kind), kind, () =>
          dispatchStreams({ config: deps.config, streams: deps.poll.streams }, kind)
            .then((jobs) => runWorkers(deps, jobs, LOCAL_WORKERS, () => ({ deadline })))
            .then((summaries) => combineSummaries(kind, summaries)),
        )
          .then((summary) => {
            // Every tenant refused (one refused tenant stops only itself): nothing can go on.
            const refused = summary.streams.find((s) => s.status === 'unauthorized');
            if (refused && summary.exitCode === 3) {
              fatal ??= new UpstreamError(
                'unauthorized',
                `${refused.stream}: ${refused.error?.message ?? 'refused'}`,
              );
              stop.abort();
              return;
            }
            const busy = summary.streams.some((s) => s.items || s.quarantined);
            if (busy || summary.exitCode !== 0) {
              // What this cycle's streams did; what was sent is the delivery pass's own block.
              show(`poll ${kind} cycle`, summary.streams.map(describeStream));
            } else {
              logger.debug(`poll ${kind} cycle: nothing new`);
            }
          })
          .catch((error: unknown) => logger.error(`poll ${kind} cycle failed`, { error }))
          .finally(() => running.delete(kind));
        running.set(kind, task);
      };
      cycle('events');
      cycle('credentials');
      const timers = [
        setInterval(() => cycle('events'), SCHEDULE.events),
        setInterval(() => cycle('credentials'), SCHEDULE.credentials),
      ];
      await untilAborted(signal);
      for (const timer of timers) clearInterval(timer);
      // A hung destination can hold the cycle for its send timeout: say the way out at once.
      if (!fatal)
        io.stderr('stopping: letting the running cycle finish (a second Ctrl-C stops at once)...\n');
      await Promise.allSettled(running.values());
      if (fatal) throw fatal;
      return 0;
    } finally {
      for (const close of cleanup) await close().catch(() => {});
    }
  },
};
