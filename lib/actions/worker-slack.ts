/**
 * The Slack work an events worker takes from its queue (functions/worker.ts): what a request from
 * Slack left for after its answer (a click's action, a lookup's answer) and the account actions the
 * API recorded. Loaded with the first piece of such work: most invocations have none.
 */
import type { Logger } from '../log.ts';
import type { Runtime } from '../runtime.ts';
import { runSlackWork, type SlackWorkDeps } from './slack-work.ts';
import type { SlackWork } from './slack-work-shape.ts';

/**
 * Does each piece of Slack work, in turn; a failure is logged, and a recorded action is finished
 * by a later pass.
 */
export function slackWorker(
  runtime: Pick<Runtime, 'config' | 'identityAct' | 'upstreamFor' | 'act'>,
  service: string,
  logger: Logger,
): (work: readonly SlackWork[]) => Promise<void> {
  const slackSettings = runtime.config.actions?.slack;
  const workDeps: SlackWorkDeps = {
    // Account actions, where the config has identity (this worker reads the providers' secrets).
    ...(runtime.identityAct ? { identityAct: runtime.identityAct } : {}),
    // As the tenant the request named (the Slack channel's, or `tenant`), with its own token.
    // Loaded with the first lookup: most work has none.
    lookup: async (query) => {
      const { lookup, lookupTenant } = await import('./lookup.ts');
      return lookup(
        {
          upstream: runtime.upstreamFor(lookupTenant(runtime.config.tenants ?? [], query.tenant)),
          passwords: runtime.config.passwords,
        },
        query,
      );
    },
    responseUrlPrefix: slackSettings?.responseUrlPrefix ?? 'https://hooks.slack.com/',
    logger,
  };
  return async (work) => {
    for (const w of work) {
      // An account action the API recorded is Slack's kind of work, but needs no Slack app.
      if (!slackSettings && w.kind !== 'identity-action') {
        logger.error(`${service}: Slack work arrived, but the config has no actions.slack; dropped`, {
          kind: w.kind,
        });
        continue;
      }
      // Acting on events is loaded with the first piece of work that needs it.
      const deps = w.kind === 'identity-action' ? workDeps : { ...workDeps, act: await runtime.act() };
      await runSlackWork(deps, w).catch((error: unknown) =>
        logger.error(`${service}: Slack work failed`, { kind: w.kind, error }),
      );
    }
  };
}
