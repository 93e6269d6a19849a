/**
 * The work of an account action while one call holds it (act.ts): its hold kept, its logins in turn
 * (act-login.ts), then, once every login has its answer, ops told of a failure nobody waits for, the
 * audit, the follow-ups and done (each safe to do again: a pass after a crash does what is left); or,
 * when a provider's turn is past the run, the action parked.
 *
 * One holder at a time: the hold lasts STALE_MS and is renewed while its holder works, however long
 * the provider takes (by the note before each call, and every half second of real time once a
 * quarter of a hold has passed on the clock). Another call or pass takes the action up only once the
 * hold lapsed; the old holder then finds it lost (a renewal or a note refused) and stops. Each note
 * before a call is written only while the hold is ours, so a holder that lost it makes no call; an
 * answer is written only while its call is the last one made, so a taker finds it and does not call
 * again.
 *
 * A refusal for rate (act-login.ts) is waited out within the run (the `deadline` act.ts gives); a
 * longer wait parks the action: its hold given back, listed in the open index so that
 * `finishAccountActions` finds it when the provider's turn comes, not before.
 */
import { renewWhileHeld } from '../state/hold-renewal.ts';
import {
  type AccountActionRecord,
  type AccountDeps,
  actOnLogin,
  failed,
  type LoginResult,
  type LoginRun,
} from './act-login.ts';
import type { AccountAction } from './words.ts';

/** An action open this long is taken to be interrupted; a hold lasts as long (renewed while held). */
export const STALE_MS = 60_000;

export interface AccountOutcome {
  id: string;
  action: AccountAction;
  results: LoginResult[];
  /** Another call took this action: this is its answer. */
  replayed: boolean;
  /**
   * Some login got no answer yet (a later pass tries once more, within the 5 minutes), or waits
   * for its provider's rate (a later pass tries again when it is due).
   */
  open: boolean;
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

/** The run of an action this call holds, its hold kept while it works; given back when left open. */
export async function held(
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
  const renewal = renewWhileHeld({
    clock: deps.clock,
    holdMs: STALE_MS,
    renew: (_now, until) => deps.actions.renew(record.id, holder, until),
    lost: () => lost.abort(),
    failed: (error) =>
      deps.logger.warn('could not renew an account action’s hold', { action: record.id, error }),
  });
  return {
    holder,
    signal: lost.signal,
    deadline,
    waits: new Map(Object.entries(record.waits ?? {})),
    holdMs: STALE_MS,
    renewed: renewal.renewed,
    stop: renewal.stop,
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
  if (!(await deps.actions.answeredWhile(run.holder, record.id, uidResults, changed))) return open();
  // Here, not with each answer: a pass that finishes the action after a crash does it too.
  for (const result of results) await failed(deps, record, result);
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
