/**
 * What the two poller functions share: build the runtime once at cold start (a bad config or a
 * missing secret fails there, with a message naming it), then run one cycle per invocation
 * within the invocation's remaining time, and fail the invocation when the cycle failed so the
 * function's error alarm and dead-letter queue see it.
 */
import type { Context } from 'aws-lambda';
import { lastSendStart } from '../lib/deliver/pass.ts';
import { readEnvironment } from '../lib/env.ts';
import { createLogger, startFailure } from '../lib/log.ts';
import { EmfMetrics } from '../lib/metrics.ts';
import { type CycleSummary, runPollCycle } from '../lib/poll/cycle.ts';
import type { PollKind } from '../lib/poll/streams.ts';
import { createRuntime } from '../lib/runtime.ts';

/** Time kept back at the end of an invocation for the last writes and the metrics flush. */
export const SAFETY_MARGIN_MS = 10_000;

export async function createPollerHandler(kind: PollKind) {
  const name = `poll-${kind}`;
  // Until the environment is read, a logger at its default level: a bad variable is logged too.
  let logger = createLogger({ name });
  let runtime: Awaited<ReturnType<typeof createRuntime>>;
  try {
    const env = readEnvironment();
    logger = createLogger({ level: env.logLevel, name });
    runtime = await createRuntime({ env, logger, metrics: new EmfMetrics({ service: name }) });
  } catch (error) {
    throw startFailure(logger, name, error);
  }
  logger.info(`${name} ready`, {
    config: runtime.configSource,
    destinations: [...runtime.destinations.keys()],
  });
  return async (
    _event: unknown,
    context: Pick<Context, 'getRemainingTimeInMillis'>,
  ): Promise<CycleSummary> => {
    const deadline = Date.now() + context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS;
    // A send that starts must be able to finish and be recorded before the invocation ends.
    const sendsStartBy = lastSendStart(runtime.deliver, deadline);
    const summary = await runPollCycle(runtime.cycle, kind, { deadline, sendsStartBy });
    logger.info(`${name} cycle finished`, {
      exitCode: summary.exitCode,
      streams: summary.streams.map((s) => ({
        stream: s.stream,
        status: s.status,
        items: s.items,
        newItems: s.newItems,
      })),
      sent: summary.delivery.sent,
      retrying: summary.delivery.retrying,
      dead: summary.delivery.dead,
    });
    if (summary.exitCode !== 0) {
      const failed = summary.streams.find((s) => s.error)?.error;
      throw new Error(
        summary.exitCode === 3
          ? `the upstream rejected the credentials: ${failed?.message ?? ''}`
          : `poll ${kind} failed: ${failed?.message ?? 'a destination failed'}`,
      );
    }
    return summary;
  };
}
