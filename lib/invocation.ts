/**
 * One Lambda invocation, the same for every function of ours (the API, the dispatchers, the
 * workers): its request id (`context.awsRequestId`) and whether it is the first of its execution
 * environment (`coldStart`) on every log line written meanwhile, and the metrics flushed when it
 * ends, returned or thrown. A count left unflushed waits for a next invocation that may never come
 * (an environment is frozen, then dropped), and an EMF line only becomes a metric once written.
 * Powertools' `injectLambdaContext` and `logMetrics` do the same; these few lines keep our logger,
 * which redacts secrets, and the bundles without another dependency.
 *
 * @example
 * export const handler = withInvocation(async (event, context) => work(event), [metrics]);
 */
import { setLogContext } from './log.ts';
import type { Metrics } from './metrics.ts';

/** What is read of the context Lambda passes (tests may pass less). */
export interface InvocationContext {
  awsRequestId?: string;
}

/** Marks a handler made here: a test checks that every function's handler is. */
export const INVOCATION: unique symbol = Symbol.for('exposure-alerts.invocation');

export type Invocation<A extends unknown[], R> = ((...args: A) => Promise<R>) & { [INVOCATION]: true };

export function withInvocation<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  metrics: readonly Metrics[],
): Invocation<A, R> {
  let cold = true;
  const invoke = async (...args: A): Promise<R> => {
    const context = args[1] as InvocationContext | undefined;
    setLogContext({ awsRequestId: context?.awsRequestId, coldStart: cold });
    cold = false;
    try {
      return await handler(...args);
    } finally {
      for (const m of metrics) {
        try {
          m.flush();
        } catch {
          // Writing to the log failed: nothing better to do, and the handler's outcome stands.
        }
      }
      setLogContext();
    }
  };
  return Object.assign(invoke, { [INVOCATION]: true as const });
}
