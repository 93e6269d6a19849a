/**
 * The alert config accepts every value docs/configuration.md allows, and says exactly what is wrong
 * with one it does not: each problem with its path, all of them in one pass.
 */
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../lib/rules/config.ts';

const slack = { type: 'slack', url: 'https://hooks.slack.com/services/T/B/X' };
const base = (extra: Record<string, unknown> = {}) => ({
  sources: { tenantEvents: { enabled: true } },
  destinations: { soc: slack },
  routes: [{ name: 'all', match: {}, to: ['soc'] }],
  ...extra,
});

describe('values the contract allows are accepted', () => {
  it.each([
    ['a digest listing a thousand items', { digest: { threshold: 1000, maxItems: 1000 } }],
    ['a digest of one', { digest: { threshold: 1, maxItems: 1 } }],
    ['a very large maxItems', { digest: { threshold: 5, maxItems: 1_000_000 } }],
    [
      'an internationalised domain',
      {
        sources: {
          credentials: { domains: ['xn--80ak6aa92e.xn--p1ai', 'bücher.example'.replace('ü', 'u')] },
        },
      },
    ],
    [
      'a drop route with no destination',
      {
        routes: [
          { name: 'drop-noise', match: { tags: { any: ['noise'] } }, to: [], stop: true },
          { name: 'all', to: ['soc'] },
        ],
      },
    ],
    [
      'the largest page the upstream takes',
      { sources: { credentials: { domains: ['example.com'], pageSize: 10_000 } } },
    ],
    ['a short-form lookback', { sources: { tenantEvents: { lookback: '24h' } } }],
    [
      'a silence until a leap day',
      { silences: [{ match: {}, until: '2028-02-29T12:00:00Z', reason: 'leap' }] },
    ],
  ])('%s', (_name, extra) => {
    const check = checkConfig(base(extra));
    expect(check.errors).toEqual([]);
    expect(check.config).toBeDefined();
  });

  it('a pageSize below 100 is accepted, with a warning about quota', () => {
    const check = checkConfig(base({ sources: { credentials: { domains: ['example.com'], pageSize: 20 } } }));
    expect(check.config?.sources.credentials?.pageSize).toBe(20);
    expect(check.warnings).toContainEqual(
      expect.stringMatching(/^sources\.credentials\.pageSize: 20 is below 100; .*quota/),
    );
  });

  it('a lookback longer than the record retention is accepted, with a warning naming its path', () => {
    const check = checkConfig(
      base({
        sources: {
          tenantEvents: { lookback: 'P120D' },
          identifierGroups: [
            { id: 7, lookback: 'P91D' },
            { id: 8, lookback: 'P30D' },
          ],
        },
      }),
    );
    expect(check.config).toBeDefined();
    const retention = check.warnings.filter((w) => w.includes('retention'));
    expect(retention.map((w) => w.split(':')[0])).toEqual([
      'sources.tenantEvents.lookback',
      'sources.identifierGroups[0].lookback',
    ]);
  });

  it('an empty list in a match is accepted and said to match nothing', () => {
    const check = checkConfig(base({ routes: [{ name: 'none', match: { types: [] }, to: ['soc'] }] }));
    expect(check.config).toBeDefined();
    expect(check.warnings).toContain('routes[0].match.types: an empty list matches nothing');
  });

  it('still refuses what is malformed: URLs, e-mail addresses, domains and durations', () => {
    const check = checkConfig(
      base({
        destinations: {
          soc: { type: 'slack', url: 'hooks.slack.com/x' },
          mail: {
            type: 'email',
            provider: 'generic',
            url: 'https://m.example/send',
            from: 'me',
            to: ['a@b.example'],
          },
        },
        sources: { credentials: { domains: ['not a domain'], lookback: '7 days' } },
      }),
    );
    expect(check.errors).toEqual(
      expect.arrayContaining([
        'destinations.soc.url: expected an http(s) URL',
        'destinations.mail.from: expected an e-mail address',
        'sources.credentials.domains[0]: expected a domain name such as example.com',
        'sources.credentials.lookback: expected a duration such as PT24H, P7D or 24h',
      ]),
    );
  });
});

describe('what is wrong, said exactly', () => {
  it('a bad severity names what is allowed', () => {
    const check = checkConfig(
      base({
        routes: [
          { name: 'a', to: ['soc'] },
          { name: 'b', match: { severity: { gte: 'urgent' } }, to: ['soc'] },
        ],
      }),
    );
    expect(check.errors).toEqual([
      'routes[1].match.severity.gte: expected one of info, low, medium, high, critical, got "urgent"',
    ]);
  });

  it('an unknown destination type lists the known ones', () => {
    const check = checkConfig(base({ destinations: { soc: { type: 'slak', url: slack.url } } }));
    expect(check.errors).toContain(
      'destinations.soc.type: expected one of slack, email, googlechat, webhook, teams, discord, mattermost, pagerduty, jira, servicenow, splunk, sentinel, console, got "slak"',
    );
  });

  it('a secret reference of the wrong shape names the field inside it', () => {
    const check = checkConfig(base({ destinations: { soc: { type: 'slack', url: { secret: 5 } } } }));
    expect(check.errors).toEqual(['destinations.soc.url.secret: expected a string, got a number']);
  });

  it('an unknown route target is reported in the same pass as shape errors elsewhere', () => {
    const check = checkConfig(
      base({
        routes: [
          { name: 'a', match: { colour: 'red' }, to: ['soc'] },
          { name: 'b', to: ['pager'] },
        ],
        passwords: 'plain',
      }),
    );
    expect(check.errors).toEqual(
      expect.arrayContaining([
        'routes[0].match.colour: unknown key',
        'routes[1].to[0]: no destination named "pager"',
        'passwords: expected one of masked, hidden, clear, got "plain"',
      ]),
    );
    expect(check.config).toBeUndefined();
  });
});

describe('tenants', () => {
  const tenant = (id: number, name: string, sources: Record<string, unknown> = { tenantEvents: {} }) => ({
    id,
    name,
    sources,
  });

  it('are accepted with their own sources, and routes and silences may name them and their streams', () => {
    const check = checkConfig(
      base({
        tenants: [
          tenant(1002, 'Globex'),
          tenant(1003, 'Initech', { credentials: { domains: ['initech.test'] } }),
        ],
        routes: [
          { name: 'globex', match: { tenants: ['globex'] }, to: ['soc'] },
          {
            name: 'initech',
            match: { tenants: [1003], sources: ['credentials:1003:initech.test'] },
            to: ['soc'],
          },
        ],
        silences: [{ match: { tenants: ['1002'] }, until: '2999-01-01T00:00:00Z', reason: 'quiet' }],
      }),
    );
    expect(check.errors).toEqual([]);
    expect(check.config?.tenants?.map((t) => t.id)).toEqual([1002, 1003]);
  });

  it('a tenant listed twice, an unknown tenant or tenant stream: each named', () => {
    const check = checkConfig(
      base({
        tenants: [tenant(1002, 'Globex'), tenant(1002, 'Other'), tenant(1003, 'GLOBEX')],
        routes: [
          { name: 'a', match: { tenants: ['Hooli'] }, to: ['soc'] },
          { name: 'b', match: { sources: ['group:1002:12'] }, to: ['soc'] },
        ],
        silences: [{ match: { tenants: [9] }, until: '2999-01-01T00:00:00Z', reason: 'x' }],
      }),
    );
    expect(check.errors).toEqual(
      expect.arrayContaining([
        'tenants[1].id: tenant 1002 is listed twice',
        'routes[0].match.tenants[0]: "Hooli" is not a configured tenant (tenants lists them)',
        'routes[1].match.sources[0]: group:1002:12 is not a configured source',
        'silences[0].match.tenants[0]: 9 is not a configured tenant (tenants lists them)',
      ]),
    );
    expect(check.config).toBeUndefined();
  });

  it('two tenants of one name are allowed, with a warning: naming it matches both', () => {
    const check = checkConfig(base({ tenants: [tenant(1002, 'Globex'), tenant(1003, 'globex')] }));
    expect(check.errors).toEqual([]);
    expect(check.warnings).toContain(
      'tenants[1].name: "globex" is also the name of tenants[0]: a route or silence naming it matches both',
    );
  });

  it('a route naming a tenant in a config without tenants says so', () => {
    const check = checkConfig(base({ routes: [{ name: 'a', match: { tenants: [1002] }, to: ['soc'] }] }));
    expect(check.errors).toEqual([
      'routes[0].match.tenants[0]: 1002 is not a configured tenant (the config has no tenants)',
    ]);
  });
});

describe('dates that do not exist', () => {
  it('are refused with their path, not rolled over to the next month', () => {
    const check = checkConfig(
      base({
        silences: [{ match: {}, until: '2027-02-30T00:00:00Z', reason: 'x' }],
        sources: {
          tenantEvents: { filters: { estimated_created_at: { gte: '2026-04-31T00:00:00Z' } } },
        },
      }),
      new Date('2026-11-24T00:00:00Z'),
    );
    expect(check.errors).toEqual([
      'sources.tenantEvents.filters.estimated_created_at.gte: 2026-04-31 does not exist: April 2026 has 30 days',
      'silences[0].until: 2027-02-30 does not exist: February 2027 has 28 days',
    ]);
  });
});

describe('a large config', () => {
  it('100,000 identifier groups are checked in linear time, and a group listed twice is still named', () => {
    const groups = Array.from({ length: 100_000 }, (_, i) => ({ id: i + 1 }));
    groups.splice(50_000, 0, { id: 42 });
    groups.push({ id: 99_999 });
    // This process's CPU time, which a busy machine does not stretch as it does the wall clock.
    const started = process.cpuUsage();
    const check = checkConfig(base({ sources: { identifierGroups: groups } }));
    const used = process.cpuUsage(started);
    // About half a second; with indexOf in the loop, 9 to 15 s.
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
    expect(check.errors).toEqual([
      'sources.identifierGroups[50000].id: group 42 is listed twice',
      'sources.identifierGroups[100001].id: group 99999 is listed twice',
    ]);
  });
});
