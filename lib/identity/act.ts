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
 * One holder at a time, and a refusal for rate waited out or parked: act-work.ts.
 *
 * An action is taken only on a login with a stored verdict in the request's tenant (a leaked login
 * we looked up), on the account that verdict named, through the provider that decided it.
 * Each login that was acted on is followed up wherever its credentials were alerted.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActionKind } from '../state/actions.ts';
import { HeldActionStore } from '../state/held-actions.ts';
import type { TableIo } from '../state/io.ts';
import type { AccountActionRecord, AccountDeps } from './act-login.ts';
import { type AccountOutcome, held, outcomeOf, STALE_MS } from './act-work.ts';
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
export { type AccountOutcome, outcomeOf, STALE_MS } from './act-work.ts';

export const ACCOUNT_ACTION_KIND: ActionKind = { prefix: 'idaction', open: 'idaction#open' };
/** Logins one action may name (the API's limit). */
export const MAX_ACTION_LOGINS = 100;
/** How long a call with an action's id waits for the call working on it. */
export const WAIT_MS = 5_000;
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

export function accountStore(io: TableIo): HeldActionStore<AccountActionRecord> {
  return new HeldActionStore<AccountActionRecord>(io, ACCOUNT_ACTION_KIND);
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
