/**
 * The HTTP API as the CLI runs it (`serve`, `start`): listening on a port, what it knows of the
 * alert config, and the work a request from Slack leaves, done in this process. Loaded by those
 * two commands only (build.mjs: the API is no part of what every command loads).
 */
import { existsSync } from 'node:fs';
import { inProcessHandOff } from '../actions/slack-work.ts';
import { type ApiDepsOptions, type ApiRuntime, configIdentity, testable } from '../api/deps.ts';
import { type ResolvedDestination, resolveDestination } from '../deliver/destinations.ts';
import type { Environment } from '../env.ts';
import { type FetchHandler, listen } from '../http-server.ts';
import { identitySecrets } from '../identity/secrets.ts';
import { catalogOf } from '../poll/catalog.ts';
import type { AlertsConfig } from '../rules/schema.ts';
import { DEFAULT_CONFIG_FILE, loadAlertsConfig } from '../rules/source.ts';
import type { SecretObject } from '../secrets.ts';

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
export async function configKnowledge(
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
