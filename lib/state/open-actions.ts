/**
 * Whether any action of a kind waits to be finished, asked before the delivery pass loads the
 * code that finishes actions (actions/events.ts): nearly every pass finds none, so the workers
 * start without that code and load it only when a crash left an action open. One Query of one
 * item on the sparse index the action records use (state/actions.ts, `unfinished`).
 */
import { queryAll, type TableIo } from './io.ts';
import { marshall } from './marshall.ts';

/** The sparse index key of open event actions (state/actions.ts EVENT_ACTIONS.open). */
export const EVENT_ACTIONS_OPEN = 'action#open';

/** An event action open this long is taken to be interrupted: its holder crashed or gave up. */
export const STALE_ACTION_MS = 60_000;

/** Whether an action under `open` (the kind's index key) was last held before `before` (ms). */
export async function anyUnfinished(io: TableIo, open: string, before: number): Promise<boolean> {
  const [item] = await queryAll(
    io,
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
      ExpressionAttributeValues: marshall({ ':pk': open, ':before': new Date(before).toISOString() }),
      ProjectionExpression: 'pk',
    },
    1,
  );
  return item !== undefined;
}
