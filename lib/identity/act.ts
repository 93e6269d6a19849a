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
 * An action is taken only on a login with a stored verdict in the request's tenant (a leaked login
 * we looked up), on the account that verdict named, through the provider that decided it.
 * Each login that was acted on is followed up wherever its credentials were alerted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ActionKind, ActionStore } from '../state/actions.ts';
import type { TableIo } from '../state/io.ts';
import { type AccountActionRecord, type AccountDeps, actOnLogin, type LoginResult } from './act-login.ts';
import type { Scope } from './store.ts';
import { ACCOUNT_ACTIONS, type AccountAction } from './words.ts';

export {
  type AccountActionRecord,
  type AccountDeps,
  CALL_TIMEOUT_MS,
  type LoginProgress,
  type LoginResult,
  RESUME_WINDOW_MS,
} from './act-login.ts';

export const ACCOUNT_ACTION_KIND: ActionKind = { prefix: 'idaction', open: 'idaction#open' };
/** Logins one action may name (the API's limit). */
export const MAX_ACTION_LOGINS = 100;
/** An action open this long is taken to be interrupted; a hold lasts as long. */
export const STALE_MS = 60_000;
/** How long a call with an action's id waits for the call working on it. */
export const WAIT_MS = 5_000;

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
  const results = record.uids.map(
    (login) =>
      record.progress?.[login]?.result ?? {
        login,
        ok: false,
        error: 'under way: no answer from the provider yet',
      },
  );
  return {
    id: record.id,
    action: record.type,
    results,
    replayed,
    open: record.status !== 'done',
  };
}

/**
 * Acts on the accounts once (see the module comment). Throws on a bad request, a table error, or
 * when another call holds the same action for longer than the wait.
 */
export async function actOnAccounts(deps: AccountDeps, request: AccountRequest): Promise<AccountOutcome> {
  const record = newRecord(deps, request);
  const holder = randomUUID();
  const begun = await deps.actions.begin(record, { holder, heldUntil: deps.clock.now() + STALE_MS });
  if ('created' in begun) return held(deps, { ...record, status: 'pending' }, holder);
  return takeUpOrWait(deps, begun.existing, holder);
}

/** Finishes a recorded action by its id (a worker handed it, or a door that recorded it first). */
export async function finishAccountAction(
  deps: AccountDeps,
  id: string,
): Promise<AccountOutcome | undefined> {
  const record = await deps.actions.get(id);
  if (!record) return undefined;
  return takeUpOrWait(deps, record, randomUUID());
}

async function takeUpOrWait(
  deps: AccountDeps,
  first: AccountActionRecord,
  holder: string,
): Promise<AccountOutcome> {
  const giveUpAt = performance.now() + (deps.waitMs ?? WAIT_MS);
  let pause = 20;
  let current: AccountActionRecord | undefined = first;
  while (current) {
    if (current.status === 'done') return outcomeOf(current, true);
    const now = deps.clock.now();
    const mine = await deps.actions.hold(current.id, holder, now, now + STALE_MS);
    if (mine) return held(deps, mine, holder);
    if (performance.now() >= giveUpAt) return { ...outcomeOf(current, true), open: true };
    await sleep(pause);
    pause = Math.min(pause * 2, 200);
    current = await deps.actions.get(first.id);
  }
  throw new Error(`the record of action ${first.id} disappeared`);
}

/** Finishes the account actions a crash or a silent provider left open (the delivery pass calls this). */
export async function finishAccountActions(deps: AccountDeps, limit = 10): Promise<number> {
  if (!deps.providers) return 0;
  const now = deps.clock.now();
  const open = await deps.actions.unfinished(now - STALE_MS, limit);
  const holder = randomUUID();
  let finished = 0;
  for (const stale of open) {
    const record = await deps.actions.hold(stale.id, holder, now, now + STALE_MS);
    if (!record) continue;
    try {
      const outcome = await held(deps, record, holder);
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

async function held(deps: AccountDeps, record: AccountActionRecord, holder: string): Promise<AccountOutcome> {
  try {
    const outcome = await work(deps, record);
    if (outcome.open) await deps.actions.release(record.id, holder).catch(() => undefined);
    return outcome;
  } catch (error) {
    await deps.actions.release(record.id, holder).catch(() => undefined);
    throw error;
  }
}

/** Each open login in turn, then, once every login has its answer: audit, follow-ups, done. */
async function work(deps: AccountDeps, record: AccountActionRecord): Promise<AccountOutcome> {
  if (!deps.providers) throw new Error('the identity providers are not set up in this process');
  const progress = { ...record.progress };
  for (const login of record.uids) {
    const step = progress[login] ?? { calls: 0 };
    if (step.result) continue;
    const result = await actOnLogin(deps, record, login, step);
    if (result) {
      progress[login] = { ...step, result };
      await deps.actions.note(record.id, 'progress', login, progress[login]);
    }
  }
  const current: AccountActionRecord = { ...record, progress };
  if (record.uids.some((l) => !progress[l]?.result)) return outcomeOf(current, false);
  const results = record.uids.map((l) => progress[l]?.result as LoginResult);
  const changed = results.filter((r) => r.ok).map((r) => r.login);
  await deps.actions.answered(
    record.id,
    results.map((r) => ({ uid: r.login, ok: r.ok, ...(r.error ? { error: r.error } : {}) })),
    changed,
  );
  await deps.actions.audit({
    ...current,
    results: results.map((r) => ({ uid: r.login, ok: r.ok, ...(r.error ? { error: r.error } : {}) })),
    changed,
  });
  const action = {
    id: record.id,
    type: record.type,
    by: record.by,
    at: record.at,
    ...(record.reason ? { reason: record.reason } : {}),
  };
  for (const login of changed) {
    for (const item of await deps.store.loginItems(record.scope, login)) {
      await deps.followUp({ kind: 'credential', key: item.itemKey, action });
    }
  }
  await deps.actions.done(record.id);
  return outcomeOf({ ...current, status: 'done' }, false);
}
