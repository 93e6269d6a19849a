/**
 * `npm start`: the whole product on one machine, on embedded defaults.
 * - DynamoDB: dynalite, persisted under `.data/` (DYNAMODB_ENDPOINT overrides it).
 * - Upstream: the emulator, with a demo tenant that gains a few events every 20 s, unless
 *   EXPOSURE_API_URL is set.
 * - Pollers on timers: events every 30 s, credentials every 5 min (first cycles at once).
 * - The HTTP API on PORT; without `apiClients` in the secret object, a demo token is made for this
 *   run and printed.
 * - Alerts to the configured destinations; the built-in demo config prints them here.
 * Ctrl-C stops it cleanly: timers stop, the running cycle finishes, servers close.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createApiApp } from '../../api/app.ts';
import { sha256Hex } from '../../api/auth.ts';
import { createApiDeps } from '../../api/deps.ts';
import { startEmulator } from '../../emulator/index.ts';
import { type Environment, readEnvironment } from '../../env.ts';
import { listen } from '../../http-server.ts';
import { redactor } from '../../log.ts';
import { runPollCycle } from '../../poll/run.ts';
import type { PollKind } from '../../poll/streams.ts';
import { createRuntime } from '../../runtime.ts';
import { loadSecrets, type SecretObject } from '../../secrets.ts';
import { startDynalite } from '../../state/local.ts';
import { type Command, untilAborted } from '../command.ts';
import { describeDelivery, describeStream } from './poll.ts';

export const SCHEDULE = { events: 30_000, credentials: 300_000 } as const;
export const DATA_DIR = '.data';

export const startCommand: Command = {
  path: ['start'],
  service: true,
  usage: 'start',
  summary:
    'everything locally: DynamoDB, the emulator (unless EXPOSURE_API_URL is set), both pollers, the HTTP API',
  async run({ io, logger, signal }) {
    const cleanup: (() => Promise<void>)[] = [];
    const lines: string[] = ['exposure-alerts is running locally:'];
    try {
      const overrides: Record<string, string> = {};
      const base = readEnvironment(io.env);
      if (!base.dynamodbEndpoint) {
        mkdirSync(`${DATA_DIR}/dynamodb`, { recursive: true });
        const dynamo = await startDynalite({ path: `${DATA_DIR}/dynamodb` });
        cleanup.unshift(() => dynamo.close());
        overrides.DYNAMODB_ENDPOINT = dynamo.endpoint;
        lines.push(`  DynamoDB (dynalite):  ${dynamo.endpoint}, data in ${DATA_DIR}/dynamodb`);
      } else {
        lines.push(`  DynamoDB:             ${base.dynamodbEndpoint}`);
      }
      if (!base.apiUrlSet) {
        const emulator = await startEmulator({ seed: 42 });
        const stopLive = emulator.emulator.startLiveEvents({ tenant: 'acme', everyMs: 20_000 });
        cleanup.unshift(async () => {
          stopLive();
          await emulator.close();
        });
        const tenant = emulator.emulator.dataset.tenant('acme');
        overrides.EXPOSURE_API_URL = emulator.url;
        overrides.EXPOSURE_API_TOKEN = tenant.token;
        lines.push(
          `  Upstream (emulator):  ${emulator.url}  (demo tenant ${tenant.name}, new events every ~20 s)`,
        );
      } else {
        lines.push(`  Upstream:             ${base.apiUrl}`);
      }
      const env: Environment = readEnvironment({ ...io.env, ...overrides });
      let secrets: SecretObject = await loadSecrets(env);
      let demoToken: string | undefined;
      if (secrets.apiClients === undefined) {
        demoToken = `local-${randomBytes(12).toString('hex')}`;
        secrets = { ...secrets, apiClients: { local: sha256Hex(demoToken) } };
      }
      const runtime = await createRuntime({
        env,
        logger,
        secrets,
        write: (text) => io.stdout(text.endsWith('\n') ? text : `${text}\n`),
        color: io.isTTY,
      });
      const fixedSecrets = secrets;
      const api = await createApiDeps(env, secrets, {
        logger: logger.child({ component: 'api' }),
        readSecrets: async () => (demoToken ? fixedSecrets : loadSecrets(env)),
      });
      const server = await listen(createApiApp(api).fetch, { port: env.port });
      cleanup.unshift(async () => {
        await server.close();
        api.close();
      });
      lines.push(
        `  HTTP API:             ${server.url}  (GET /health, POST /assets/{id}/toggle, GET /openapi.json)`,
      );
      if (demoToken) {
        lines.push(
          `  API demo token:       (no apiClients configured) curl -H "Authorization: Bearer ${demoToken}" ${server.url}/assets/10011/audit`,
        );
      }
      lines.push(`  Alert config:         ${runtime.configSource}`);
      lines.push(
        `  Pollers:              events every ${SCHEDULE.events / 1000} s, credentials every ${SCHEDULE.credentials / 60_000} min`,
      );
      lines.push('Ctrl-C stops it.', '');
      io.stdout(lines.join('\n'));
      // The banner shows the demo token on purpose; after it, the token is redacted like any secret.
      redactor.add(demoToken);

      const running = new Map<PollKind, Promise<void>>();
      const cycle = (kind: PollKind) => {
        if (running.has(kind) || signal.aborted) return;
        const budgetMs = Math.min(SCHEDULE[kind] - 5_000, kind === 'events' ? 25_000 : 240_000);
        const task = runPollCycle(runtime.cycle, kind, { deadline: Date.now() + budgetMs })
          .then((summary) => {
            const busy =
              summary.streams.some((s) => s.items || s.quarantined) ||
              summary.delivery.sent ||
              summary.delivery.dead;
            if (busy || summary.exitCode !== 0) {
              logger.info(
                [
                  `poll ${kind} cycle:`,
                  ...summary.streams.map(describeStream),
                  ...describeDelivery(summary.delivery),
                ].join('\n'),
              );
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
      io.stderr('stopping: letting the running cycle finish...\n');
      await Promise.allSettled(running.values());
      return 0;
    } finally {
      for (const close of cleanup) await close().catch(() => {});
    }
  },
};
