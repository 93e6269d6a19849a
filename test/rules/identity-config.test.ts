/**
 * The identity config's checks beyond its schema (lib/rules/config-identity.ts, through checkConfig):
 * automatic actions refused by path, overlapping providers, confirmCompromised an Okta provider
 * skips, routes and silences on `identity` that no provider reaches (a tenant's identity never
 * inherited), and the secret names `config validate --secrets` looks for.
 */
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../lib/rules/config.ts';
import { missingSecrets } from '../../lib/rules/config-checks.ts';
import { checkIdentityWarnings } from '../../lib/rules/config-identity.ts';

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
  domains: ['acme.io'],
};

const base = (extra: Record<string, unknown> = {}) => ({
  sources: { credentials: { domains: ['acme.com', 'acme.io'] } },
  destinations: { soc: { type: 'console' } },
  routes: [{ name: 'all', match: {}, to: ['soc'] }],
  identity: { providers: { corp, shop } },
  ...extra,
});

/** The identity warnings of a valid config (config validate and synth add them to checkConfig's). */
const identityWarnings = (input: unknown) => {
  const check = checkConfig(input);
  expect(check.errors).toEqual([]);
  const warnings: string[] = [];
  checkIdentityWarnings(check.config as NonNullable<typeof check.config>, warnings);
  return warnings;
};

describe('identity.auto.atRisk', () => {
  it('takes revokeSessions and confirmCompromised', () => {
    const check = checkConfig(
      base({
        identity: {
          providers: { corp },
          auto: { atRisk: ['revokeSessions', 'confirmCompromised'], maxPerHour: 5 },
        },
      }),
    );
    expect(check.errors).toEqual([]);
  });

  it('refuses any other action by its path, naming identity.auto.atRisk, at the top level and in a tenant', () => {
    const check = checkConfig(
      base({
        identity: { providers: { corp }, auto: { atRisk: ['revokeSessions', 'disable'] } },
        tenants: [
          {
            id: 7,
            name: 'Globex',
            identity: { providers: { corp }, auto: { atRisk: ['requirePasswordChange'] } },
          },
        ],
      }),
    );
    expect(check.config).toBeUndefined();
    expect(check.errors).toEqual([
      'identity.auto.atRisk[1]: "disable" cannot be automatic: identity.auto.atRisk takes only revokeSessions and confirmCompromised (the other actions are for a person to take)',
      'tenants[0].identity.auto.atRisk[0]: "requirePasswordChange" cannot be automatic: identity.auto.atRisk takes only revokeSessions and confirmCompromised (the other actions are for a person to take)',
    ]);
  });

  it('is reported in the same pass as a shape error elsewhere', () => {
    const check = checkConfig(
      base({ passwords: 'loud', identity: { providers: { corp }, auto: { atRisk: ['enable'] } } }),
    );
    expect(check.errors.some((e) => e.startsWith('passwords'))).toBe(true);
    expect(check.errors.some((e) => e.startsWith('identity.auto.atRisk[0]'))).toBe(true);
  });

  it('warns that confirmCompromised is skipped for an Okta provider without userRisk', () => {
    expect(
      identityWarnings(
        base({ identity: { providers: { corp, shop }, auto: { atRisk: ['confirmCompromised'] } } }),
      ),
    ).toEqual([
      'identity.auto.atRisk[0]: confirmCompromised is skipped for shop: an Okta provider takes it only with "userRisk": true',
    ]);
    expect(
      identityWarnings(
        base({
          identity: {
            providers: { corp, shop: { ...shop, userRisk: true } },
            auto: { atRisk: ['confirmCompromised'] },
          },
        }),
      ),
    ).toEqual([]);
  });
});

describe('providers of one scope', () => {
  it('whose domains overlap: a warning naming both, the first in config order is used', () => {
    const warnings = identityWarnings(
      base({
        identity: { providers: { corp, shop: { ...shop, domains: ['acme.io', 'eu.ACME.com'] } } },
      }),
    );
    expect(warnings).toEqual([
      "identity.providers.shop.domains[1]: eu.ACME.com overlaps corp's acme.com: a login under both is looked up in corp only (the first in config order)",
    ]);
  });

  it('no warning for providers of different scopes with the same domains, nor for disjoint ones', () => {
    expect(
      identityWarnings(
        base({
          identity: { providers: { corp } },
          tenants: [{ id: 7, name: 'Globex', identity: { providers: { other: corp } } }],
        }),
      ),
    ).toEqual([]);
    // notacme.com is not under acme.com.
    expect(
      identityWarnings(
        base({ identity: { providers: { corp, shop: { ...shop, domains: ['notacme.com'] } } } }),
      ),
    ).toEqual([]);
  });
});

describe('a route or silence on identity that no provider reaches', () => {
  const route = (match: Record<string, unknown>) => [
    { name: 'live', match: { identity: ['at_risk'], ...match }, to: ['soc'] },
  ];

  it('a route whose credentials a provider covers: no warning', () => {
    expect(identityWarnings(base({ routes: route({}) }))).toEqual([]);
    expect(identityWarnings(base({ routes: route({ domains: ['sub.acme.io'] }) }))).toEqual([]);
    expect(identityWarnings(base({ routes: route({ sources: ['credentials:ACME.com'] }) }))).toEqual([]);
  });

  it('no identity anywhere: warned', () => {
    const { identity: _, ...without } = base({ routes: route({}) });
    expect(identityWarnings(without)).toEqual([
      'routes[0].match.identity: no identity provider is configured for the items it can match; a credential without a verdict matches no identity list, so this matches nothing',
    ]);
  });

  it("a tenant's route is not covered by the top level's providers (never inherited)", () => {
    const tenants = [{ id: 7, name: 'Globex', sources: { credentials: { domains: ['acme.com'] } } }];
    expect(identityWarnings(base({ tenants, routes: route({ tenants: ['globex'] }) }))).toEqual([
      "routes[0].match.identity: no identity provider is configured for the items it can match (a tenant's identity is its own: the top level's is not inherited); a credential without a verdict matches no identity list, so this matches nothing",
    ]);
    expect(identityWarnings(base({ tenants, routes: route({ topLevel: false }) }))).toHaveLength(1);
    // With its own provider, it is reached.
    const own = [{ ...tenants[0], identity: { providers: { corp } } }];
    expect(identityWarnings(base({ tenants: own, routes: route({ tenants: [7] }) }))).toEqual([]);
    expect(
      identityWarnings(base({ tenants: own, routes: route({ sources: ['credentials:7:acme.com'] }) })),
    ).toEqual([]);
  });

  it("the route's domains or sources lie outside every provider's domains: warned", () => {
    const outside =
      "routes[0].match.identity: no identity provider's domains cover a credential domain it can match (its sources and domains, against each scope's credentials.domains); a credential without a verdict matches no identity list, so this matches nothing";
    const polled = { sources: { credentials: { domains: ['acme.com', 'other.org'] } } };
    expect(identityWarnings(base({ ...polled, routes: route({ domains: ['other.org'] }) }))).toEqual([
      outside,
    ]);
    expect(
      identityWarnings(base({ ...polled, routes: route({ sources: ['credentials:other.org'] }) })),
    ).toEqual([outside]);
    // A top-level route whose only source is a tenant's stream: no top-level credential passes.
    expect(
      identityWarnings(
        base({
          tenants: [{ id: 7, name: 'Globex', sources: { credentials: { domains: ['acme.com'] } } }],
          routes: route({ topLevel: true, sources: ['credentials:7:acme.com'] }),
        }),
      ),
    ).toHaveLength(1);
  });

  it('an event-only match and an empty list: warned; a silence is checked as a route is', () => {
    expect(identityWarnings(base({ routes: route({ kind: 'event' }) }))).toEqual([
      'routes[0].match.identity: only credentials have a verdict and this match takes events only; a credential without a verdict matches no identity list, so this matches nothing',
    ]);
    expect(identityWarnings(base({ routes: route({ tags: { any: ['vip'] } }) }))).toHaveLength(1);
    expect(identityWarnings(base({ routes: [{ name: 'x', match: { identity: [] }, to: ['soc'] }] }))).toEqual(
      ['routes[0].match.identity: an empty list matches nothing'],
    );
    const silences = [
      {
        match: { identity: ['rotated'], domains: ['other.org'] },
        until: '2999-01-01T00:00:00Z',
        reason: 'r',
      },
    ];
    expect(identityWarnings(base({ silences }))).toEqual([
      expect.stringMatching(/^silences\[0\]\.match\.identity: no identity provider's domains/),
    ]);
  });
});

describe('missingSecrets (config validate --secrets)', () => {
  it("names each absent or empty secret by its path, the identity providers' included; never a value", () => {
    const check = checkConfig(
      base({
        destinations: { soc: { type: 'slack', url: { secret: 'socSlack' } } },
        tenants: [{ id: 7, name: 'Globex', identity: { providers: { shop } } }],
      }),
    );
    expect(check.config).toBeDefined();
    const problems = missingSecrets(check.config, { socSlack: 'https://hooks.example/xyz', corpSecret: '' });
    expect([...problems].sort()).toEqual([
      'identity.providers.corp.clientSecret: secret "corpSecret" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)',
      'identity.providers.shop.token: secret "shopToken" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)',
      'tenants[0].identity.providers.shop.token: secret "shopToken" is not a non-empty string in the secret object (SECRET_ID / SECRETS_FILE)',
    ]);
    expect(problems.join('\n')).not.toContain('hooks.example');
    expect(missingSecrets(check.config, { socSlack: 'x', corpSecret: 'y', shopToken: 'z' })).toEqual([]);
  });
});
