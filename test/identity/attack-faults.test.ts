/**
 * Account actions attacked as an unlucky operator would meet them (section 12, "Once, and honest
 * when unsure" and "Under load and faults"), against real dynalite and the providers' stand-in
 * over HTTP: a provider answering 503 to a call that is not safe to repeat (an answer unknown, not
 * a failure); a call first left unanswered, taken up again just inside the 5 minutes, and then
 * refused for rate (no call after the 5 minutes); a process that dies after each of its writes in
 * turn, while an automatic response fails (a later pass finishes it, the account's marker freed, the
 * provider asked at most twice) and while a password change succeeds (no call repeated whose answer
 * was written, audited once); two workers deciding at once after a failed automatic response (one
 * new round); and no provider secret in what any of them logged, reported or audited.
 *
 * Longer than 300 lines: the attacks share one world, and the last looks at what all of them said.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import {
  type AccountDeps,
  accountStore,
  actOnAccounts,
  finishAccountAction,
  finishAccountActions,
  RESUME_WINDOW_MS,
  recordAccountAction,
} from '../../lib/identity/act.ts';
import { AutoResponse } from '../../lib/identity/auto.ts';
import { memoryLogger } from '../../lib/log.ts';
import { marshall, unmarshall } from '../../lib/state/marshall.ts';
import { GetItemCommand } from '../../lib/state/sdk.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { accountDeps, actionsConfig, keepAtRisk } from '../helpers/account-actions.ts';
import { fakeClock } from '../helpers/clock.ts';
import { Crash, dyingClient } from '../helpers/dying-client.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const db = useDynalite();
let idp: IdentityProviders;
const LOGINS = [
  'gone@attack.test',
  'late@attack.test',
  ...Array.from({ length: 16 }, (_, i) => `crash${i}@attack.test`),
  ...Array.from({ length: 32 }, (_, i) => `pw${i}@attack.test`),
];
const idOf = (login: string) => `u-${login.split('@')[0]}`;
/** What every process of these attacks logged, reported and audited, for the last test's look. */
const logs = memoryLogger();
const reported: string[] = [];
const tables = new Set<string>();

beforeAll(async () => {
  idp = await identityProviders({
    entra: { users: LOGINS.map((l) => ({ userPrincipalName: l, id: idOf(l) })) },
  });
  idp.stand.entra.roles = [...ALL_ENTRA_ROLES];
});
afterAll(() => idp.close());

/** A table client whose process dies right after its `after`-th write (0: never). */
const dying = (after: number) => dyingClient(db.client, after);

async function world(clock = fakeClock(), table?: string, client: DynamoDBClient = db.client) {
  const tableName = table ?? (await db.table());
  const io = { client, tableName, clock };
  const reports: string[] = [];
  tables.add(tableName);
  const { deps } = accountDeps(idp, io, actionsConfig(idp, { entra: ['attack.test'] }), {
    logger: logs,
    report: async (title, text) => {
      reports.push(title);
      reported.push(`${title}\n${text}`);
    },
    auto: new AutoResponse(io),
    callTimeoutMs: 1_000,
  });
  if (!table) await keepAtRisk(deps.store, LOGINS, (login) => ({ provider: 'corp', userId: idOf(login) }));
  return { deps, reports, clock, table: tableName, io };
}

/** An operator's password change on one login, from the CLI. */
const changePassword = (deps: AccountDeps, login: string) =>
  actOnAccounts(deps, { action: 'requirePasswordChange', logins: [login], by: 'cli:x' });

const actedOn = (login: string, since = 0) =>
  idp.requests.slice(since).filter((r) => r.path.includes(idOf(login)) && r.method !== 'GET');

describe('account actions under attack', () => {
  it('a 503 to a call not safe to repeat is an answer unknown: once more within 5 minutes, then outcome unknown, never "not done"', async () => {
    const w = await world();
    const login = 'gone@attack.test';
    idp.stand.control.addFault({ provider: 'entra', path: idOf(login), status: 503, times: 2 });
    const since = idp.requests.length;
    const first = await changePassword(w.deps, login);
    // Graph may have forced the change before its gateway answered 503: not a failure.
    expect(first.open).toBe(true);
    expect(first.results[0]).toMatchObject({ ok: false, error: expect.stringMatching(/under way/) });
    w.clock.advance(61_000);
    await finishAccountActions(w.deps);
    w.clock.advance(61_000);
    await finishAccountActions(w.deps);
    const record = await w.deps.actions.get(first.id);
    expect(record?.status).toBe('done');
    expect(record?.progress[login]?.result).toMatchObject({ ok: false, outcome: 'unknown' });
    expect(actedOn(login, since)).toHaveLength(2);
    expect(w.reports).toEqual([expect.stringMatching(/outcome unknown$/)]);
  });

  it('a call left unanswered, taken up inside the 5 minutes and refused for rate: no call after the 5 minutes', async () => {
    const w = await world();
    const login = 'late@attack.test';
    idp.stand.control.addFault({ provider: 'entra', path: idOf(login), hang: true, times: 1 });
    const since = idp.requests.length;
    const first = await changePassword(w.deps, login);
    expect(first.open).toBe(true);
    // The next pass comes 4 min 58 s after the first call; Graph asks it to wait 10 s.
    idp.stand.control.addFault({
      provider: 'entra',
      path: idOf(login),
      status: 429,
      retryAfter: 1,
      times: 1,
    });
    w.clock.advance(RESUME_WINDOW_MS - 2_000);
    const clock = w.clock;
    // The wait for Graph's turn moves the clock as a real wait would: 10 s, past the 5 minutes.
    const deps = {
      ...w.deps,
      clock: {
        now: clock.now,
        sleep: async (ms: number) => {
          clock.advance(Math.max(ms, 10_000));
        },
      },
    };
    await finishAccountActions(deps);
    const record = await w.deps.actions.get(first.id);
    expect(record?.progress[login]?.result).toMatchObject({ ok: false, outcome: 'unknown' });
    // The first call (no answer) and the refused one: none made after the 5 minutes.
    expect(actedOn(login, since)).toHaveLength(2);
    expect(idp.actions.filter((a) => a.login === login)).toEqual([]);
  });

  it('an automatic response that fails, its process dying after each of its writes in turn: a later pass finishes it, its account freed, the provider asked at most twice', async () => {
    let after = 1;
    const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
    const { table } = await world(clock);
    for (const login of LOGINS.filter((l) => l.startsWith('crash'))) {
      const w = await world(clock, table);
      const account = idOf(login);
      // Graph refuses for a missing permission: a failure for good, which frees the account.
      idp.stand.control.addFault({
        provider: 'entra',
        path: `${account}/revokeSignInSessions`,
        status: 403,
        times: 5,
      });
      const auto = new AutoResponse(w.io);
      const note = await auto.decide(
        'top',
        { atRisk: ['revokeSessions'], maxPerHour: 100 },
        { provider: 'corp', verdict: 'at_risk', userId: account, leakDate: '2026-11-20T00:00:00Z' },
        login,
        ['revokeSessions'],
        async ({ id, actions }) => {
          for (const action of actions)
            await recordAccountAction(w.deps, { id: `${id}~${action}`, action, logins: [login], by: 'auto' });
        },
      );
      const id = `${(note as { id: string }).id}~revokeSessions`;
      const since = idp.requests.length;
      const crashing = dying(after);
      const doomed = await world(clock, w.table, crashing.client);
      await finishAccountAction(doomed.deps, id).catch((error) => {
        if (!(error instanceof Crash)) throw error;
      });
      const crashed = crashing.seen.length === after;
      // A later pass, once the dead holder's hold has lapsed.
      let record = await w.deps.actions.get(id);
      for (let pass = 0; pass < 3 && record?.status !== 'done'; pass++) {
        clock.advance(61_000);
        await finishAccountActions(w.deps);
        record = await w.deps.actions.get(id);
      }
      expect(record?.status, `died after write ${after}`).toBe('done');
      expect(record?.progress[login]?.result, `died after write ${after}`).toMatchObject({
        ok: false,
        refused: true,
      });
      const marker = await db.client.send(
        new GetItemCommand({
          TableName: w.table,
          Key: marshall({ pk: `idauto#top#corp#${account}`, sk: 'idauto' }),
        }),
      );
      expect(unmarshall(marker.Item ?? {}), `died after write ${after}`).toMatchObject({ failed: true });
      expect(actedOn(login, since).length, `died after write ${after}`).toBeLessThanOrEqual(2);
      if (!crashed) break;
      after += 1;
    }
    // The crash came after every write of the action's work, one at a time.
    expect(after).toBeGreaterThan(4);
  });

  it('a password change on two logins, its process dying after each of its writes in turn: a later pass finishes it, no call repeated whose answer was written, none made more than twice', async () => {
    const clock = fakeClock(Date.parse('2026-11-27T12:00:00Z'));
    const { table, deps } = await world(clock);
    const changes = (login: string) =>
      idp.actions.filter((a) => a.action === 'requirePasswordChange' && a.login === login).length;
    let after = 1;
    for (let n = 0; n < 16; n++, after++) {
      const logins = [`pw${2 * n}@attack.test`, `pw${2 * n + 1}@attack.test`];
      const crashing = dying(after);
      const doomed = await world(clock, table, crashing.client);
      const id = `crash-${after}`;
      await actOnAccounts(doomed.deps, { id, action: 'requirePasswordChange', logins, by: 'cli:x' }).catch(
        (error) => {
          if (!(error instanceof Crash)) throw error;
        },
      );
      const crashed = crashing.seen.length === after;
      const left = await deps.actions.get(id);
      const answered = logins.filter((l) => left?.progress[l]?.result);
      let record = left;
      for (let pass = 0; pass < 3 && record?.status !== 'done'; pass++) {
        clock.advance(61_000);
        await finishAccountActions(deps);
        record = await deps.actions.get(id);
      }
      const at = `died after write ${after}`;
      if (!record) {
        // Died writing the record itself: nothing was recorded, so nothing may have been called.
        expect(logins.map(changes), at).toEqual([0, 0]);
        continue;
      }
      expect(record.status, at).toBe('done');
      expect(
        logins.map((l) => record?.progress[l]?.result?.ok),
        at,
      ).toEqual([true, true]);
      for (const login of logins) {
        if (answered.includes(login)) expect(changes(login), `${at}: ${login}`).toBe(1);
        else expect(changes(login), `${at}: ${login}`).toBeLessThanOrEqual(2);
      }
      const trail = await deps.actions.auditTrail();
      expect(trail.filter((e) => e.id === id).length, at).toBe(1);
      if (!crashed) break;
    }
    expect(after).toBeGreaterThan(6);
  });

  it('after a failed response, two workers at once deciding a later leak of the account: one new round, once', async () => {
    const clock = fakeClock(Date.parse('2026-11-28T12:00:00Z'));
    const { table } = await world(clock);
    const auto = { atRisk: ['revokeSessions' as const], maxPerHour: 10 };
    const verdict = {
      provider: 'corp',
      verdict: 'at_risk' as const,
      userId: 'u-again',
      leakDate: '2026-11-20T00:00:00Z',
    };
    const workers = [
      { client: createDynamoClient({ endpoint: db.endpoint }), tableName: table, clock },
      { client: createDynamoClient({ endpoint: db.endpoint }), tableName: table, clock },
    ];
    try {
      const recorded: string[] = [];
      const decide = (io: (typeof workers)[number]) =>
        new AutoResponse(io).decide(
          'top',
          auto,
          verdict,
          'again@attack.test',
          ['revokeSessions'],
          async ({ id }) => {
            recorded.push(id);
          },
        );
      const first = await decide(workers[0] as (typeof workers)[number]);
      await new AutoResponse(workers[0] as (typeof workers)[number]).failed(
        'top',
        'corp',
        'u-again',
        `${(first as { id: string }).id}~revokeSessions`,
      );
      const again = await Promise.all(workers.map(decide));
      const taken = again.filter((n) => n && 'actions' in n);
      expect(taken).toEqual([{ actions: ['revokeSessions'], id: expect.stringMatching(/-r1$/) }]);
      // A third leak, the round taken: nothing more.
      expect(await decide(workers[1] as (typeof workers)[number])).toBeUndefined();
    } finally {
      for (const w of workers) w.client.destroy();
    }
  });

  it('no provider secret in any log line, report to ops or audit entry of the attacks above', async () => {
    const trails = await Promise.all(
      [...tables].map((table) =>
        accountStore({ client: db.client, tableName: table, clock: fakeClock() }).auditTrail(),
      ),
    );
    const said = [...logs.lines, ...reported, JSON.stringify(trails)].join('\n');
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const secret of [idp.entra.clientSecret, idp.okta.token]) expect(said).not.toContain(secret);
  });
});
