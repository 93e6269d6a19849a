/**
 * The report to operators when a destination refuses for good: a metric, an error line with what
 * to do, and a notice to each ops destination. The pass calls it once per refusal (the
 * destination's state remembers it until a later send succeeds). A notice that cannot be sent is
 * logged, not retried: it has no delivery record to retry it from.
 */

import type { Logger } from '../log.ts';
import type { Notice } from '../render/types.ts';
import type { ResolvedDestination } from './destinations.ts';
import { type SendFailure, send, sendContext } from './senders.ts';
import type { DeliverDeps } from './types.ts';

/** Tells operators, once, that a destination refuses for good. */
export async function reportRefusal(
  deps: DeliverDeps,
  destination: ResolvedDestination,
  outcome: SendFailure,
  log: Logger,
): Promise<void> {
  deps.metrics.count('DestinationRefused', 1, { destination: destination.name });
  log.error(
    'destination refuses permanently; its deliveries are dead until it is fixed and they are retried',
    {
      status: outcome.status,
      error: outcome.error,
      hint: `fix the destination, then: exposure-alerts deliveries retry --all-dead`,
    },
  );
  const notice: Notice = {
    kind: 'ops',
    // No product name here: each renderer puts it where its kind of message shows it (notice.ts).
    title: `destination "${destination.name}" refuses deliveries`,
    text: `Destination "${destination.name}" (${destination.type}) answered ${outcome.error}. Its deliveries are marked dead and will not be retried. Fix the destination, then run: exposure-alerts deliveries retry --all-dead`,
  };
  await notifyOps(deps, notice, log, destination.name);
}

/**
 * Sends `notice` to each ops destination (but `except`, the one it is about). A notice that cannot
 * be sent is logged, not retried.
 */
export async function notifyOps(
  deps: DeliverDeps,
  notice: Notice,
  log: Logger,
  except?: string,
): Promise<void> {
  for (const name of deps.opsDestinations) {
    const ops = deps.destinations.get(name);
    if (!ops || name === except) continue;
    try {
      const payload = await deps.renderNotice(ops, notice, new Date(deps.clock.now()));
      const sent = await send(ops, payload, [], sendContext(deps));
      if (!sent.ok) log.error('could not notify the ops destination', { ops: name, error: sent.error });
    } catch (error) {
      log.error('could not notify the ops destination', { ops: name, error });
    }
  }
}
