/**
 * The identity providers' own secret (lib/identity/secrets.ts), as a deployment upgrades to it: the
 * credentials worker runs for real (functions/worker.ts, the emulator, dynalite) with SECRET_ID and
 * IDENTITY_SECRET_ID read from Secrets Manager's stand-in over its JSON protocol, and looks its
 * logins up at the Okta stand-in. Unmoved (the identity secret empty, the token still in the main
 * one): lookups go on with that token, and a warning names the move and the secret's name, never
 * its value. Moved: the token comes from the identity secret, the main one holds none, no warning.
 * An identity secret that cannot be read stops the start only when a credential is nowhere else.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { ConfigError } from '../../lib/errors.ts';
import { identitySecretNames, identitySecrets, providerSecretRefs } from '../../lib/identity/secrets.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from '../functions/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import {
  type IdentityProviders,
  identityProviders,
  STAND_IN_SECRET_NAMES,
} from '../helpers/identity-providers.ts';
import { type SecretsManagerStandIn, secretsManager } from '../helpers/secrets-manager.ts';

const emu = useEmulator({ eventsPerTenant: 5, credentials: 20 });
const db = useDynalite();
let idp: IdentityProviders;

beforeAll(async () => {
  idp = await identityProviders();
});
afterAll(() => idp.close());

const TOKEN_NAME = STAND_IN_SECRET_NAMES.okta;

/** One credentials worker's cold start and one stream, with the two secrets as given; its log lines. */
async function runWorker(sm: SecretsManagerStandIn): Promise<{ lines: string[]; failures: unknown[] }> {
  const vars = await lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table: await db.table(),
    config: {
      sources: { credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 20 } },
      destinations: { local: { type: 'console' } },
      routes: [{ name: 'all', to: ['local'] }],
      identity: { providers: idp.providers({ okta: ['acme.test'] }) },
    },
    extra: { ...sm.env, SECRET_ID: 'main', IDENTITY_SECRET_ID: 'identity', LOG_LEVEL: 'warn' },
  });
  return withEnvironment(vars, async () => {
    const handler = await createWorkerHandler('credentials', { emfWrite: () => {} });
    const record = sqsRecord({ kind: 'credentials', stream: 'credentials:acme.test' });
    const { batchItemFailures } = await handler({ Records: [record] }, context());
    // withEnvironment keeps the log off the test's output: its stand-in for stderr has the lines.
    const lines = vi.mocked(process.stderr.write).mock.calls.map(([line]) => String(line));
    return { lines, failures: batchItemFailures };
  });
}

const oktaLookups = () => idp.requests.filter((r) => r.provider === 'okta');

/** Okta was asked since `before` (an index into the stand-in's log), each time with its token. */
function expectOktaAskedWithToken(before: number) {
  const lookups = oktaLookups().slice(before);
  expect(lookups.length).toBeGreaterThan(0);
  expect(new Set(lookups.map((r) => r.headers.authorization))).toEqual(new Set([`SSWS ${idp.okta.token}`]));
}

describe('the identity secret, as a deployment upgrades to it', () => {
  it('unmoved: the token is still read from the main secret, lookups go on, and a warning names the move', async () => {
    const before = oktaLookups().length;
    const sm = await secretsManager({ main: { [TOKEN_NAME]: idp.okta.token }, identity: {} });
    const { lines, failures } = await runWorker(sm);
    expect(failures).toEqual([]);
    expect(sm.read).toEqual(['main', 'identity']);
    expectOktaAskedWithToken(before);
    const warnings = lines
      .filter((l) => l.includes('IDENTITY_SECRET_ID'))
      .map((l) => JSON.parse(l) as { level: string; message: string });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.level).toBe('warn');
    expect(warnings[0]?.message).toContain(`"${TOKEN_NAME}"`);
    expect(warnings[0]?.message).toContain('docs/deploy.md#moving-to-two-secrets');
    expect(lines.join('\n')).not.toContain(idp.okta.token);
  }, 30_000);

  it('moved: the token comes from the identity secret, the main one holds none, and nothing warns', async () => {
    const before = oktaLookups().length;
    const sm = await secretsManager({ main: {}, identity: { [TOKEN_NAME]: idp.okta.token } });
    const { lines, failures } = await runWorker(sm);
    expect(failures).toEqual([]);
    expect(sm.read).toEqual(['main', 'identity']);
    expectOktaAskedWithToken(before);
    expect(lines.filter((l) => l.includes('IDENTITY_SECRET_ID'))).toEqual([]);
    expect(lines.join('\n')).not.toContain(idp.okta.token);
  }, 30_000);
});

describe('identitySecrets', () => {
  const config = {
    identity: { providers: { shop: { type: 'okta', token: { secret: 'shopToken' } } } },
    tenants: [
      { identity: { providers: { corp: { type: 'entra', clientSecret: { secret: 'corpSecret' } } } } },
      {},
    ],
  };
  const unreadable = async (id: string): Promise<string> => {
    throw Object.assign(new Error(`Secrets Manager can't find ${id}.`), {
      name: 'ResourceNotFoundException',
    });
  };

  it("names each provider's secret by its path, and the identity secret's names once each", () => {
    expect(providerSecretRefs(config)).toEqual([
      { path: 'identity.providers.shop.token', name: 'shopToken' },
      { path: 'tenants[0].identity.providers.corp.clientSecret', name: 'corpSecret' },
    ]);
    expect(identitySecretNames(config)).toEqual(['corpSecret', 'shopToken']);
  });

  it('without IDENTITY_SECRET_ID, the main secret as it is, and nothing read', async () => {
    const main = { shopToken: 'a', corpSecret: 'b' };
    const fetchSecret = vi.fn(unreadable);
    expect(await identitySecrets({}, main, config, () => {}, { fetchSecret })).toBe(main);
    expect(fetchSecret).not.toHaveBeenCalled();
  });

  it('an unreadable identity secret: the main one stands in when it holds every credential, with a warning', async () => {
    const warnings: string[] = [];
    const main = { shopToken: 'a', corpSecret: 'b', other: 'c' };
    const out = await identitySecrets({ identitySecretId: 'gone' }, main, config, (w) => warnings.push(w), {
      fetchSecret: unreadable,
    });
    expect(out).toEqual(main);
    expect(warnings[0]).toMatch(/^IDENTITY_SECRET_ID gone cannot be read \(ResourceNotFoundException:/);
    expect(warnings.slice(1).map((w) => w.match(/"(\w+)"/)?.[1])).toEqual(['corpSecret', 'shopToken']);
  });

  it('an unreadable identity secret stops the start when a credential is nowhere else', async () => {
    await expect(
      identitySecrets({ identitySecretId: 'gone' }, { shopToken: 'a' }, config, () => {}, {
        fetchSecret: unreadable,
      }),
    ).rejects.toThrow(ConfigError);
  });

  it('the identity secret wins a name both hold, and warns of none', async () => {
    const warnings: string[] = [];
    const out = await identitySecrets(
      { identitySecretId: 'identity' },
      { shopToken: 'old', corpSecret: 'old' },
      config,
      (w) => warnings.push(w),
      { fetchSecret: async () => JSON.stringify({ shopToken: 'new', corpSecret: 'new' }) },
    );
    expect(out).toEqual({ shopToken: 'new', corpSecret: 'new' });
    expect(warnings).toEqual([]);
  });
});
