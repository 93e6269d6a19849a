/**
 * `serve`: the HTTP API alone, on PORT, knowing what the alert config (ALERTS_CONFIG, or
 * ./alerts.config.json) says about its work: Slack's doors (`actions.slack`), the tenants, the
 * destinations that hear of actions. `assets toggle <asset_id> --disable|--enable`: upstream
 * endpoint 10 through the very function the API's route calls (lib/api/toggle.ts), with the same
 * audit trail; the client recorded is `cli:<os user>`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { inProcessHandOff } from '../../actions/slack-work.ts';
import { createApiApp } from '../../api/app.ts';
import {
  type ApiDepsOptions,
  type ApiRuntime,
  configIdentity,
  createApiDeps,
  testable,
} from '../../api/deps.ts';
import { ApiError } from '../../api/errors.ts';
import { parseAssetId } from '../../api/schemas.ts';
import { toggleAsset } from '../../api/toggle.ts';
import { type ResolvedDestination, resolveDestination } from '../../deliver/destinations.ts';
import { type Environment, readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import { type FetchHandler, listen } from '../../http-server.ts';
import { identitySecrets } from '../../identity/secrets.ts';
import { catalogOf } from '../../poll/catalog.ts';
import type { AlertsConfig } from '../../rules/schema.ts';
import { DEFAULT_CONFIG_FILE, loadAlertsConfig } from '../../rules/source.ts';
import { loadSecrets, type SecretObject } from '../../secrets.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { type Command, untilAborted } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

/** Listens for the API; a port in use says so, and what to do (`serve` and `start` alike). */
export async function listenApi(fetch: FetchHandler, port: number, hostname = '127.0.0.1') {
  try {
    return await listen(fetch, { port, hostname });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'EADDRINUSE'
        ? `port ${port} on ${hostname} is already in use; set PORT to another port`
        : `cannot listen on ${hostname}:${port} (${(error as Error).message})`,
    );
  }
}

/**
 * The API as serve and `npm start` run it: what a request from Slack leaves for after its answer
 * is done in this process (on AWS a worker does it, from a queue: functions/worker.ts).
 */
export function withLocalSlackWork<T extends ApiRuntime>(deps: T): T {
  if (!deps.slack || deps.handOff) return deps;
  return {
    ...deps,
    handOff: inProcessHandOff({
      act: deps.act,
      // An account menu's action is taken here too, with this process's providers, at once.
      ...(deps.identity ? { identityAccounts: deps.identity.accounts } : {}),
      lookup: deps.lookup,
      responseUrlPrefix: deps.slack.responseUrlPrefix,
      logger: deps.logger,
    }),
  };
}

/** What the API needs to know of an alert config: its Slack app, and the rest as the catalog says it. */
export function apiKnowledge(
  config: AlertsConfig,
  destinations: Iterable<ResolvedDestination>,
): Pick<ApiDepsOptions, 'slackActions' | 'known'> {
  return {
    ...(config.actions?.slack ? { slackActions: config.actions.slack } : {}),
    known: catalogOf(config, destinations),
  };
}

/**
 * The alert config's word on the API's work, when there is a config (ALERTS_CONFIG, else
 * ./alerts.config.json; not the demo config, which would stand in for a deployment's real one).
 * A config that does not load stops serve with what is wrong, as it stops npm start. serve sends
 * nothing itself (a delivery pass sends what it records), so a destination's secret it lacks is no
 * reason to refuse: only what it uses, the Slack signing secret, must be there.
 */
async function configKnowledge(
  env: Environment,
  secrets: SecretObject,
  warn: (text: string) => void,
): Promise<Pick<ApiDepsOptions, 'slackActions' | 'known' | 'identity' | 'destinations'>> {
  if (!env.alertsConfig && !existsSync(DEFAULT_CONFIG_FILE)) return {};
  const { config } = await loadAlertsConfig(env, warn);
  const unused: string[] = [];
  const destinations = Object.entries(config.destinations).map(([name, d]) =>
    resolveDestination(name, d, secrets, unused),
  );
  // With identity, account actions are taken here, with the providers' secrets (api/deps.ts), read
  // as a worker reads them (the identity secret first when IDENTITY_SECRET_ID is set).
  const identity = await configIdentity(config, await identitySecrets(env, secrets, config, warn), warn, env);
  // The console's test messages, each destination with its secrets (one missing stops only its test).
  const tests = testable(config, secrets, resolveDestination, env.appUrl);
  return {
    ...apiKnowledge(config, destinations),
    ...(identity ? { identity } : {}),
    destinations: async () => tests,
  };
}

export const serveCommand: Command = {
  path: ['serve'],
  example: 'PORT=8080 exposure-alerts serve',
  optionHelp: { host: 'the address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)' },
  uses: { table: true, upstream: true },
  // Beside `start --dry-run`, its API refuses what would act outside, as the dry run's does.
  beside: 'dry',
  service: true,
  usage: 'serve [--host ADDRESS]',
  summary: 'the HTTP API alone, on PORT (default 8787; loopback unless --host says otherwise)',
  options: { host: { type: 'string' } },
  async run({ values, io, logger, signal, dryRun }) {
    const env = readEnvironment(io.env);
    const secrets = await loadSecrets(env);
    const knowledge = await configKnowledge(env, secrets, (text) => logger.warn(`config: ${text}`));
    const deps = withLocalSlackWork(
      await createApiDeps(env, secrets, { logger, ...knowledge, ...(dryRun ? { dryRun } : {}) }),
    );
    const hostname = typeof values.host === 'string' ? values.host : '127.0.0.1';
    let server: Awaited<ReturnType<typeof listen>>;
    try {
      server = await listenApi(createApiApp(deps).fetch, env.port, hostname);
    } catch (error) {
      deps.close();
      throw error;
    }
    io.stdout(
      [
        `exposure-alerts API listening on ${server.url}`,
        `  ${server.url}/health, ${server.url}/openapi.json`,
        `  the console: ${server.url}/console (sign in with one of apiClients' tokens)`,
        `  POST ${server.url}/assets/<asset_id>/toggle with Authorization: Bearer <token>`,
        `  GET|POST ${server.url}/silences, DELETE ${server.url}/silences/<id>, GET ${server.url}/status`,
        ...(deps.slack
          ? [`  POST ${server.url}/slack/interactions and /slack/commands (actions.slack)`]
          : []),
        'Ctrl-C stops it.',
        '',
      ].join('\n'),
    );
    await untilAborted(signal);
    await server.close();
    deps.close();
    return 0;
  },
};

/** `cli:<os user>`, or `cli` where the user cannot be read (some containers have none). */
export function cliClientName(): string {
  try {
    const name = userInfo().username;
    return name ? `cli:${name}` : 'cli';
  } catch {
    return 'cli';
  }
}

export const assetsToggleCommand: Command = {
  path: ['assets', 'toggle'],
  example: 'exposure-alerts assets toggle 10011 --disable',
  optionHelp: {
    disable: 'stop monitoring the asset',
    enable: 'monitor the asset again',
    json: 'print the asset as the upstream answered it, as JSON',
  },
  uses: { table: true, upstream: true },
  beside: 'refuse',
  usage: 'assets toggle <asset_id> --disable|--enable [--json]',
  summary: 'stop or resume monitoring an asset upstream, recorded in its audit trail as the HTTP API does',
  options: { disable: { type: 'boolean' }, enable: { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: [1, 1],
  async run({ values, positionals, io, logger }) {
    if (Boolean(values.disable) === Boolean(values.enable)) {
      throw new UsageError(
        'give exactly one of --disable or --enable (usage: exposure-alerts assets toggle <asset_id> --disable|--enable)',
      );
    }
    let assetId: number;
    try {
      assetId = parseAssetId(positionals[0]);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const env = readEnvironment(io.env);
    const deps = await createApiDeps(env, await loadSecrets(env), { logger, checkApiClients: false });
    try {
      const asset = await toggleAsset(deps, {
        client: cliClientName(),
        assetId,
        isDisabled: Boolean(values.disable),
        requestId: randomUUID(),
      });
      // The asset's name and fields are the upstream's words.
      if (values.json) io.stdout(`${terminalSafe(JSON.stringify(asset, null, 2), { multiline: true })}\n`);
      else
        io.stdout(
          `${terminalSafe(
            `asset ${asset.id}${asset.name ? ` (${asset.name}${asset.type ? `, ${asset.type}` : ''})` : ''} is now ${asset.is_disabled ? 'disabled: no longer monitored' : 'enabled: monitored'}`,
          )}\n`,
        );
      return 0;
    } catch (error) {
      // The upstream's own error gives the CLI its exit code (3 when it refused the credentials).
      if (error instanceof ApiError && error.cause instanceof UpstreamError) throw error.cause;
      if (error instanceof ApiError && error.cause instanceof Error) {
        throw new Error(`${error.message} (${error.cause.message})`);
      }
      throw error;
    } finally {
      deps.close();
    }
  },
};
