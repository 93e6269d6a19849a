/**
 * A door's account action on a provider that is slow and never refuses for rate (section 12, "A
 * refusal for rate is not a failure", attacked from the other side): six logins, each answered in
 * 0.9 s by the stand-in over HTTP, through the providers' shared lanes on dynalite. The run's bound
 * on waiting for the provider's rate (15 s) is no bound on the action's time: every login is done in
 * the one call, none set aside as "waiting for the provider's rate" that the provider never asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { actOnAccounts } from '../../lib/identity/act.ts';
import { IdentityLanes } from '../../lib/identity/lanes.ts';
import { accountDeps, actionsConfig, keepAtRisk } from '../helpers/account-actions.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const db = useDynalite();
let idp: IdentityProviders;
const LOGINS = Array.from({ length: 6 }, (_, i) => `sam${i}@slow.io`);
const idOf = (login: string) => `00u${login.split('@')[0]}`;

beforeAll(async () => {
  idp = await identityProviders({ okta: { users: LOGINS.map((login) => ({ login, id: idOf(login) })) } });
});
afterAll(() => idp.close());

describe('a slow provider', () => {
  it('six logins answered in 0.9 s each: all done in the door’s one call, none parked for a rate nobody asked', async () => {
    const table = await db.table();
    const io = { client: db.client, tableName: table, clock: systemClock };
    const { deps } = accountDeps(idp, io, actionsConfig(idp, { okta: ['slow.io'] }), {
      lanes: new IdentityLanes(db.client, table, systemClock),
    });
    await keepAtRisk(deps.store, LOGINS, (login) => ({ provider: 'shop', userId: idOf(login) }), {
      leakDate: '2026-11-20',
    });
    for (const login of LOGINS)
      idp.stand.control.addFault({ provider: 'okta', path: `${idOf(login)}/sessions`, delayMs: 900 });
    const outcome = await actOnAccounts(deps, { action: 'revokeSessions', logins: LOGINS, by: 'cli:x' });
    expect(outcome.results.filter((r) => !r.ok)).toEqual([]);
    expect(outcome.open).toBe(false);
    expect(idp.actions.map((a) => a.login).sort()).toEqual([...LOGINS].sort());
    expect(idp.requests.filter((r) => r.status === 429)).toEqual([]);
  }, 15_000);
});
