/**
 * One login's step of an account action (act.ts): find the account its stored verdict named,
 * apply the rule for a call that got no answer before (once more within RESUME_WINDOW_MS, else
 * `unknown`), wait for the provider's rate, write the call down while the action's hold is ours,
 * make it, and write its answer down. With the shapes both files use (the record, a login's
 * progress and result, the deps), so act.ts, which keeps the record, imports this one.
 *
 * A refusal for rate (`rateLimited`: a 429, or the provider's lane paused past our time) means the
 * provider did nothing: the call is not counted, the provider's next turn is kept in `run.waits`
 * (the action's later logins of that provider wait for it too), and the same call is made again
 * when it comes, if the run lasts that long; else the step says `park`. Refused for rate until an
 * hour after the action was asked, it fails: reported to ops, like every failure of `auto`.
 *
 * Longer than 300 lines: one login’s rules (once more, unknown, the rate's turns, the notes'
 * conditions) act on one another and read best in one place.
 */
import type { Clock } from '../clock.ts';
import type { ItemChange } from '../deliver/follow-up.ts';
import type { Logger } from '../log.ts';
import type { ActionRecordBase, UidResult } from '../state/actions.ts';
import type { HeldActionStore, NoteCondition } from '../state/held-actions.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { AutoResponse } from './auto.ts';
import type { ProviderClient } from './client.ts';
import type { IdentityStore, LoginItem, Scope } from './store.ts';
import { ACTION_WORDS, type AccountAction } from './words.ts';

/** An interrupted call is made once more only within this of the first. */
export const RESUME_WINDOW_MS = 5 * 60_000;
/** A provider's answer to one action, at most. */
export const CALL_TIMEOUT_MS = 10_000;
/** Refused for rate this long after it was asked, an action fails. */
export const RATE_GIVE_UP_MS = 3_600_000;
/** A turn of the provider's lane is waited for at least this long (real time), whatever is left of the run. */
const MIN_TURN_MS = 1_000;

/** Where a login's action stands. */
export interface LoginProgress {
  calls: number;
  /** When the last call began (ms). */
  lastCallAt?: number;
  result?: LoginResult;
}

export interface LoginResult {
  login: string;
  ok: boolean;
  error?: string;
  /** The provider never answered and the action is not tried again: a person must look. */
  outcome?: 'unknown';
  /** The provider refused our credentials, a permission, a role or a licence (named in `error`). */
  refused?: true;
  /** The provider refused for rate until an hour after the action was asked. */
  rateLimited?: true;
}

export interface AccountActionRecord extends ActionRecordBase {
  type: AccountAction;
  /** The logins, as given (once each, case aside). */
  uids: string[];
  scope: Scope;
  by: string;
  reason?: string;
  progress: Record<string, LoginProgress>;
  results?: UidResult[];
  changed?: string[];
}

export interface AccountDeps {
  actions: HeldActionStore<AccountActionRecord>;
  store: IdentityStore;
  /** Each scope's providers: absent where the providers' secrets are not (the API on AWS). */
  providers?: ReadonlyMap<Scope, readonly ProviderClient[]>;
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  /** deliver/follow-up.ts `followUp`, bound to the runtime's records and destinations. */
  followUp(change: ItemChange): Promise<DeliveryRecord[]>;
  /** Tells ops of a login whose outcome is unknown, and of a failure nobody waits for. */
  report?(title: string, text: string): Promise<void>;
  /** Where the automatic response's markers are: a failed `auto` action frees its account. */
  auto?: Pick<AutoResponse, 'failed'>;
  waitMs?: number;
  callTimeoutMs?: number;
}

/** The verdict that names the account to act on: the newest with an account id. */
function accountOf(items: readonly LoginItem[]): LoginItem | undefined {
  const withId = items.filter((i) => i.verdict.userId);
  return withId.at(-1) ?? items.at(-1);
}

/** The action's work in one run (act.ts): who holds it, until when it may wait, the providers' turns. */
export interface LoginRun {
  holder: string;
  /** Aborts when the holder lost the action: it stops. */
  signal: AbortSignal;
  /** The clock's time after which no wait for rate ends in this run. */
  deadline: number;
  /** Per provider's name: the clock's time of its next turn (after a refusal for rate). */
  waits: Map<string, number>;
  /** The hold was renewed at this time (by the note before a call). */
  renewed(at: number): void;
  /** How long a hold lasts. */
  holdMs: number;
}

/**
 * What one login's step came to: its result (written down), undefined when the provider did not
 * answer (the login stays open), `park` when the provider's next turn is past the run, `lost`
 * when the action is no longer this holder's (nothing written: it stops).
 */
export type LoginStep = LoginResult | undefined | { park: number } | 'lost';

/** One login's step (see the module comment). */
export async function actOnLogin(
  deps: AccountDeps,
  record: AccountActionRecord,
  login: string,
  step: LoginProgress,
  run: LoginRun,
): Promise<LoginStep> {
  const items = await deps.store.loginItems(record.scope, login);
  const found = accountOf(items);
  const decided = await decide(deps, record, login, step, run, found);
  if (!decided || decided === 'lost' || 'park' in decided) return decided;
  if ('written' in decided) return decided.written;
  const { result, calls } = decided;
  // An answer to our own call is written while that call is still the last one made (the hold may
  // have lapsed meanwhile: the taker then finds it, instead of calling again); anything else
  // only while the hold is ours.
  const only: NoteCondition =
    calls === undefined
      ? { holder: run.holder, unset: 'result' }
      : { same: { field: 'calls', value: calls }, unset: 'result' };
  const progress = { ...step, ...(calls === undefined ? {} : { calls }), result };
  if (!(await deps.actions.note(record.id, 'progress', login, progress, only))) return 'lost';
  return result;
}

/**
 * A failure nobody waits for (refused for rate to the end, or `auto`'s): ops hear it; auto's account
 * is freed. Called by act-work.ts once every answer is kept, before the action is done, so that a
 * crash after a login's answer was written and before this leaves it to the pass that finishes the
 * action (a marker never freed would lose the account's automatic response for good).
 */
export async function failed(
  deps: AccountDeps,
  record: AccountActionRecord,
  result: LoginResult,
): Promise<void> {
  if (result.ok || result.outcome || (!result.rateLimited && record.by !== 'auto')) return;
  const found = accountOf(await deps.store.loginItems(record.scope, result.login));
  deps.logger.error('an account action failed', {
    action: record.id,
    type: record.type,
    error: result.error,
  });
  await deps
    .report?.(
      `identity action ${record.id}: failed`,
      `${ACTION_WORDS[record.type]} (by ${record.by}) failed for ${result.login}: ${result.error}`,
    )
    .catch(() => undefined);
  const account = found?.verdict.userId;
  if (record.by === 'auto' && account)
    await deps.auto?.failed(record.scope, found.verdict.provider, account, record.id);
}

type Decided =
  | { result: LoginResult; calls?: number }
  /** Answered by the holder before us, which we took the action over from. */
  | { written: LoginResult }
  | undefined
  | { park: number }
  | 'lost';

async function decide(
  deps: AccountDeps,
  record: AccountActionRecord,
  login: string,
  step: LoginProgress,
  run: LoginRun,
  found: LoginItem | undefined,
): Promise<Decided> {
  const fail = (error: string) => ({ result: { login, ok: false, error } });
  if (!found) return fail('never leaked in this tenant: no stored verdict names this login');
  const client = deps.providers?.get(record.scope)?.find((c) => c.name === found.provider);
  if (!client) return fail(`the identity provider ${found.provider} is no longer configured for this tenant`);
  const cannot = client.cannot(record.type);
  if (cannot) return fail(cannot);
  if (found.verdict.verdict === 'no_account') return fail(`${client.name} has no such account`);
  // A call made before got no answer: once more within the window of the first, else a person
  // looks. Asked again before each call too: a wait for the provider's rate may end past it.
  const noMore = () =>
    step.calls >= 2 || (step.calls > 0 && deps.clock.now() - (step.lastCallAt ?? 0) > RESUME_WINDOW_MS);
  if (noMore()) return unknown(deps, record, login, step, client.name);
  const timeout = deps.callTimeoutMs ?? CALL_TIMEOUT_MS;
  const giveUpAt = Date.parse(record.at) + RATE_GIVE_UP_MS;
  // The provider's next turn, on our clock (its times are real time).
  const turn = (retryAt: number) => {
    // At least a second: a provider that names no wait (or none) is not asked again at once.
    const at = deps.clock.now() + Math.max(1_000, retryAt - Date.now());
    run.waits.set(client.name, Math.max(run.waits.get(client.name) ?? 0, at));
  };
  let refusal = 'HTTP 429';
  let accountId = found.verdict.userId;
  for (;;) {
    const due = run.waits.get(client.name) ?? 0;
    if (due > deps.clock.now()) {
      if (due > giveUpAt)
        return {
          result: {
            login,
            ok: false,
            rateLimited: true,
            error: `${client.name} refused for rate from when the action was asked until an hour later (${refusal}): not done; try again`,
          },
        };
      if (due + timeout > run.deadline) return { park: due };
      await deps.clock.sleep(due - deps.clock.now(), run.signal).catch(() => undefined);
      if (run.signal.aborted) return 'lost';
    }
    // A turn of the provider's shared rate (the client's lane) is waited for only while the run
    // lasts, at most half a call's time; none by then is `rateLimited` with its time, nothing sent.
    // But at least MIN_TURN_MS: a lane not paused has a turn within it, so a run near its end (a
    // door's after 5 s) still takes one, instead of an action set aside for a rate the provider
    // never asked for. `deadline` and `answerMs` are real time, as the provider's clock is.
    const turnMs = Math.min(Math.max(MIN_TURN_MS, run.deadline - deps.clock.now() - timeout), timeout / 2);
    const ctx = {
      fetch: deps.fetch,
      now: () => Date.now(),
      signal: AbortSignal.timeout(timeout + turnMs),
      deadline: Date.now() + turnMs,
      answerMs: timeout,
    };
    if (!accountId) {
      const looked = await client.lookup(login, ctx);
      if ('failed' in looked && looked.retryAt !== undefined) {
        // A lookup refused for rate: safe to repeat, at the provider's next turn.
        refusal = looked.failed;
        turn(looked.retryAt);
        continue;
      }
      if (!('answer' in looked))
        return 'refused' in looked
          ? { result: { login, ok: false, error: looked.refused, refused: true } }
          : fail(looked.failed);
      if (!looked.answer.found) return fail(`${client.name} has no such account`);
      accountId = looked.answer.account.id;
    }
    if (noMore()) return unknown(deps, record, login, step, client.name);
    const now = deps.clock.now();
    const calls = step.calls + 1;
    // Written before the call, while the hold is ours (and renewed): a crash after it leaves a
    // trace that it may have happened; a holder that lost the action makes no call.
    const noted = await deps.actions.note(
      record.id,
      'progress',
      login,
      { calls, lastCallAt: now },
      { holder: run.holder, until: now + run.holdMs, unset: 'result' },
    );
    if (!noted) return answeredMeanwhile(deps, record.id, login, run.holder);
    run.renewed(now);
    const answer = await client.act(
      record.type,
      { id: accountId, login },
      { ...ctx, ...(record.reason ? { reason: record.reason } : {}) },
    );
    if ('ok' in answer) return { result: { login, ok: true }, calls };
    if ('refused' in answer)
      return { result: { login, ok: false, error: answer.refused, refused: true }, calls };
    if ('failed' in answer) return { result: { login, ok: false, error: answer.failed }, calls };
    if ('rateLimited' in answer) {
      // The provider did nothing: the call is not counted, and it is made again at its turn.
      const back = await deps.actions.note(record.id, 'progress', login, step, {
        holder: run.holder,
        unset: 'result',
      });
      if (!back) return 'lost';
      refusal = answer.rateLimited;
      turn(answer.retryAt);
      continue;
    }
    deps.logger.warn('an account action got no answer; tried once more within 5 minutes', {
      action: record.id,
      provider: client.name,
      error: answer.noAnswer,
    });
    return undefined;
  }
}

/**
 * The note before a call was refused: the holder we took the action over from wrote its call's
 * answer meanwhile (then it stands), or the action is no longer ours.
 */
async function answeredMeanwhile(
  deps: AccountDeps,
  id: string,
  login: string,
  holder: string,
): Promise<Decided> {
  const now = await deps.actions.get(id);
  const result = now?.holder === holder ? now.progress?.[login]?.result : undefined;
  return result ? { written: result } : 'lost';
}

/** A login whose call got no answer and is not made again: a person looks. */
async function unknown(
  deps: AccountDeps,
  record: AccountActionRecord,
  login: string,
  step: LoginProgress,
  provider: string,
): Promise<Decided> {
  const calls = `${step.calls} call${step.calls > 1 ? 's' : ''}`;
  deps.logger.error('an account action’s outcome is unknown; left to a person', {
    action: record.id,
    type: record.type,
    provider,
  });
  await deps
    .report?.(
      `identity action ${record.id}: outcome unknown`,
      `${ACTION_WORDS[record.type]} (by ${record.by}) got no answer from ${provider} for ${login} after ${calls}. It is not tried again: check the account in ${provider}.`,
    )
    .catch(() => undefined);
  return {
    result: {
      login,
      ok: false,
      outcome: 'unknown',
      error: `outcome unknown: ${provider} did not answer ${ACTION_WORDS[record.type]} for this account (${calls}); check the account in the provider`,
    },
  };
}
