/**
 * The heartbeat of a dispatch as the workers ping it (functions/worker.ts; the dispatch and its
 * jobs: state/heartbeat.ts): the first job of a dispatch to start pings its start; each job's end
 * is noted once, and the job that ends the dispatch pings success or what failed. A ping never
 * fails the invocation (poll/heartbeat.ts); a note that cannot be written is logged. Loaded only
 * for a config with a heartbeat.
 */
import type { Logger } from '../log.ts';
import { type DispatchRef, DispatchStore } from '../state/heartbeat.ts';
import type { TableIo } from '../state/io.ts';
import type { Pinger } from './heartbeat.ts';
import type { PollKind } from './streams.ts';

/** A worker's message, as the heartbeat sees it: its stream, and the dispatch it is a job of. */
export interface JobMessage {
  stream: string;
  dispatch?: DispatchRef;
}

/** What an invocation's heartbeat does once its streams are polled: `failed` notes by stream. */
export interface JobsBeat {
  ended(failed: Map<string, string>): Promise<void>;
}

/** The heartbeat of `kind`'s dispatches, for each invocation's messages (`beat(messages)`). */
export function jobsHeartbeat(deps: {
  kind: PollKind;
  service: string;
  logger: Logger;
  pings: Pinger;
  io: Pick<TableIo, 'client' | 'tableName'>;
}): (messages: readonly JobMessage[]) => JobsBeat {
  const { kind, service, logger, pings } = deps;
  const store = new DispatchStore(deps.io.client, deps.io.tableName);
  const safely = <T>(what: string, work: Promise<T>) =>
    work.catch((error: unknown) => {
      logger.warn(`${service}: could not ${what} for the heartbeat`, { error });
      return undefined;
    });
  return (messages) => {
    const jobs = messages.filter((m) => m.dispatch);
    if (!jobs.length) return { ended: async () => {} };
    const firsts = [...new Map(jobs.map((m) => [m.dispatch?.id, m])).values()];
    const started = Promise.all(
      firsts.map(async (m) => {
        const ref = m.dispatch as DispatchRef;
        if (await safely('claim the start', store.claimStart(kind, ref, Date.now()))) await pings.start();
      }),
    );
    return {
      async ended(failed) {
        await started;
        for (const m of jobs) {
          const note = failed.get(m.stream);
          const end = await safely(
            'note a job’s end',
            store.end(kind, m.dispatch as DispatchRef, note === undefined, note),
          );
          if (!end?.last) continue;
          if (end.failed === 0) await pings.success();
          else
            await pings.fail(
              [
                `poll ${kind}: ${end.failed} of the dispatch's jobs did not end well`,
                ...end.notes.slice(0, 10),
              ].join('\n'),
            );
        }
      },
    };
  };
}
