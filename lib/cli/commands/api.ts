/**
 * `serve`: the HTTP API alone, on PORT, knowing what the alert config (ALERTS_CONFIG, or
 * ./alerts.config.json) says about its work: Slack's doors (`actions.slack`), the tenants, the
 * destinations that hear of actions. `assets toggle <asset_id> --disable|--enable`: upstream
 * endpoint 10 through the very function the API's route calls (lib/api/toggle.ts), with the same
 * audit trail; the client recorded is `cli:<os user>`.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../api/errors.ts';
import { readEnvironment } from '../../env.ts';
import { UsageError } from '../../errors.ts';
import type { listen } from '../../http-server.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { type Command, cliClientName, untilAborted } from '../command.ts';
import { terminalSafe } from '../terminal.ts';

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
    const [
      { createApiApp },
      { createApiDeps },
      { loadSecrets },
      { configKnowledge, listenApi, withLocalSlackWork },
    ] = await Promise.all([
      import('../../api/app.ts'),
      import('../../api/deps.ts'),
      import('../../secrets.ts'),
      import('../api-local.ts'),
    ]);
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
    const [{ createApiDeps }, { parseAssetId }, { toggleAsset }, { loadSecrets }] = await Promise.all([
      import('../../api/deps.ts'),
      import('../../api/schemas.ts'),
      import('../../api/toggle.ts'),
      import('../../secrets.ts'),
    ]);
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
