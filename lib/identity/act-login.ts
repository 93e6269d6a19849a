/**
 * One login's step of an account action (act.ts): find the account its stored verdict named,
 * apply the rule for a call that got no answer before (once more within RESUME_WINDOW_MS, else
 * `unknown`), write the call down, then make it. With the shapes both files use (the record, a
 * login's progress and result, the deps), so act.ts, which keeps the record, imports this one.
 */
import type { Clock } from '../clock.ts';
import type { ItemChange } from '../deliver/follow-up.ts';
import type { Logger } from '../log.ts';
import type { ActionRecordBase, ActionStore, UidResult } from '../state/actions.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ProviderClient } from './client.ts';
import type { IdentityStore, LoginItem, Scope } from './store.ts';
import { ACTION_WORDS, type AccountAction } from './words.ts';

/** An interrupted call is made once more only within this of the first. */
export const RESUME_WINDOW_MS = 5 * 60_000;
/** A provider's answer to one action, at most. */
export const CALL_TIMEOUT_MS = 10_000;

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
  actions: ActionStore<AccountActionRecord>;
  store: IdentityStore;
  /** Each scope's providers: absent where the providers' secrets are not (the API on AWS). */
  providers?: ReadonlyMap<Scope, readonly ProviderClient[]>;
  fetch: typeof fetch;
  clock: Clock;
  logger: Logger;
  /** deliver/follow-up.ts `followUp`, bound to the runtime's records and destinations. */
  followUp(change: ItemChange): Promise<DeliveryRecord[]>;
  /** Tells ops of a login whose outcome is unknown. */
  report?(title: string, text: string): Promise<void>;
  waitMs?: number;
  callTimeoutMs?: number;
}

/** The verdict that names the account to act on: the newest with an account id. */
function accountOf(items: readonly LoginItem[]): LoginItem | undefined {
  const withId = items.filter((i) => i.verdict.userId);
  return withId.at(-1) ?? items.at(-1);
}

/**
 * One login's action: its result, or undefined when the provider did not answer (the login stays
 * open for a later pass, within the rules of the module comment).
 */
export async function actOnLogin(
  deps: AccountDeps,
  record: AccountActionRecord,
  login: string,
  step: LoginProgress,
): Promise<LoginResult | undefined> {
  const fail = (error: string): LoginResult => ({ login, ok: false, error });
  const items = await deps.store.loginItems(record.scope, login);
  const found = accountOf(items);
  if (!found) return fail('never leaked in this tenant: no stored verdict names this login');
  const client = deps.providers?.get(record.scope)?.find((c) => c.name === found.provider);
  if (!client) return fail(`the identity provider ${found.provider} is no longer configured for this tenant`);
  const cannot = client.cannot(record.type);
  if (cannot) return fail(cannot);
  if (found.verdict.verdict === 'no_account') return fail(`${client.name} has no such account`);
  const now = deps.clock.now();
  if (step.calls > 0) {
    // A call made before got no answer: once more within the window, else a person looks.
    const late = now - (step.lastCallAt ?? 0) > RESUME_WINDOW_MS;
    if (step.calls >= 2 || late) {
      const result: LoginResult = {
        login,
        ok: false,
        outcome: 'unknown',
        error: `outcome unknown: ${client.name} did not answer ${ACTION_WORDS[record.type]} for this account (${step.calls} call${step.calls > 1 ? 's' : ''}); check the account in the provider`,
      };
      deps.logger.error('an account action’s outcome is unknown; left to a person', {
        action: record.id,
        type: record.type,
        provider: client.name,
      });
      await deps
        .report?.(
          `identity action ${record.id}: outcome unknown`,
          `${ACTION_WORDS[record.type]} (by ${record.by}) got no answer from ${client.name} for ${login} after ${step.calls} call${step.calls > 1 ? 's' : ''}. It is not tried again: check the account in ${client.name}.`,
        )
        .catch(() => undefined);
      return result;
    }
  }
  let accountId = found.verdict.userId;
  if (!accountId) {
    const looked = await client.lookup(login, {
      fetch: deps.fetch,
      now: () => Date.now(),
      signal: AbortSignal.timeout(deps.callTimeoutMs ?? CALL_TIMEOUT_MS),
    });
    if (!('answer' in looked))
      return 'refused' in looked ? { ...fail(looked.refused), refused: true } : fail(looked.failed);
    if (!looked.answer.found) return fail(`${client.name} has no such account`);
    accountId = looked.answer.account.id;
  }
  // Written before the call: a crash after it leaves a trace that it may have happened.
  await deps.actions.note(record.id, 'progress', login, { calls: step.calls + 1, lastCallAt: now });
  const answer = await client.act(
    record.type,
    { id: accountId, login },
    {
      fetch: deps.fetch,
      now: () => Date.now(),
      signal: AbortSignal.timeout(deps.callTimeoutMs ?? CALL_TIMEOUT_MS),
      ...(record.reason ? { reason: record.reason } : {}),
    },
  );
  if ('ok' in answer) return { login, ok: true };
  if ('refused' in answer) return { ...fail(answer.refused), refused: true };
  if ('failed' in answer) return fail(answer.failed);
  if ('rateLimited' in answer) return fail(answer.rateLimited);
  deps.logger.warn('an account action got no answer; tried once more within 5 minutes', {
    action: record.id,
    provider: client.name,
    error: answer.noAnswer,
  });
  return undefined;
}
