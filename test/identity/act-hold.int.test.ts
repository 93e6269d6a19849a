/**
 * Account actions under load and faults (lib/identity/act.ts, section 12 "Under load and faults"),
 * against real dynalite and the providers' stand-in over HTTP: a slow provider with two holders
 * at once (a door's call and a delivery pass, each with its own table client) calls each login
 * once; a holder whose hold lapsed mid-action stops, and its taker repeats no call whose answer
 * was written; a 429 is waited out and tried again, or parks the action past the run, which a
 * later pass takes up when due and not before; an hour of 429s is a failure, reported and audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { forgetEntraToken } from '../../lib/entra-token.ts';
import {
  type AccountDeps,
  actOnAccounts,
  finishAccountActions,
  RATE_GIVE_UP_MS,
} from '../../lib/identity/act.ts';
import { GRAPH_SCOPE } from '../../lib/identity/entra.ts';
import { ActionStore } from '../../lib/state/actions.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { accountDeps, actionsConfig, keepAtRisk } from '../helpers/account-actions.ts';
import { fakeClock, skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const db = useDynalite();
let idp: IdentityProviders;
const LOGINS = Array.from({ length: 6 }, (_, i) => `user${i}@hold.test`);
const idOf = (login: string) => `u-${login.split('@')[0]}`;
const KIM = 'kim@hold.io';

beforeAll(async () => {
  idp = await identityProviders({
    entra: { users: LOGINS.map((l) => ({ userPrincipalName: l, id: idOf(l) })) },
    okta: { users: [{ login: KIM, id: '00ukim' }] },
  });
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
});
afterAll(() => idp.close());

/**
 * A clock that runs `scale` times faster than real time, and sleeps as much shorter: at 40, a
 * provider that answers in 300 ms of real time answers in 12 s on it, and a minute's hold lasts 1.5 s.
 */
function fastClock(scale: number, start = Date.parse('2026-11-26T12:00:00Z')): Clock {
  const began = Date.now();
  return {
    now: () => start + (Date.now() - began) * scale,
    sleep: (ms, signal) => systemClock.sleep(ms / scale, signal),
  };
}

/** One process's view: its own table client, provider clients and logs, on one table and clock. */
async function world(clock: Clock, table?: string) {
  const tableName = table ?? (await db.table());
  const client = table ? createDynamoClient({ endpoint: db.endpoint }) : db.client;
  const io = { client, tableName, clock };
  const { deps, followUps, reports } = accountDeps(
    idp,
    io,
    actionsConfig(idp, { entra: ['hold.test'], okta: ['hold.io'] }),
    { callTimeoutMs: 5_000 },
  );
  if (!table)
    await keepAtRisk(deps.store, [...LOGINS, KIM], (login) =>
      login === KIM ? { provider: 'shop', userId: '00ukim' } : { provider: 'corp', userId: idOf(login) },
    );
  return { deps, followUps, reports, table: tableName, io };
}

/** Graph refuses the next `times` calls on `login`'s account for rate, asking for `retryAfter` s. */
const refuseForRate = (login: string, retryAfter: number, times = 1) =>
  idp.stand.control.addFault({ provider: 'entra', path: idOf(login), status: 429, retryAfter, times });
/** The action's record once a run that parked it (`outcome.open`) is over: a pass `parkMs` on. */
async function afterPark(deps: AccountDeps, outcome: { id: string; open: boolean }, parkMs: number) {
  if (outcome.open) {
    await deps.clock.sleep(parkMs);
    await finishAccountActions(deps);
  }
  return deps.actions.get(outcome.id);
}

const calls = (login: string, since: number) =>
  idp.actions.slice(since).filter((a) => a.action === 'requirePasswordChange' && a.login === login).length;
const requestsTo = (login: string, since: number) =>
  idp.requests.slice(since).filter((r) => r.path.includes(idOf(login)) && r.method !== 'GET').length;
const slow = (delayMs: number, logins = LOGINS) => {
  for (const login of logins)
    idp.stand.control.addFault({ provider: 'entra', path: idOf(login), delayMs, times: 1 });
};

/** Runs delivery passes of process `b` until `until` settles. */
async function passesDuring(b: AccountDeps, until: Promise<unknown>): Promise<void> {
  let over = false;
  void until.finally(() => {
    over = true;
  });
  while (!over) {
    await finishAccountActions(b);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('one holder at a time', () => {
  it('a provider answering in 12 s, once in 65 s: the door’s call keeps its hold for the whole action, and a pass at the same time calls nothing', async () => {
    const clock = fastClock(40);
    const a = await world(clock);
    const b = await world(clock, a.table);
    const actions = idp.actions.length;
    // Longer than a hold (a minute), then 12 s each: 6 logins take twice a hold.
    slow(1_625, LOGINS.slice(0, 1));
    slow(300, LOGINS.slice(1));
    const acting = actOnAccounts(a.deps, {
      action: 'requirePasswordChange',
      logins: LOGINS,
      by: 'cli:x',
      id: 'slow-1',
    });
    await passesDuring(b.deps, acting);
    const outcome = await acting;
    for (const login of LOGINS) expect(calls(login, actions), login).toBe(1);
    expect(outcome.results.every((r) => r.ok)).toBe(true);
    expect([...a.followUps, ...b.followUps].map((f) => f.key).sort()).toEqual(['0', '1', '2', '3', '4', '5']);
    expect((await a.deps.actions.get('slow-1'))?.status).toBe('done');
  });

  it('the clock moved a minute mid-action: the holder stops, the taker repeats no answered call, and each login is followed up once', async () => {
    const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
    const a = await world(clock);
    const b = await world(clock, a.table);
    const actions = idp.actions.length;
    slow(200);
    const acting = actOnAccounts(a.deps, {
      action: 'requirePasswordChange',
      logins: LOGINS,
      by: 'cli:x',
      id: 'jump-1',
    });
    // While the second login's call is under way, a minute passes: the hold has lapsed.
    await new Promise((r) => setTimeout(r, 300));
    clock.advance(61_000);
    const taken = finishAccountActions(b.deps);
    await Promise.all([acting, taken]);
    // A taker may make the call in flight once more (its answer was unknown), no other.
    for (const login of LOGINS) expect(calls(login, actions), login).toBeGreaterThanOrEqual(1);
    expect(LOGINS.filter((l) => calls(l, actions) > 1).length).toBeLessThanOrEqual(1);
    expect(idp.actions.length - actions).toBeLessThanOrEqual(LOGINS.length + 1);
    const keys = [...a.followUps, ...b.followUps].map((f) => f.key).sort();
    expect(keys).toEqual(['0', '1', '2', '3', '4', '5']);
    const record = await a.deps.actions.get('jump-1');
    expect(record?.status).toBe('done');
    expect(Object.values(record?.progress ?? {}).every((p) => p.result?.ok)).toBe(true);
  });
});

describe('a refusal for rate is not a failure', () => {
  it('a 429 with Retry-After: waited out, the call made again, the login done, and the next login after it', async () => {
    const clock = skipClock();
    const a = await world(clock);
    const [first, second] = LOGINS as [string, string];
    const actions = idp.actions.length;
    const requests = idp.requests.length;
    refuseForRate(first, 5);
    const outcome = await actOnAccounts(a.deps, {
      action: 'requirePasswordChange',
      logins: [first, second],
      by: 'cli:x',
      id: 'rate-1',
    });
    expect(outcome.results).toEqual([
      { login: first, ok: true },
      { login: second, ok: true },
    ]);
    expect(outcome.open).toBe(false);
    expect(requestsTo(first, requests)).toBe(2);
    expect(calls(first, actions)).toBe(1);
    expect(clock.skipped()).toBeGreaterThanOrEqual(4_000);
    expect(a.reports).toEqual([]);
  });

  it('the sign-in service refusing the token for rate: the action waits and is done, never failed', async () => {
    const clock = skipClock();
    const a = await world(clock);
    const [, , login] = LOGINS as [string, string, string];
    const actions = idp.actions.length;
    // The token this process keeps is dropped, so the action must buy one, and is refused once.
    const corp = idp.providers({ entra: ['hold.test'] }).corp as {
      loginUrl: string;
      tenantId: string;
      clientId: string;
      clientSecret: { secret: string };
    };
    const secret = idp.secrets[corp.clientSecret.secret] as string;
    forgetEntraToken({ ...corp, clientSecret: secret }, GRAPH_SCOPE);
    idp.stand.control.addFault({ provider: 'entra', endpoint: 'entraToken', status: 429, times: 1 });
    const first = await actOnAccounts(a.deps, {
      action: 'requirePasswordChange',
      logins: [login],
      by: 'cli:x',
      id: 'token-rate-1',
    });
    expect(first.results[0]?.outcome).toBeUndefined();
    // Parked past the run, if it was (the refusal named no time: 10 s): a pass when it is due.
    const record = await afterPark(a.deps, first, 11_000);
    expect(record?.status).toBe('done');
    expect(record?.progress[login]?.result).toEqual({ login, ok: true });
    expect(calls(login, actions)).toBe(1);
    expect(a.reports).toEqual([]);
  });

  it('Okta’s 429 (its X-Rate-Limit-Reset says when): waited out or parked, then done, with one call', async () => {
    const clock = skipClock();
    const a = await world(clock);
    const before = idp.actions.filter((x) => x.login === KIM).length;
    idp.stand.control.addFault({ provider: 'okta', path: '00ukim/lifecycle', status: 429, times: 1 });
    const request = { action: 'requirePasswordChange' as const, logins: [KIM], by: 'cli:x', id: 'okta-1' };
    const first = await actOnAccounts(a.deps, request);
    expect(first.results[0]?.outcome).toBeUndefined();
    // Parked past the run, if it was (Okta's window resets up to a minute on): a pass when it is due.
    const record = await afterPark(a.deps, first, 61_000);
    expect(record?.status).toBe('done');
    expect(record?.progress[KIM]?.result).toEqual({ login: KIM, ok: true });
    expect(idp.actions.filter((x) => x.login === KIM).length - before).toBe(1);
  });

  it('a wait past the run parks the action with its hold given back; a pass takes it up when due, not before', async () => {
    const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
    const a = await world(clock);
    const [first, second] = LOGINS as [string, string];
    const actions = idp.actions.length;
    const requests = idp.requests.length;
    refuseForRate(first, 120);
    const outcome = await actOnAccounts(
      a.deps,
      { action: 'requirePasswordChange', logins: [first, second], by: 'cli:x', id: 'park-1' },
      { deadline: clock.now() + 10_000 },
    );
    expect(outcome.open).toBe(true);
    expect(outcome.results[0]?.error).toContain('waiting for the provider');
    // The provider said its rate is spent: the other login of the action was not tried either.
    expect(requestsTo(second, requests)).toBe(0);
    const parked = await a.deps.actions.get('park-1');
    expect(parked?.holder).toBeUndefined();
    expect(parked?.progress[first]?.calls).toBe(0);
    // Not yet due: a pass takes nothing up.
    clock.advance(90_000);
    expect(await finishAccountActions(a.deps)).toBe(0);
    expect(requestsTo(first, requests)).toBe(1);
    clock.advance(31_000);
    expect(await finishAccountActions(a.deps)).toBe(1);
    expect(calls(first, actions)).toBe(1);
    expect(calls(second, actions)).toBe(1);
    const done = await a.deps.actions.get('park-1');
    expect(done?.status).toBe('done');
    expect(Object.values(done?.progress ?? {}).map((p) => p.result?.ok)).toEqual([true, true]);
  });

  it('refused for rate for an hour: a failure, not unknown, reported to ops and audited', async () => {
    const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
    const a = await world(clock);
    const login = LOGINS[2] as string;
    const actions = idp.actions.length;
    refuseForRate(login, 600, 2);
    const first = await actOnAccounts(a.deps, {
      action: 'requirePasswordChange',
      logins: [login],
      by: 'cli:x',
      id: 'hour-1',
    });
    expect(first.open).toBe(true);
    clock.advance(RATE_GIVE_UP_MS);
    await finishAccountActions(a.deps);
    const record = await a.deps.actions.get('hour-1');
    expect(record?.status).toBe('done');
    const result = record?.progress[login]?.result;
    expect(result).toMatchObject({ ok: false, rateLimited: true });
    expect(result?.outcome).toBeUndefined();
    expect(calls(login, actions)).toBe(0);
    expect(a.reports).toEqual([expect.stringContaining('identity action hour-1: failed')]);
    const trail = await new ActionStore(a.io).auditTrail();
    expect(trail.find((e) => e.id === 'hour-1')?.results).toEqual([
      { uid: login, ok: false, error: expect.stringContaining('rate') },
    ]);
  });
});
