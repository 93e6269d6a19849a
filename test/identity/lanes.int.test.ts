/**
 * One rate for the deployment (section 12, issue 46 defect 4): every provider request of every
 * run takes its turn of the provider's lane in the table (lib/identity/lanes.ts over the shared
 * governor), and a 429 or Okta's spent rate pauses the lane for every run until the time the
 * provider named. Two runs here are two identityRun()s (what the runtime builds) with a DynamoDB
 * client each, as two processes have, on one dynalite table, against the stand-ins over HTTP; the
 * stand-in's own log says what reached it and when. Real time: the lanes are shared across
 * processes, so no clock can be injected into them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliverDeps } from '../../lib/deliver/types.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import type { ProviderClient } from '../../lib/identity/client.ts';
import { identityRun } from '../../lib/identity/index.ts';
import { identitySchema } from '../../lib/identity/schema.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import type { AlertsConfig } from '../../lib/rules/config.ts';
import { createDynamoClient } from '../../lib/state/table.ts';
import { mostInASecond } from '../bench/stats.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { leakOf, verdictOf } from '../helpers/identity-lookup.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';

const db = useDynalite();
let idp: IdentityProviders;
const LOGINS = Array.from({ length: 12 }, (_, i) => `u${i}@acme.com`);

beforeAll(async () => {
  idp = await identityProviders({
    entra: {
      roles: [...ALL_ENTRA_ROLES],
      users: LOGINS.map((userPrincipalName) => ({
        userPrincipalName,
        lastPasswordChangeDateTime: '2026-01-01T00:00:00Z',
      })),
    },
    // A window of a second: a spent rate comes back within the test's time.
    okta: {
      users: [{ login: 'a@acme.io' }, { login: 'b@acme.io' }],
      rateLimit: { limit: 600, windowSeconds: 1 },
    },
  });
});
afterAll(() => idp.close());

/** Two runs on one new table, each with its own DynamoDB client; the Entra lane at `rate`. */
async function twoRuns(rate = 5) {
  const table = await db.table();
  const providers = idp.providers({ entra: ['acme.com'], okta: ['acme.io'] }) as Record<string, object>;
  const identity = identitySchema.parse({
    providers: { ...providers, corp: { ...providers.corp, requestsPerSecond: rate } },
  });
  const clients: { destroy(): void }[] = [];
  const run = () => {
    const client = createDynamoClient({ endpoint: db.endpoint });
    clients.push(client);
    const problems: string[] = [];
    const lookups = identityRun(
      {
        config: { identity } as AlertsConfig,
        secrets: idp.secrets,
        io: { client, tableName: table, clock: fakeClock(Date.now()) },
        logger: memoryLogger(),
        metrics: new MemoryMetrics(),
        deliver: {} as DeliverDeps,
        auto: false,
      },
      problems,
    );
    expect(problems).toEqual([]);
    const [corp, shop] = lookups.deps.providers.get('top') as ProviderClient[];
    /** The verdicts of one new leak of each login, in one cycle. */
    const verdicts = async (logins: string[], seconds = 30) => {
      const items = logins.map((login, i) => leakOf(login, nextId++ * 100 + i));
      const out = await lookups
        .cycle()
        .verdicts({ exclusive: true }, items, { baselining: false, deadline: Date.now() + seconds * 1000 });
      return out.map(verdictOf);
    };
    return { verdicts, corp: corp as ProviderClient, shop: shop as ProviderClient };
  };
  return {
    one: run(),
    two: run(),
    close: () => {
      for (const c of clients) c.destroy();
    },
  };
}

let nextId = 1;
/** When the stand-in received each request of `endpoint` since `from` (an index into its log). */
const arrivals = (from: number, endpoint: string) =>
  idp.requests
    .slice(from)
    .filter((r) => r.endpoint === endpoint)
    .map((r) => ({ at: Date.parse(r.at), status: r.status }));

describe('the providers’ rate, one for the deployment', () => {
  it('two runs looking up at once never send Graph more than the lane’s rate in any second, and none is refused', async () => {
    const runs = await twoRuns(10);
    idp.stand.control.ceiling = { entra: 10 };
    const from = idp.requests.length;
    try {
      const [a, b] = await Promise.all([
        runs.one.verdicts(LOGINS.slice(0, 6)),
        runs.two.verdicts(LOGINS.slice(6)),
      ]);
      expect([...a, ...b].every((v) => v === 'at_risk')).toBe(true);
    } finally {
      idp.stand.control.ceiling = {};
      runs.close();
    }
    const got = arrivals(from, 'graphUser');
    expect(got).toHaveLength(12);
    expect(got.filter((r) => r.status === 429)).toHaveLength(0);
    expect(mostInASecond(got.map((r) => r.at))).toBeLessThanOrEqual(10);
  });

  it('a 429 to one run pauses the other run’s lookups until the time Graph named; the refused login is unknown', async () => {
    const runs = await twoRuns();
    const from = idp.requests.length;
    try {
      idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', status: 429, retryAfter: 1 });
      expect(await runs.one.verdicts(['u0@acme.com'])).toEqual(['unknown/unavailable']);
      // The other run waits for the pause (within its cycle's time), then gets its answer.
      expect(await runs.two.verdicts(['u1@acme.com'])).toEqual(['at_risk']);
    } finally {
      runs.close();
    }
    const [refused, next] = arrivals(from, 'graphUser');
    expect(refused?.status).toBe(429);
    expect(next?.status).toBe(200);
    expect((next?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it('Okta’s X-Rate-Limit-Remaining: 0 pauses every run until X-Rate-Limit-Reset: the next lookup is not refused', async () => {
    const runs = await twoRuns();
    const from = idp.requests.length;
    try {
      idp.stand.okta.setRateLimit({ remaining: 1 });
      const reset = Number(idp.stand.okta.rateHeaders()['X-Rate-Limit-Reset']) * 1000;
      expect(await runs.one.verdicts(['a@acme.io'])).toEqual(['at_risk']);
      expect(await runs.two.verdicts(['b@acme.io'])).toEqual(['at_risk']);
      const [first, second] = arrivals(from, 'oktaUser');
      expect([first?.status, second?.status]).toEqual([200, 200]);
      expect(second?.at).toBeGreaterThanOrEqual(reset);
    } finally {
      runs.close();
    }
  });

  it('a lookup whose turn cannot come within the cycle’s lookup time is unknown at once, sending nothing', async () => {
    const runs = await twoRuns();
    try {
      idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', status: 429, retryAfter: 30 });
      expect(await runs.one.verdicts(['u2@acme.com'])).toEqual(['unknown/unavailable']);
      const from = idp.requests.length;
      const started = Date.now();
      expect(await runs.two.verdicts(['u3@acme.com', 'u4@acme.com'], 5)).toEqual([
        'unknown/unavailable',
        'unknown/unavailable',
      ]);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(arrivals(from, 'graphUser')).toHaveLength(0);
    } finally {
      runs.close();
    }
  });

  it('an action whose turn would come past its deadline is rateLimited, with when, and the provider is not called', async () => {
    const runs = await twoRuns();
    const user = [...idp.stand.entra.users.values()].find((u) => u.userPrincipalName === 'u5@acme.com');
    try {
      idp.stand.control.addFault({ provider: 'entra', endpoint: 'graphUser', status: 429, retryAfter: 30 });
      await runs.one.verdicts(['u5@acme.com']);
      const from = idp.requests.length;
      const ctx = { fetch, now: () => Date.now(), signal: AbortSignal.timeout(10_000) };
      const account = { id: user?.id as string, login: 'u5@acme.com' };
      const answer = await runs.two.corp.act('revokeSessions', account, {
        ...ctx,
        deadline: Date.now() + 1_000,
      });
      expect(answer).toMatchObject({ rateLimited: expect.stringContaining('nothing sent') });
      const retryAt = (answer as { retryAt: number }).retryAt;
      expect(retryAt - Date.now()).toBeGreaterThan(25_000);
      // Without a deadline of its own, an action waits ACT_TURN_MS at most: the same.
      expect(await runs.two.corp.act('revokeSessions', account, ctx)).toHaveProperty('rateLimited');
      expect(idp.requests.slice(from)).toHaveLength(0);
      expect(idp.actions.filter((a) => a.login === 'u5@acme.com')).toHaveLength(0);
    } finally {
      runs.close();
    }
  });

  it('Identity Protection: two runs confirming at once take one turn a second between them, and none is refused', async () => {
    const runs = await twoRuns();
    const ids = ['u6@acme.com', 'u7@acme.com', 'u8@acme.com'].map((login) => ({
      login,
      id: [...idp.stand.entra.users.values()].find((u) => u.userPrincipalName === login)?.id as string,
    }));
    const ctx = () => ({ fetch, now: () => Date.now(), signal: AbortSignal.timeout(10_000) });
    const from = idp.requests.length;
    try {
      const answers = await Promise.all([
        runs.one.corp.act('confirmCompromised', ids[0] as { id: string; login: string }, ctx()),
        runs.two.corp.act('confirmCompromised', ids[1] as { id: string; login: string }, ctx()),
        runs.two.corp.act('confirmCompromised', ids[2] as { id: string; login: string }, ctx()),
      ]);
      expect(answers).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    } finally {
      runs.close();
    }
    const got = arrivals(from, 'graphConfirmCompromised');
    expect(got.map((r) => r.status)).toEqual([204, 204, 204]);
    expect(mostInASecond(got.map((r) => r.at))).toBe(1);
  });
});
