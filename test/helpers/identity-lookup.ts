/**
 * Looking a login up against the providers' stand-in, for the identity tests: the real Entra and
 * Okta clients over HTTP (`standInClients`), a leak of a login as the upstream gives it
 * (`leakOf`), the verdict an item was given as one word (`verdictOf`), and a lookup step on a new
 * dynalite table with an injected clock (`lookupWorld`), so a test sets the stand-in's faults and
 * reads the verdict.
 *
 * @example
 * const standIn = useStandInClients({ okta: { users: [{ login: 'kim@acme.io' }] } });
 * const w = await lookupWorld(db, [standIn.entra, standIn.okta]);
 * expect(await w.verdict('kim@acme.io')).toBe('at_risk');
 */
import { afterAll, beforeAll } from 'vitest';
import type { ProviderClient } from '../../lib/identity/client.ts';
import { entraClient } from '../../lib/identity/entra.ts';
import { IdentityLookups } from '../../lib/identity/lookup.ts';
import { oktaClient } from '../../lib/identity/okta.ts';
import type { EntraConfig, OktaConfig } from '../../lib/identity/schema.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import type { IdentityVerdict } from '../../lib/identity/words.ts';
import { memoryLogger } from '../../lib/log.ts';
import { MemoryMetrics } from '../../lib/metrics.ts';
import type { Credential } from '../../lib/upstream/schemas.ts';
import { fakeClock } from './clock.ts';
import type { DynamoFixture } from './dynamo.ts';
import { type IdentityProviders, identityProviders } from './identity-providers.ts';

type StandInOptions = Parameters<typeof identityProviders>[0];

/** The stand-in, and an Entra client (`corp`, acme.com) and an Okta one (`shop`, acme.io) of it. */
export async function standInClients(
  options: StandInOptions,
): Promise<{ idp: IdentityProviders; entra: ProviderClient; okta: ProviderClient }> {
  const idp = await identityProviders(options);
  const providers = idp.providers({ entra: ['acme.com'], okta: ['acme.io'] }) as {
    corp: EntraConfig;
    shop: OktaConfig;
  };
  return {
    idp,
    entra: entraClient('corp', providers.corp, idp.entra.clientSecret),
    okta: oktaClient('shop', providers.shop, idp.okta.token),
  };
}

/**
 * `standInClients` for a test file: started before its tests, closed after them. The fields are
 * there once the tests run.
 */
export function useStandInClients(options: StandInOptions) {
  const clients = {} as Awaited<ReturnType<typeof standInClients>>;
  beforeAll(async () => {
    Object.assign(clients, await standInClients(options));
  });
  afterAll(() => clients.idp?.close());
  return clients;
}

/** A credential of `login`, leaked on 20 November 2026, with the id given. */
export function leakOf(login: string, id: number): Credential {
  return {
    id,
    identity_name: login,
    domain: login.split('@')[1],
    hash: 'S*******!',
    imported_at: '2026-11-25T10:00:00+00:00',
    source_id: 'src',
    source: { id: 'src', name: 'A leak', breached_at: '2026-11-20T00:00:00Z' },
  } as Credential;
}

/** The verdict the lookup step put on `item`: `verdict` or `verdict/reason`, `none` if none. */
export function verdictOf(item: unknown): string {
  const v = (item as { _identity?: IdentityVerdict })._identity;
  return v ? `${v.verdict}${v.reason ? `/${v.reason}` : ''}` : 'none';
}

let nextId = 1;

/**
 * A lookup step on a new table of `db` with a fake clock at 2026-11-26 12:00, asking `clients`
 * for the top scope. `verdict(login)` is the verdict of one new leak of `login` in a new cycle of
 * a new run (what is kept in the table stays, as between runs).
 */
export async function lookupWorld(db: DynamoFixture, clients: ProviderClient[]) {
  const clock = fakeClock(Date.parse('2026-11-26T12:00:00Z'));
  const store = new IdentityStore({ client: db.client, tableName: await db.table(), clock });
  const verdict = async (login: string) => {
    const [item] = await new IdentityLookups({
      store,
      providers: new Map([['top', clients]]),
      fetch,
      now: () => Date.now(),
      logger: memoryLogger(),
      metrics: new MemoryMetrics(),
      refused: async () => {},
      accepted: async () => {},
    })
      .cycle()
      .verdicts({ exclusive: true }, [leakOf(login, nextId++)], {
        baselining: false,
        deadline: Date.now() + 60_000,
      });
    return verdictOf(item);
  };
  return { clock, verdict };
}
