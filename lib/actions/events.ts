/**
 * Acting on events (interface.md section 9): one function for every door (the CLI, the API, and
 * Slack's buttons next). Who, what, which uids, an optional reason and an action id in; per uid
 * what the upstream said out. In order, each step written before the next, so an action happens
 * once through crashes and repeats (state/actions.ts keeps the records):
 *
 * 1. the action's record is created (`pending`): the same id again finds it, and answers as the
 *    first did once it is done, doing nothing more;
 * 2. the upstream is asked (endpoint 12, 10 uids a request; its actions are idempotent, so asking
 *    again after a crash is harmless);
 * 3. its answer, and which uids it changed (a flag we did not know to be so already), are kept in
 *    the record, in one write;
 * 4. the flags are noted, the action audited, and each changed event followed up at every
 *    destination that was sent it (deliver/follow-up.ts: once per destination and action);
 * 5. the record is marked done.
 *
 * A crash anywhere leaves the record open; `finishActions` (the delivery pass calls it) takes up
 * an action open for over a minute from the step it had reached, and keeps asking an upstream that
 * does not answer, pass after pass. At a door, an upstream that did not answer at all
 * (unavailable, timed out, rate limiting, or refusing our own credentials) changes nothing: the
 * record is set aside (`forgotten`), so the same id tried again really tries again.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { type FollowUpDeps, type FollowUpTarget, followUp, type ItemChange } from '../deliver/follow-up.ts';
import type { Logger } from '../log.ts';
import { splitKey } from '../poll/ids.ts';
import {
  type ActionRecord,
  ActionStore,
  type EventActionType,
  flagOf,
  type UidResult,
} from '../state/actions.ts';
import type { TableIo } from '../state/io.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { EventActionBatch } from '../upstream/client.ts';
import { UpstreamError } from '../upstream/errors.ts';

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
/** An action open this long is taken to be interrupted (a live one takes seconds). */
export const STALE_ACTION_MS = 60_000;

type ActingUpstream = {
  eventActions(type: EventActionType, uids: readonly string[]): Promise<EventActionBatch[]>;
};

export interface ActDeps {
  /** The top-level sources' client. */
  upstream: ActingUpstream;
  /**
   * A `tenants` entry's client (its own token: interface.md section 10), and the configured
   * tenants' ids, which tell a key `1002:<uid>` from a top-level uid. None: every key is a uid.
   */
  tenants?: { ids(): Promise<readonly number[]>; upstreamFor(tenant: number): ActingUpstream };
  actions: ActionStore;
  /** deliver/follow-up.ts `followUp`, bound to the runtime's records and destinations. */
  followUp(change: ItemChange): Promise<DeliveryRecord[]>;
  clock: Clock;
  logger: Logger;
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
  /** An action with this id had been taken already: this is its answer, and nothing more was done. */
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

/** Acts on events once (see the module comment). Throws only on a bad request or a table error. */
export async function actOnEvents(deps: ActDeps, request: ActRequest): Promise<ActOutcome> {
  const record = newRecord(deps, request);
  const begun = await deps.actions.begin(record);
  if ('existing' in begun) {
    const first = begun.existing;
    if (first.status === 'done')
      return { id: first.id, results: first.results ?? [], replayed: true, followUps: 0 };
    // Open: interrupted, or under way elsewhere; finishing it again repeats nothing (module comment).
    return { ...(await finish(deps, first)), replayed: true };
  }
  return finish(deps, record);
}

/** Finishes the actions a crash left open (the delivery pass calls this). Returns how many. */
export async function finishActions(deps: ActDeps): Promise<number> {
  // A few a pass, and none after the first that fails: the pass's deliveries must not wait on an
  // upstream that does not answer, action after action.
  const open = await deps.actions.unfinished(deps.clock.now() - STALE_ACTION_MS, FINISH_PER_PASS);
  let finished = 0;
  for (const record of open) {
    try {
      await finish(deps, record, true);
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
    const before = await deps.actions.flags(record.uids);
    const batches = await actUpstream(deps, type, record.uids);
    const failures = batches.flatMap((b) => (b.ok ? [] : [b.error]));
    if (batches.length && failures.length === batches.length && failures.every(unanswered)) {
      // Taken up by a pass after a crash, it stays open: the next pass asks again.
      if (resumed) throw failures[0];
      await deps.actions.forget(id);
      const error = failures[0] as UpstreamError;
      return {
        id,
        results: record.uids.map((uid) => ({ uid, ok: false, error: errorText(error) })),
        replayed: false,
        followUps: 0,
        unanswered: error,
      };
    }
    results = batches.flatMap((b) =>
      b.uids.map(
        (uid): UidResult => (b.ok ? { uid, ok: true } : { uid, ok: false, error: errorText(b.error) }),
      ),
    );
    changed = results.filter((r) => r.ok && before.get(r.uid)?.[flag] !== value).map((r) => r.uid);
    await deps.actions.answered(id, results, changed);
  }
  const done = results.filter((r) => r.ok).map((r) => r.uid);
  const known = await deps.actions.flags(done);
  const after = new Map(done.map((uid) => [uid, { ...known.get(uid), [flag]: value }]));
  await deps.actions.setFlags([...after]);
  await deps.actions.audit({ ...record, results, changed });
  let followUps = 0;
  const action = {
    id,
    type,
    by: record.by,
    at: record.at,
    ...(record.reason ? { reason: record.reason } : {}),
  };
  for (const uid of changed) {
    // The flags as left now: the edited message shows the undo of what is done.
    const flags = after.get(uid) ?? { [flag]: value };
    followUps += (await deps.followUp({ kind: 'event', key: uid, action: { ...action, flags } })).length;
  }
  await deps.actions.done(id);
  return { id, results, replayed: false, followUps };
}

/**
 * Asks the upstream, each key with its own tenant's token and the upstream's own uid (a key of a
 * `tenants` entry is `<tenant>:<uid>`); the answers speak of keys again.
 */
async function actUpstream(
  deps: ActDeps,
  type: EventActionType,
  keys: readonly string[],
): Promise<EventActionBatch[]> {
  const ids = (await deps.tenants?.ids()) ?? [];
  if (!ids.length || !deps.tenants) return deps.upstream.eventActions(type, keys);
  const groups = new Map<number | undefined, { key: string; uid: string }[]>();
  for (const key of keys) {
    const { tenant, uid } = splitKey(key, ids);
    const list = groups.get(tenant) ?? [];
    list.push({ key, uid });
    groups.set(tenant, list);
  }
  const out: EventActionBatch[] = [];
  for (const [tenant, list] of groups) {
    const client = tenant === undefined ? deps.upstream : deps.tenants.upstreamFor(tenant);
    const keyOf = new Map(list.map((e) => [e.uid, e.key]));
    const batches = await client.eventActions(
      type,
      list.map((e) => e.uid),
    );
    out.push(...batches.map((b) => ({ ...b, uids: b.uids.map((uid) => keyOf.get(uid) ?? uid) })));
  }
  return out;
}

/** The upstream did not answer (it may: retry), or refused our own credentials. */
function unanswered(error: UpstreamError): boolean {
  return error.retryable || error.code === 'unauthorized' || error.code === 'forbidden';
}

function errorText(error: unknown): string {
  return error instanceof UpstreamError ? `${error.code}: ${error.message}` : String(error);
}
