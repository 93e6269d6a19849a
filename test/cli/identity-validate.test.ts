/**
 * `config validate` on a config with identity providers, through the real CLI (runCli in this process): the
 * warnings for overlapping providers and an unreachable identity route, an automatic action refused
 * by path (exit 2), and `--secrets`: each missing provider secret named, no value ever printed,
 * and which name belongs in which secret; with IDENTITY_SECRET_ID (Secrets Manager's stand-in), both
 * secrets read: a provider's name not yet moved, or still in the main secret, is a warning; in
 * neither, an error; a destination's name only in the identity secret is missing where the API reads.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run.ts';
import { captureIo } from '../helpers/io.ts';
import { secretsManager } from '../helpers/secrets-manager.ts';

const corp = {
  type: 'entra',
  tenantId: '11111111-2222-3333-4444-555555555555',
  clientId: 'app-1',
  clientSecret: { secret: 'corpSecret' },
  domains: ['acme.com'],
};
const shop = {
  type: 'okta',
  orgUrl: 'https://acme.okta.com',
  token: { secret: 'shopToken' },
  domains: ['acme.io', 'eu.acme.com'],
};
const config = {
  sources: { credentials: { domains: ['acme.com', 'acme.io', 'other.org'] } },
  destinations: { soc: { type: 'console' } },
  routes: [
    { name: 'live', match: { identity: ['at_risk'] }, to: ['soc'] },
    { name: 'elsewhere', match: { identity: ['at_risk'], domains: ['other.org'] }, to: ['soc'] },
  ],
  identity: { providers: { corp, shop } },
};

let dir: string;
const file = async (name: string, content: unknown) => {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
};

/**
 * The command in this process, with `env` as its environment. The AWS SDK reads its region, keys
 * and endpoint from process.env, as in a process of its own: those are set there for the run.
 */
async function cli(argv: string[], options: { env?: Record<string, string> } = {}) {
  const env = options.env ?? {};
  const aws = Object.keys(env).filter((name) => name.startsWith('AWS_'));
  const saved = new Map(aws.map((name) => [name, process.env[name]]));
  for (const name of aws) process.env[name] = env[name];
  try {
    const io = captureIo(env);
    const code = await runCli(argv, io);
    return { code, out: io.out, err: io.err };
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-identity-validate-'));
});

describe('config validate with identity', () => {
  it('warns of overlapping providers and a route no provider reaches, and counts the providers', async () => {
    const r = await cli(['config', 'validate', await file('ok.json', config)]);
    expect(r.code).toBe(0);
    expect(r.out).toBe('config OK: 2 routes, 1 destination, 2 identity providers\n');
    expect(r.err).toContain(
      "warning: identity.providers.shop.domains[1]: eu.acme.com overlaps corp's acme.com: a login under both is looked up in corp only (the first in config order)\n",
    );
    expect(r.err).toMatch(/^warning: routes\[1\]\.match\.identity: no identity provider's domains cover/m);
    expect(r.err).not.toMatch(/routes\[0\]/);
  });

  it('refuses an automatic action other than revokeSessions and confirmCompromised, naming identity.auto.atRisk (exit 2)', async () => {
    const bad = { ...config, identity: { providers: { corp }, auto: { atRisk: ['disable'] } } };
    const r = await cli(['config', 'validate', await file('auto.json', bad)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '  identity.auto.atRisk[0]: "disable" cannot be automatic: identity.auto.atRisk takes only revokeSessions and confirmCompromised',
    );
  });

  it('--secrets names each provider secret the secret object lacks, and prints no value (exit 2)', async () => {
    const secrets = await file('secrets.json', { corpSecret: 'entra-client-secret-value-123' });
    const r = await cli(['config', 'validate', await file('s.json', config), '--secrets'], {
      env: { SECRETS_FILE: secrets },
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '  identity.providers.shop.token: secret "shopToken" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)\n',
    );
    expect(r.err).not.toContain('corpSecret"');
    expect(`${r.out}${r.err}`).not.toContain('entra-client-secret-value-123');
  });

  it('--secrets with every secret there: OK, and says so; without a secret object: a usage error', async () => {
    const secrets = await file('all.json', { corpSecret: 'a-value', shopToken: 'another-value' });
    const path = await file('s2.json', config);
    const ok = await cli(['config', 'validate', path, '--secrets'], {
      env: { SECRETS_FILE: secrets },
    });
    expect(ok.code).toBe(0);
    expect(ok.out).toBe(
      [
        'config OK: 2 routes, 1 destination, 2 identity providers; every secret it names is in the secret object',
        'secrets on AWS (here SECRETS_FILE holds both), see docs/deploy.md#moving-to-two-secrets:',
        '  the main secret (SECRET_ID): none of its names',
        '  the identity secret (IDENTITY_SECRET_ID, read by the workers only): corpSecret, shopToken',
        '',
      ].join('\n'),
    );
    expect(`${ok.out}${ok.err}`).not.toMatch(/a-value|another-value/);
    const none = await cli(['config', 'validate', path, '--secrets']);
    expect(none.code).toBe(2);
    expect(none.err).toBe(
      'exposure-alerts: --secrets reads the secret object: set SECRETS_FILE (or SECRET_ID on AWS)\n',
    );
  });
});

describe('config validate --secrets with the identity secret (IDENTITY_SECRET_ID)', () => {
  const VALUES = {
    corp: 'entra-client-secret-value-456',
    shop: 'okta-api-token-value-789',
    hook: 'https://hooks.example/x',
  };
  const withHook = {
    ...config,
    destinations: { ...config.destinations, hook: { type: 'webhook', url: { secret: 'hookUrl' } } },
    routes: [...config.routes, { name: 'hooked', to: ['hook'] }],
  };
  const validate = async (secrets: Record<string, unknown>, name: string, content: unknown = withHook) => {
    const sm = await secretsManager(secrets);
    const r = await cli(['config', 'validate', await file(name, content), '--secrets'], {
      env: { ...sm.env, SECRET_ID: 'main', IDENTITY_SECRET_ID: 'identity' },
    });
    expect(sm.read.sort()).toEqual(['identity', 'main']);
    expect(`${r.out}${r.err}`).not.toMatch(
      new RegExp(Object.values(VALUES).join('|').replace(/[.?/]/g, '\\$&')),
    );
    return r;
  };
  const PLACES = [
    'secrets on AWS, see docs/deploy.md#moving-to-two-secrets:',
    '  the main secret (SECRET_ID): hookUrl',
    '  the identity secret (IDENTITY_SECRET_ID, read by the workers only): corpSecret, shopToken',
    '',
  ].join('\n');

  it('moved: OK, no warning, and which name belongs in which secret', async () => {
    const r = await validate(
      { main: { hookUrl: VALUES.hook }, identity: { corpSecret: VALUES.corp, shopToken: VALUES.shop } },
      'moved.json',
    );
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('IDENTITY_SECRET_ID');
    expect(r.out).toBe(
      `config OK: 3 routes, 2 destinations, 2 identity providers; every secret it names is in the secret object\n${PLACES}`,
    );
  });

  it('not moved, or moved and still in the main secret: OK, with a warning for each naming the move', async () => {
    const r = await validate(
      {
        main: { hookUrl: VALUES.hook, corpSecret: VALUES.corp, shopToken: VALUES.shop },
        identity: { shopToken: VALUES.shop },
      },
      'unmoved.json',
    );
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      'warning: identity.providers.corp.clientSecret: secret "corpSecret" is not in the identity secret (IDENTITY_SECRET_ID) yet: the workers read it from the main secret (SECRET_ID), which the API\'s function can read too. Move it: docs/deploy.md#moving-to-two-secrets\n',
    );
    expect(r.err).toContain(
      'warning: identity.providers.shop.token: secret "shopToken" is in the identity secret and still in the main one (SECRET_ID), which the API\'s function can read: remove it from there (docs/deploy.md#moving-to-two-secrets)\n',
    );
    expect(r.out).toContain(PLACES);
  });

  it("in neither secret, or a destination's name only in the identity secret: an error naming its path (exit 2)", async () => {
    const r = await validate(
      { main: { corpSecret: VALUES.corp }, identity: { hookUrl: VALUES.hook } },
      'missing.json',
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '  identity.providers.shop.token: secret "shopToken" is not a non-empty string in the identity secret (IDENTITY_SECRET_ID), nor in the main one (SECRET_ID)\n',
    );
    expect(r.err).toContain(
      '  destinations.hook.url: secret "hookUrl" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)\n',
    );
    expect(r.out).toBe(PLACES);
  });
});
