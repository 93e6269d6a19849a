/**
 * Acting on accounts (docs/identity.md): revoke sessions, require a password change,
 * confirm compromised, disable and enable, for every door (the CLI, the API, Slack's menus, and
 * `identity.auto`). Section 9's action module keeps it (state/actions.ts, under `idaction#<id>`):
 * the record is written before any provider is called, held by the call working on it, so the
 * same id from a replay, a double click or 20 calls at once acts once, and audited once.
 *
 * These actions are not all idempotent (a second `requirePasswordChange` forces another change),
 * so each login's progress is written down before its call: how many calls were made and when the
 * last began. A call that got no answer (a timeout, a crash) leaves its login open; a later pass
 * makes at most one more call, and only within RESUME_WINDOW_MS of the first. Past that, or after
 * that one more call, the login's outcome is `unknown`: reported to ops, and left to a person.
 * What that excludes for good: the action on that login, which nobody retries by itself.
 *
 * One holder at a time: the hold lasts STALE_MS and is renewed while its holder works, however long
 * the provider takes (by the note before each call, and every half second of real time once a quarter
 * of a hold has passed on the clock). Another call or pass takes the action up only once the hold
 * lapsed; the old holder then finds it lost (a renewal or a note refused) and stops. Each note before
 * a call is written only while the hold is ours, so a holder that lost it makes no call; an answer
 * is written only while its call is the last one made, so a taker finds it and does not call again.
 *
 * A refusal for rate (act-login.ts) is waited out within the run (its door's `deadline`, and at
 * most MAX_RATE_WAIT_MS); a longer wait parks the action: its hold given back, listed in the open
 * index so that `finishAccountActions` finds it when the provider's turn comes, not before.
 *
 * An action is taken only on a login with a stored verdict in the request's tenant (a leaked login
 * we looked up), on the account that verdict named, through the provider that decided it.
 * Each login that was acted on is followed up wherever its credentials were alerted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ActionKind, ActionStore } from '../state/actions.ts';
import type { TableIo } from '../state/io.ts';
import {
  type AccountActionRecord,
  type AccountDeps,
  actOnLogin,
  type LoginResult,
  type LoginRun,
} from './act-login.ts';
import type { Scope } from './store.ts';
import { ACCOUNT_ACTIONS, type AccountAction } from './words.ts';

export {
  type AccountActionRecord,
  type AccountDeps,
  CALL_TIMEOUT_MS,
  type LoginProgress,
  type LoginResult,
  RATE_GIVE_UP_MS,
  RESUME_WINDOW_MS,
} from './act-login.ts';

export const ACCOUNT_ACTION_KIND: ActionKind = { prefix: 'idaction', open: 'idaction#open' };
/** Logins one action may name (the API's limit). */
export const MAX_ACTION_LOGINS = 100;
/** An action open this long is taken to be interrupted; a hold lasts as long (renewed while held). */
export const STALE_MS = 60_000;
/** How long a call with an action's id waits for the call working on it. */
export const WAIT_MS = 5_000;
/** Real time between the checks of whether a hold needs renewing. */
const HEARTBEAT_MS = 500;
/**
 * A run waits for a provider's rate at most this long after it began; a longer wait parks the
 * action (the delivery pass finishes actions before its deliveries, which must not wait on it).
 */
export const MAX_RATE_WAIT_MS = 15_000;

/** A door's or a pass's time (on the deps' clock): no wait for a provider's rate ends after it. */
export interface AccountRun {
  deadline?: number;
}

export interface AccountRequest {
  action: AccountAction;
  logins: readonly string[];
  /** The `tenants` entry's id; undefined for the top-level sources. */
  tenant?: number;
  reason?: string;
  by: string;
  /** Given by the door (an Idempotency-Key, a Slack click); a new one when absent. */
  id?: string;
}

export interface AccountOutcome {
  id: string;
  action: AccountAction;
  results: LoginResult[];
  /** Another call took this action: this is its answer. */
  replayed: boolean;
  /** Some login got no answer yet: a later pass tries once more, within the 5 minutes. */
  open: boolean;
}

export function accountStore(io: TableIo): ActionStore<AccountActionRecord> {
  return new ActionStore<AccountActionRecord>(io, ACCOUNT_ACTION_KIND);
}

/** What is wrong with a request, in words for its door; undefined when it may go. */
export function accountActionProblem(request: Pick<AccountRequest, 'action' | 'logins'>): string | undefined {
  if (!ACCOUNT_ACTIONS.includes(request.action))
    return `the action must be one of ${ACCOUNT_ACTIONS.join(', ')}`;
  if (
    !Array.isArray(request.logins) ||
    request.logins.length < 1 ||
    request.logins.length > MAX_ACTION_LOGINS
  )
    return `give 1 to ${MAX_ACTION_LOGINS} logins (got ${Array.isArray(request.logins) ? request.logins.length : 0})`;
  const bad = request.logins.findIndex((l) => typeof l !== 'string' || l.trim() === '' || l.length > 320);
  if (bad >= 0) return `login ${bad + 1} is empty or longer than 320 characters`;
  return undefined;
}

const scopeOfTenant = (tenant: number | undefined): Scope => tenant ?? 'top';
const unique = (logins: readonly string[]) => {
  const seen = new Map<string, string>();
  for (const login of logins)
    if (!seen.has(login.trim().toLowerCase())) seen.set(login.trim().toLowerCase(), login.trim());
  return [...seen.values()];
};

/**
 * The logins of `request` that no verdict of its tenant names: the door refuses the request
 * naming them, before anything is recorded or called.
 */
export async function neverLeaked(
  deps: Pick<AccountDeps, 'store'>,
  request: Pick<AccountRequest, 'logins' | 'tenant'>,
): Promise<string[]> {
  const scope = scopeOfTenant(request.tenant);
  const found = await Promise.all(
    unique(request.logins).map(async (l) => [l, await deps.store.loginItems(scope, l, 1)] as const),
  );
  return found.filter(([, items]) => items.length === 0).map(([l]) => l);
}

function newRecord(
  deps: Pick<AccountDeps, 'clock'>,
  request: AccountRequest,
): Omit<AccountActionRecord, 'status'> {
  const problem = accountActionProblem(request);
  if (problem) throw new RangeError(problem);
  const logins = unique(request.logins);
  return {
    id: request.id ?? randomUUID(),
    type: request.action,
    uids: logins,
    scope: scopeOfTenant(request.tenant),
    by: request.by,
    at: new Date(deps.clock.now()).toISOString(),
    ...(request.reason ? { reason: request.reason.slice(0, 500) } : {}),
    progress: Object.fromEntries(logins.map((l) => [l, { calls: 0 }])),
  };
}

/**
 * Writes the action down, and nothing else: a door without the providers' secrets (the API on AWS,
 * a Slack click) records it and hands its id to a worker, which finishes it with `actOnAccounts`.
 */
export async function recordAccountAction(
  deps: Pick<AccountDeps, 'actions' | 'clock'>,
  request: AccountRequest & { id: string },
): Promise<{ created: boolean; record: AccountActionRecord }> {
  const record = newRecord(deps, request);
  const begun = await deps.actions.begin(record);
  return 'created' in begun
    ? { created: true, record: { ...record, status: 'pending' } }
    : { created: false, record: begun.existing };
}

/** What an action came to so far, from its record (GET /identity/actions/{id}). */
export function outcomeOf(record: AccountActionRecord, replayed = true): AccountOutcome {
  const waits = Object.values(record.waits ?? {});
  const under = waits.length
    ? `under way: waiting for the provider's rate (until ${new Date(Math.max(...waits)).toISOString()}); a later pass tries again`
    : 'under way: no answer from the provider yet';
  const results = record.uids.map(
    (login) => record.progress?.[login]?.result ?? { login, ok: false, error: under },
  );
  return {
    id: record.id,
    action: record.type,
    results,
    replayed,
    open: record.status !== 'done',
  };
}

const deadlineOf = (deps: AccountDeps, run: AccountRun) =>
  Math.min(run.deadline ?? Number.POSITIVE_INFINITY, deps.clock.now() + MAX_RATE_WAIT_MS);

/**
 * Acts on the accounts once (see the module comment). Throws on a bad request, a table error, or
 * when another call holds the same action for longer than the wait.
 */
export async function actOnAccounts(
  deps: AccountDeps,
  request: AccountRequest,
  run: AccountRun = {},
): Promise<AccountOutcome> {
  const record = newRecord(deps, request);
  const holder = randomUUID();
  const deadline = deadlineOf(deps, run);
  const begun = await deps.actions.begin(record, { holder, heldUntil: deps.clock.now() + STALE_MS });
  if ('created' in begun) return held(deps, { ...record, status: 'pending' }, holder, deadline);
  return takeUpOrWait(deps, begun.existing, holder, deadline);
}

/** Finishes a recorded action by its id (a worker handed it, or a door that recorded it first). */
export async function finishAccountAction(
  deps: AccountDeps,
  id: string,
  run: AccountRun = {},
): Promise<AccountOutcome | undefined> {
  const record = await deps.actions.get(id);
  if (!record) return undefined;
  return takeUpOrWait(deps, record, randomUUID(), deadlineOf(deps, run));
}

async function takeUpOrWait(
  deps: AccountDeps,
  first: AccountActionRecord,
  holder: string,
  deadline: number,
): Promise<AccountOutcome> {
  const giveUpAt = performance.now() + (deps.waitMs ?? WAIT_MS);
  let pause = 20;
  let current: AccountActionRecord | undefined = first;
  while (current) {
    if (current.status === 'done') return outcomeOf(current, true);
    const now = deps.clock.now();
    const mine = await deps.actions.hold(current.id, holder, now, now + STALE_MS);
    if (mine) return held(deps, mine, holder, deadline);
    if (performance.now() >= giveUpAt) return { ...outcomeOf(current, true), open: true };
    await sleep(pause);
    pause = Math.min(pause * 2, 200);
    current = await deps.actions.get(first.id);
  }
  throw new Error(`the record of action ${first.id} disappeared`);
}

/**
 * Finishes the account actions a crash, a silent provider or a provider's rate left open, each
 * when due (the delivery pass calls this, with its deadline).
 */
export async function finishAccountActions(
  deps: AccountDeps,
  run: AccountRun & { limit?: number } = {},
): Promise<number> {
  if (!deps.providers) return 0;
  const deadline = deadlineOf(deps, run);
  const open = await deps.actions.unfinished(deps.clock.now() - STALE_MS, run.limit ?? 10);
  const holder = randomUUID();
  let finished = 0;
  for (const stale of open) {
    const now = deps.clock.now();
    const record = await deps.actions.hold(stale.id, holder, now, now + STALE_MS);
    if (!record) continue;
    try {
      const outcome = await held(deps, record, holder, deadline);
      if (!outcome.open) finished += 1;
    } catch (error) {
      deps.logger.warn('could not finish an interrupted account action; trying again next pass', {
        action: record.id,
        error,
      });
    }
  }
  return finished;
}

/** The run of an action this call holds, its hold kept while it works; given back when left open. */
async function held(
  deps: AccountDeps,
  record: AccountActionRecord,
  holder: string,
  deadline: number,
): Promise<AccountOutcome> {
  const run = keepHold(deps, record, holder, deadline);
  try {
    const outcome = await work(deps, record, run);
    // Given back (unless parked, or lost: then the condition on the holder keeps it as it is).
    if (outcome.open) await deps.actions.release(record.id, holder).catch(() => undefined);
    return outcome;
  } catch (error) {
    await deps.actions.release(record.id, holder).catch(() => undefined);
    throw error;
  } finally {
    run.stop();
  }
}

/**
 * Renews `holder`'s hold while it works (module comment); when a renewal finds it taken, `signal`
 * aborts and the work stops.
 */
function keepHold(
  deps: AccountDeps,
  record: AccountActionRecord,
  holder: string,
  deadline: number,
): LoginRun & { stop(): void } {
  const lost = new AbortController();
  let renewedAt = deps.clock.now();
  let busy = false;
  const timer = setInterval(() => {
    const now = deps.clock.now();
    if (busy || lost.signal.aborted || now - renewedAt < STALE_MS / 4) return;
    busy = true;
    deps.actions
      .renew(record.id, holder, now + STALE_MS)
      .then(
        (kept) => {
          if (kept) renewedAt = Math.max(renewedAt, now);
          else lost.abort();
        },
        // A table that did not answer: the next beat tries again, before the hold lapses.
        (error: unknown) =>
          deps.logger.warn('could not renew an account action’s hold', { action: record.id, error }),
      )
      .finally(() => {
        busy = false;
      });
  }, HEARTBEAT_MS);
  timer.unref?.();
  return {
    holder,
    signal: lost.signal,
    deadline,
    waits: new Map(Object.entries(record.waits ?? {})),
    holdMs: STALE_MS,
    renewed: (at) => {
      renewedAt = Math.max(renewedAt, at);
    },
    stop: () => clearInterval(timer),
  };
}

/** Each open login in turn, then, once every login has its answer: audit, follow-ups, done. */
async function work(deps: AccountDeps, record: AccountActionRecord, run: LoginRun): Promise<AccountOutcome> {
  if (!deps.providers) throw new Error('the identity providers are not set up in this process');
  const progress = { ...record.progress };
  let parkUntil = Number.POSITIVE_INFINITY;
  let unanswered = false;
  const open = () => outcomeOf({ ...record, progress }, false);
  for (const login of record.uids) {
    const step = progress[login] ?? { calls: 0 };
    if (step.result) continue;
    if (run.signal.aborted) return open();
    const got = await actOnLogin(deps, record, login, step, run);
    if (got === 'lost') return open();
    if (got === undefined) unanswered = true;
    else if ('park' in got) parkUntil = Math.min(parkUntil, got.park);
    else progress[login] = { ...step, result: got };
  }
  if (record.uids.some((l) => !progress[l]?.result)) {
    if (parkUntil === Number.POSITIVE_INFINITY) return open();
    // Listed where `finishAccountActions` (`unfinished(now - STALE_MS)`) finds it when due; at once
    // when a login got no answer (its one more call must come within the 5 minutes).
    const waits = Object.fromEntries([...run.waits].filter(([, at]) => at > deps.clock.now()));
    const listed = (unanswered ? deps.clock.now() : parkUntil) - STALE_MS;
    await deps.actions.park(record.id, run.holder, listed, waits);
    deps.logger.info('an account action waits for a provider’s rate; a later pass takes it up', {
      action: record.id,
      until: new Date(parkUntil).toISOString(),
    });
    return outcomeOf({ ...record, progress, waits }, false);
  }
  const results = record.uids.map((l) => progress[l]?.result as LoginResult);
  const changed = results.filter((r) => r.ok).map((r) => r.login);
  const uidResults = results.map((r) => ({ uid: r.login, ok: r.ok, ...(r.error ? { error: r.error } : {}) }));
  if (!(await deps.actions.answered(record.id, uidResults, changed, run.holder))) return open();
  const current: AccountActionRecord = { ...record, progress };
  await deps.actions.audit({ ...current, results: uidResults, changed });
  const action = {
    id: record.id,
    type: record.type,
    by: record.by,
    at: record.at,
    ...(record.reason ? { reason: record.reason } : {}),
  };
  for (const login of changed) {
    for (const item of await deps.store.loginItems(record.scope, login)) {
      // Another took the action up (it follows up, once per destination and action): stop here.
      if (run.signal.aborted) return open();
      await deps.followUp({ kind: 'credential', key: item.itemKey, action });
    }
  }
  await deps.actions.done(record.id);
  return outcomeOf({ ...current, status: 'done' }, false);
}
