/**
 * Acting on events (docs/actions.md): one function for every door (the CLI, the API, and
 * Slack's buttons). Who, what, which uids, an optional reason and an action id in; per uid what
 * the upstream said out. In order, each step written before the next, so an action happens once
 * through crashes, repeats and calls at the same moment (state/actions.ts keeps the records):
 *
 * 1. the action's record is created (`pending`), held by the call that created it: the same id
 *    again finds it; while it is held, the other calls wait (a few seconds at most) and answer as
 *    the holder did, so 20 calls with one id ask the upstream once;
 * 2. the upstream is asked (endpoint 12, 10 uids a request; its actions are idempotent, so asking
 *    again after a crash is harmless);
 * 3. each flag the upstream took is changed with a conditional write naming this action, so of
 *    two actions setting it at once (a double click) one changes it; its answer and which uids it
 *    changed are kept in the record, in one write;
 * 4. the action is audited, and each event it changed followed up at every destination that was
 *    sent it (deliver/follow-up.ts: once per destination and action);
 * 5. the record is marked done.
 *
 * The hold is renewed while its holder works, however long the upstream takes. A crash anywhere
 * leaves the record open, its hold lapsing after a minute; `finishActions` (the
 * delivery pass calls it) takes up an action open for over a minute from the step it had reached,
 * and keeps asking an upstream that does not answer, pass after pass. At a door, an upstream that
 * did not answer at all (unavailable, timed out, rate limiting, or refusing our own credentials)
 * changes nothing: the record is set aside (`forgotten`, with how the upstream failed, which the
 * waiting calls answer), so the same id tried again later really tries again.
 *
 * Longer than 300 lines because it is one protocol (the doors, the hold, the upstream's batches,
 * the flags, the finishing pass) whose steps refer to one another and read best in order.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { type FollowUpDeps, type FollowUpTarget, followUp, type ItemChange } from '../deliver/follow-up.ts';
import type { Logger } from '../log.ts';
import {
  type ActionRecord,
  ActionStore,
  type EventActionType,
  flagOf,
  type UidResult,
} from '../state/actions.ts';
import { renewWhileHeld } from '../state/hold-renewal.ts';
import type { TableIo } from '../state/io.ts';
import { STALE_ACTION_MS } from '../state/open-actions.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import {
  type ActingTenants,
  type ActingUpstream,
  actUpstream,
  errorText,
  noAnswer,
  toldOf,
  upstreamErrorOf,
} from './event-upstream.ts';

export const EVENT_ACTION_TYPES: readonly EventActionType[] = [
  'ignore',
  'remediate',
  'unignore',
  'unremediate',
];
/** Uids one action may name (the API's limit; the upstream takes 10 a request, so up to 10 requests). */
export const MAX_ACTION_UIDS = 100;
/** Interrupted actions one delivery pass finishes at most; the rest, the next passes. */
export const FINISH_PER_PASS = 10;
// An action open this long is taken to be interrupted (a live one takes seconds); a hold lasts as long.
export { STALE_ACTION_MS };
/** How long a call with an action's id waits for the call working on it before it gives up. */
export const WAIT_FOR_HOLDER_MS = 5_000;

/** Another call is working on this action, still, after the wait: try again later. */
export class ActionInProgressError extends Error {
  override readonly name = 'ActionInProgressError';
  readonly code = 'action_in_progress';
  readonly id: string;

  constructor(id: string) {
    super(`action ${id} is still under way in another request; try again in a few seconds`);
    this.id = id;
  }
}

export interface ActDeps {
  /** The top-level sources' client. */
  upstream: ActingUpstream;
  /**
   * A `tenants` entry's client (its own token: docs/configuration.md), and the configured
   * tenants' ids, which tell a key `1002:<uid>` from a top-level uid. None: every key is a uid.
   */
  tenants?: ActingTenants;
  actions: ActionStore;
  /** deliver/follow-up.ts `followUp`, bound to the runtime's records and destinations. */
  followUp(change: ItemChange): Promise<DeliveryRecord[]>;
  clock: Clock;
  logger: Logger;
  /** How long a call waits for another working on the same action id (WAIT_FOR_HOLDER_MS). */
  waitMs?: number;
}

export interface ActRequest {
  type: EventActionType;
  uids: readonly string[];
  by: string;
  reason?: string;
  /** Given by the door (an Idempotency-Key, Slack's action); a new one when absent. */
  id?: string;
}

export interface ActOutcome {
  id: string;
  results: UidResult[];
  /** The uids whose flag this action changed: they were followed up (none when replayed). */
  changed: string[];
  /**
   * Another call with this id took the action (before, or at the same time): this is its answer,
   * and this call did nothing more.
   */
  replayed: boolean;
  /** Follow-up records this call created. */
  followUps: number;
  /** The upstream did not answer at all: nothing changed, and the action is not recorded. */
  unanswered?: UpstreamError;
}

/** The deps of a runtime's actions: its upstream client, and follow-ups through its records. */
export function actDeps(parts: {
  upstream: ActDeps['upstream'];
  tenants?: ActDeps['tenants'];
  io: TableIo;
  records: FollowUpDeps['records'];
  /** The destinations that hear of actions, or where to read them (the API: the catalog). */
  targets: FollowUpTarget[] | FollowUpDeps['targets'];
  logger: Logger;
}): ActDeps {
  const { upstream, io, records, logger } = parts;
  const list = parts.targets;
  const targets = typeof list === 'function' ? list : async () => list;
  return {
    upstream,
    ...(parts.tenants ? { tenants: parts.tenants } : {}),
    actions: new ActionStore(io),
    followUp: (change) => followUp({ records, targets, clock: io.clock }, change),
    clock: io.clock,
    logger: logger.child({ component: 'act' }),
  };
}

/** What is wrong with a request, in words for its door; undefined when it may go. */
export function actionProblem(request: Pick<ActRequest, 'type' | 'uids' | 'reason'>): string | undefined {
  if (!EVENT_ACTION_TYPES.includes(request.type))
    return `the action must be one of ${EVENT_ACTION_TYPES.join(', ')}`;
  if (request.uids.length < 1 || request.uids.length > MAX_ACTION_UIDS)
    return `give 1 to ${MAX_ACTION_UIDS} event uids (got ${request.uids.length})`;
  const bad = request.uids.findIndex((uid) => typeof uid !== 'string' || uid.trim() === '');
  if (bad >= 0) return `uid ${bad + 1} is empty`;
  return undefined;
}

/**
 * Writes the action down, and nothing else: a door that must answer before the work is done (Slack,
 * within 3 s) records it first, then finishes it with `actOnEvents` and the same id, after its
 * answer; if that never runs, a delivery pass finishes it.
 */
export async function recordAction(
  deps: Pick<ActDeps, 'actions' | 'clock'>,
  request: ActRequest & { id: string },
): Promise<void> {
  await deps.actions.begin(newRecord(deps, request));
}

function newRecord(deps: Pick<ActDeps, 'clock'>, request: ActRequest): ActionRecord {
  const problem = actionProblem(request);
  if (problem) throw new RangeError(problem);
  return {
    id: request.id ?? randomUUID(),
    type: request.type,
    uids: [...new Set(request.uids)],
    by: request.by,
    at: new Date(deps.clock.now()).toISOString(),
    ...(request.reason ? { reason: request.reason } : {}),
    status: 'pending',
  };
}

/**
 * Acts on events once (see the module comment). Throws only on a bad request, a table error, or
 * `ActionInProgressError` when another call holds the same action for longer than its wait.
 */
export async function actOnEvents(deps: ActDeps, request: ActRequest): Promise<ActOutcome> {
  const record = newRecord(deps, request);
  const holder = randomUUID();
  const begun = await deps.actions.begin(record, {
    holder,
    heldUntil: deps.clock.now() + STALE_ACTION_MS,
  });
  if ('created' in begun) return held(deps, record, holder);
  return takeUpOrWait(deps, begun.existing, holder);
}

/**
 * The same id again: answers from its record once done; takes the work up when nobody holds it (a
 * Slack click recorded before its answer, an action a crash left); else waits, at most
 * `deps.waitMs`, for the call that holds it, and answers as it did.
 */
async function takeUpOrWait(deps: ActDeps, first: ActionRecord, holder: string): Promise<ActOutcome> {
  const giveUpAt = performance.now() + (deps.waitMs ?? WAIT_FOR_HOLDER_MS);
  let pause = 20;
  let current: ActionRecord | undefined = first;
  while (current) {
    if (current.status === 'done') {
      const { id, results = [], changed = [] } = current;
      return { id, results, changed, replayed: true, followUps: 0 };
    }
    if (current.status === 'forgotten') return unansweredOutcome(current, true);
    const now = deps.clock.now();
    const mine = await deps.actions.hold(current.id, holder, now, now + STALE_ACTION_MS);
    if (mine) return held(deps, mine, holder);
    if (performance.now() >= giveUpAt) throw new ActionInProgressError(current.id);
    // Real time, whatever the injected clock: the holder is another call working at its own pace.
    await sleep(pause);
    pause = Math.min(pause * 2, 200);
    current = await deps.actions.get(first.id);
  }
  throw new Error(`the record of action ${first.id} disappeared`);
}

/**
 * The work of an action this call holds; a failure gives the hold back for the next call. The hold
 * is renewed while the work goes on (a quarter of the hold after the last renewal, on the deps'
 * clock), however long the upstream takes, so a pass does not take a live action over and ask the
 * upstream again.
 */
async function held(
  deps: ActDeps,
  record: ActionRecord,
  holder: string,
  resumed = false,
): Promise<ActOutcome> {
  const renewal = renewWhileHeld({
    clock: deps.clock,
    holdMs: STALE_ACTION_MS,
    renew: async (now, until) => (await deps.actions.hold(record.id, holder, now, until)) !== undefined,
    failed: (error) => deps.logger.warn('could not renew an action’s hold', { action: record.id, error }),
  });
  try {
    return await finish(deps, record, resumed);
  } catch (error) {
    await deps.actions.release(record.id, holder).catch(() => undefined);
    throw error;
  } finally {
    renewal.stop();
  }
}

/** Finishes the actions a crash left open (the delivery pass calls this). Returns how many. */
export async function finishActions(deps: ActDeps): Promise<number> {
  // A few a pass, and none after the first that fails: the pass's deliveries must not wait on an
  // upstream that does not answer, action after action.
  const now = deps.clock.now();
  const open = await deps.actions.unfinished(now - STALE_ACTION_MS, FINISH_PER_PASS);
  const holder = randomUUID();
  let finished = 0;
  for (const stale of open) {
    // One still held is under way elsewhere (a slow upstream): its holder finishes it.
    const record = await deps.actions.hold(stale.id, holder, now, now + STALE_ACTION_MS);
    if (!record) continue;
    try {
      await held(deps, record, holder, true);
      finished += 1;
      deps.logger.info('finished an action a crash had interrupted', {
        action: record.id,
        type: record.type,
        uids: record.uids.length,
      });
    } catch (error) {
      deps.logger.warn('could not finish an interrupted action; trying again next pass', {
        action: record.id,
        error,
      });
      break;
    }
  }
  return finished;
}

async function finish(deps: ActDeps, record: ActionRecord, resumed = false): Promise<ActOutcome> {
  const { id, type } = record;
  const [flag, value] = flagOf(type);
  let { results, changed } = record;
  if (record.status === 'pending' || !results || !changed) {
    const batches = await actUpstream(deps, type, record.uids);
    const failures = batches.flatMap((b) => (b.ok ? [] : [b.error]));
    if (batches.length && failures.length === batches.length && failures.every(noAnswer)) {
      // Taken up by a pass after a crash, it stays open: the next pass asks again.
      if (resumed) throw failures[0];
      const error = failures[0] as UpstreamError;
      await deps.actions.forget(id, toldOf(error));
      return unansweredOutcome({ ...record, unanswered: error }, false);
    }
    results = batches.flatMap((b) =>
      b.uids.map(
        (uid): UidResult => (b.ok ? { uid, ok: true } : { uid, ok: false, error: errorText(b.error) }),
      ),
    );
    // Conditional per uid: of two actions setting one flag at once, one changes it and follows up.
    const done = results.filter((r) => r.ok).map((r) => r.uid);
    changed = await deps.actions.changeFlags(done, flag, value, id);
    await deps.actions.answered(id, results, changed);
  }
  const known = await deps.actions.flags(changed);
  await deps.actions.audit({ ...record, results, changed });
  let followUps = 0;
  const { by, at, reason } = record;
  const action = { id, type, by, at, ...(reason ? { reason } : {}) };
  for (const uid of changed) {
    // The flags as left now: the edited message shows the undo of what is done.
    const flags = { ...known.get(uid), [flag]: value };
    followUps += (await deps.followUp({ kind: 'event', key: uid, action: { ...action, flags } })).length;
  }
  await deps.actions.done(id);
  return { id, results, changed, replayed: false, followUps };
}

/** The answer of an action the upstream did not answer: nothing changed, for every uid. */
function unansweredOutcome(
  record: Pick<ActionRecord, 'id' | 'uids' | 'unanswered'>,
  replayed: boolean,
): ActOutcome {
  const error = upstreamErrorOf(record.unanswered);
  const results = record.uids.map((uid) => ({ uid, ok: false, error: errorText(error) }));
  return { id: record.id, results, changed: [], replayed, followUps: 0, unanswered: error };
}
