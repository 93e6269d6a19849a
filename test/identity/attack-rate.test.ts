/**
 * Two processes acting on Okta accounts at once against Okta's own window of requests (the
 * stand-in's `X-Rate-Limit-*`, 3 a second), each with its own table client and its own lanes on one
 * dynalite table, as two workers are (section 12, "One rate for the deployment" and "A refusal for
 * rate is not a failure", attacked): every account is acted on once, none fails, none is `outcome
 * unknown`, and what Okta refused for rate was asked again at its turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/clock.ts';
import { type AccountDeps, actOnAccounts } from '../../lib/identity/act.ts';
import { IdentityLanes } from '../../lib/identity/lanes.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { accountDeps, actionsConfig, keepAtRisk } from '../helpers/account-actions.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const db = useDynalite();
let idp: IdentityProviders;
const LOGINS = Array.from({ length: 10 }, (_, i) => `kim${i}@rate.io`);
const idOf = (login: string) => `00u${login.split('@')[0]}`;

beforeAll(async () => {
  idp = await identityProviders({ okta: { users: LOGINS.map((login) => ({ login, id: idOf(login) })) } });
});
afterAll(() => idp.close());

/** One process: its own table client, lanes and provider clients. */
function process(table: string): AccountDeps & { close(): void } {
  const client = createDynamoClient({ endpoint: db.endpoint });
  const { deps } = accountDeps(
    idp,
    { client, tableName: table, clock: systemClock },
    // The lanes at Okta's own window, as a deployment sets `requestsPerSecond` to its org's limit.
    actionsConfig(idp, { okta: ['rate.io'] }, 3),
    {
      lanes: new IdentityLanes(client, table, systemClock),
    },
  );
  return { ...deps, close: () => client.destroy() };
}

describe('two processes acting on Okta accounts at once', () => {
  it('within Okta’s window of 3 a second: each account once, none failed, none unknown', async () => {
    const table = await db.table();
    await keepAtRisk(
      new IdentityStore({ client: db.client, tableName: table, clock: systemClock }),
      LOGINS,
      (login) => ({ provider: 'shop', userId: idOf(login) }),
      { leakDate: '2026-11-20' },
    );
    idp.stand.okta.setRateLimit({ limit: 3, windowSeconds: 1 });
    const [a, b] = [process(table), process(table)];
    try {
      const outcomes = await Promise.all([
        actOnAccounts(a, { action: 'revokeSessions', logins: LOGINS.slice(0, 5), by: 'cli:a' }),
        actOnAccounts(b, { action: 'revokeSessions', logins: LOGINS.slice(5), by: 'cli:b' }),
      ]);
      const results = outcomes.flatMap((o) => o.results);
      expect(results.filter((r) => !r.ok)).toEqual([]);
      expect(outcomes.map((o) => o.open)).toEqual([false, false]);
      const revoked = idp.actions.filter((x) => x.action === 'revokeSessions').map((x) => x.login);
      expect(revoked.sort()).toEqual([...LOGINS].sort());
      // Okta's refusals for rate, if any came before the shared pause, were each asked again.
      const sent = idp.requests.filter((r) => r.method === 'DELETE');
      const refused = sent.filter((r) => r.status === 429).length;
      expect(sent.length).toBe(LOGINS.length + refused);
    } finally {
      a.close();
      b.close();
      idp.stand.okta.setRateLimit({ limit: 1000, windowSeconds: 60 });
    }
  });
});
