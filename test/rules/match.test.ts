/** Route matching and silences: every match key, its edges, union and stop, silence expiry. */
import { describe, expect, it } from 'vitest';
import type { Match } from '../../lib/rules/config.ts';
import { decide, domainWithin, matches } from '../../lib/rules/match.ts';
import { config, credentialAlert, eventAlert, makeCredential, makeEvent } from '../render/fixtures.ts';

const ev = (over: Parameters<typeof makeEvent>[0] = {}, source = 'tenant') =>
  eventAlert(makeEvent(over), source);
const cred = (over: Parameters<typeof makeCredential>[0] = {}, source?: string) =>
  credentialAlert(makeCredential(over), source);

describe('matches', () => {
  it('an empty match matches events and credentials', () => {
    expect(matches({}, ev())).toBe(true);
    expect(matches({}, cred())).toBe(true);
  });

  it('kind selects one kind', () => {
    expect(matches({ kind: 'event' }, ev())).toBe(true);
    expect(matches({ kind: 'event' }, cred())).toBe(false);
    expect(matches({ kind: 'credential' }, cred())).toBe(true);
    expect(matches({ kind: 'credential' }, ev())).toBe(false);
  });

  describe('sources', () => {
    it('matches tenant, group:<id> and credentials:<domain>', () => {
      expect(matches({ sources: ['tenant'] }, ev({}, 'tenant'))).toBe(true);
      expect(matches({ sources: ['group:12'] }, ev({}, 'tenant'))).toBe(false);
      expect(matches({ sources: ['group:12'] }, ev({}, 'group:12'))).toBe(true);
      expect(matches({ sources: ['group:1'] }, ev({}, 'group:12'))).toBe(false);
      expect(matches({ sources: ['credentials:example.com'] }, cred({}, 'credentials:example.com'))).toBe(
        true,
      );
      expect(matches({ sources: ['credentials:example.com'] }, cred({}, 'credentials:acme.test'))).toBe(
        false,
      );
    });

    it('compares the credentials domain case-insensitively', () => {
      expect(matches({ sources: ['credentials:Example.COM'] }, cred({}, 'credentials:example.com'))).toBe(
        true,
      );
    });

    it('any listed source is enough', () => {
      expect(matches({ sources: ['tenant', 'group:3'] }, ev({}, 'group:3'))).toBe(true);
    });
  });

  describe('severity', () => {
    it('gte follows info < low < medium < high < critical', () => {
      const m: Match = { severity: { gte: 'high' } };
      expect(matches(m, ev({ metadata: { severity: 'medium' } }))).toBe(false);
      expect(matches(m, ev({ metadata: { severity: 'high' } }))).toBe(true);
      expect(matches(m, ev({ metadata: { severity: 'critical' } }))).toBe(true);
      expect(matches({ severity: { gte: 'info' } }, ev({ metadata: { severity: 'info' } }))).toBe(true);
    });

    it('in lists exact severities', () => {
      const m: Match = { severity: { in: ['low', 'critical'] } };
      expect(matches(m, ev({ metadata: { severity: 'low' } }))).toBe(true);
      expect(matches(m, ev({ metadata: { severity: 'medium' } }))).toBe(false);
    });

    it('a tenant override upwards makes a medium event match gte high', () => {
      const item = {
        metadata: { severity: 'medium' as const },
        tenant_metadata: { severity: { override: 'critical' as const } },
      };
      expect(matches({ severity: { gte: 'high' } }, ev(item))).toBe(true);
    });

    it('a tenant override downwards stops a critical event matching gte high', () => {
      const item = {
        metadata: { severity: 'critical' as const },
        tenant_metadata: { severity: { override: 'low' as const } },
      };
      expect(matches({ severity: { gte: 'high' } }, ev(item))).toBe(false);
      expect(matches({ severity: { in: ['low'] } }, ev(item))).toBe(true);
      expect(matches({ severity: { in: ['critical'] } }, ev(item))).toBe(false);
    });

    it('a null override falls back to metadata.severity', () => {
      const item = {
        metadata: { severity: 'high' as const },
        tenant_metadata: { severity: { override: null } },
      };
      expect(matches({ severity: { gte: 'high' } }, ev(item))).toBe(true);
    });

    it('never matches a credential', () => {
      expect(matches({ severity: { gte: 'info' } }, cred())).toBe(false);
    });
  });

  describe('types', () => {
    it('matches the exact type', () => {
      expect(matches({ types: ['paste'] }, ev({ metadata: { type: 'paste' } }))).toBe(true);
      expect(matches({ types: ['paste'] }, ev({ metadata: { type: 'leak' } }))).toBe(false);
    });

    it('a family contains its members: illicit_networks matches forum_post, leaks matches leak', () => {
      expect(matches({ types: ['illicit_networks'] }, ev({ metadata: { type: 'forum_post' } }))).toBe(true);
      expect(matches({ types: ['leaks'] }, ev({ metadata: { type: 'leak' } }))).toBe(true);
      expect(matches({ types: ['open_web'] }, ev({ metadata: { type: 'paste' } }))).toBe(true);
    });

    it('a family does not contain what is not in its table row', () => {
      expect(matches({ types: ['illicit_networks'] }, ev({ metadata: { type: 'paste' } }))).toBe(false);
      expect(matches({ types: ['leaks'] }, ev({ metadata: { type: 'forum_post' } }))).toBe(false);
    });

    it('a member does not match its family as a type', () => {
      expect(matches({ types: ['leak'] }, ev({ metadata: { type: 'leaks' } }))).toBe(false);
    });

    it('never matches a credential', () => {
      expect(matches({ types: ['leaks'] }, cred())).toBe(false);
    });
  });

  describe('tags', () => {
    const tagged = (...tags: string[]) => ev({ tenant_metadata: { tags } });

    it('any needs one of the tags', () => {
      expect(matches({ tags: { any: ['vip', 'finance'] } }, tagged('finance'))).toBe(true);
      expect(matches({ tags: { any: ['vip'] } }, tagged('finance'))).toBe(false);
      expect(matches({ tags: { any: ['vip'] } }, tagged())).toBe(false);
    });

    it('all needs every tag', () => {
      expect(matches({ tags: { all: ['vip', 'finance'] } }, tagged('vip', 'finance', 'noise'))).toBe(true);
      expect(matches({ tags: { all: ['vip', 'finance'] } }, tagged('vip'))).toBe(false);
    });

    it('none refuses any of the tags, and holds for an untagged event', () => {
      expect(matches({ tags: { none: ['noise'] } }, tagged('vip'))).toBe(true);
      expect(matches({ tags: { none: ['noise'] } }, tagged('vip', 'noise'))).toBe(false);
      expect(matches({ tags: { none: ['noise'] } }, ev({ tenant_metadata: { tags: undefined } }))).toBe(true);
    });

    it('combines any, all and none', () => {
      const m: Match = { tags: { any: ['vip'], all: ['finance'], none: ['noise'] } };
      expect(matches(m, tagged('vip', 'finance'))).toBe(true);
      expect(matches(m, tagged('vip', 'finance', 'noise'))).toBe(false);
      expect(matches(m, tagged('finance'))).toBe(false);
    });

    it('compares tags exactly', () => {
      expect(matches({ tags: { any: ['VIP'] } }, tagged('vip'))).toBe(false);
    });

    it('an empty any list imposes nothing', () => {
      expect(matches({ tags: { any: [] } }, tagged())).toBe(true);
    });

    it('never matches a credential, not even tags.none', () => {
      expect(matches({ tags: { none: ['noise'] } }, cred())).toBe(false);
    });
  });

  describe('identifiers', () => {
    const withIds = ev({
      identifiers: [
        { id: 12, name: 'acme.test' },
        { id: 40, name: 'CEO Jane' },
      ],
    });

    it('a number matches by id', () => {
      expect(matches({ identifiers: [40] }, withIds)).toBe(true);
      expect(matches({ identifiers: [41] }, withIds)).toBe(false);
    });

    it('a string matches by name, case-insensitively', () => {
      expect(matches({ identifiers: ['acme.test'] }, withIds)).toBe(true);
      expect(matches({ identifiers: ['ceo jane'] }, withIds)).toBe(true);
      expect(matches({ identifiers: ['globex.test'] }, withIds)).toBe(false);
    });

    it('a decimal string matches by id too', () => {
      expect(matches({ identifiers: ['12'] }, withIds)).toBe(true);
    });

    it('an event without identifiers matches none', () => {
      expect(matches({ identifiers: [12] }, ev({ identifiers: [] }))).toBe(false);
    });

    it('never matches a credential', () => {
      expect(matches({ identifiers: ['example.com'] }, cred())).toBe(false);
    });
  });

  describe('domains', () => {
    it('matches the domain and its subdomains', () => {
      expect(matches({ domains: ['example.com'] }, cred({ domain: 'example.com' }))).toBe(true);
      expect(matches({ domains: ['example.com'] }, cred({ domain: 'mail.example.com' }))).toBe(true);
      expect(matches({ domains: ['example.com'] }, cred({ domain: 'a.b.example.com' }))).toBe(true);
    });

    it('does not match a lookalike that merely ends with the same letters', () => {
      expect(matches({ domains: ['example.com'] }, cred({ domain: 'notexample.com' }))).toBe(false);
      expect(matches({ domains: ['example.com'] }, cred({ domain: 'example.com.evil.test' }))).toBe(false);
    });

    it('does not match a parent of the listed domain', () => {
      expect(matches({ domains: ['mail.example.com'] }, cred({ domain: 'example.com' }))).toBe(false);
    });

    it('is case-insensitive and ignores a trailing dot', () => {
      expect(matches({ domains: ['Example.COM'] }, cred({ domain: 'MAIL.example.com.' }))).toBe(true);
      expect(domainWithin('EXAMPLE.com', 'example.com')).toBe(true);
    });

    it('never matches an event', () => {
      expect(matches({ domains: ['acme.test'] }, ev())).toBe(false);
    });
  });

  it('topLevel: true holds for the top-level sources’ items, false for a tenants entry’s', () => {
    const top = ev();
    const tenant = { ...ev({}, 'tenant:1003'), tenant: { id: 1003, name: 'Initech' } };
    const credential = { ...cred(), tenant: { id: 1003, name: 'Initech' } };
    expect(matches({ topLevel: true }, top)).toBe(true);
    expect(matches({ topLevel: true }, tenant)).toBe(false);
    expect(matches({ topLevel: true }, credential)).toBe(false);
    expect(matches({ topLevel: false }, tenant)).toBe(true);
    expect(matches({ topLevel: false }, top)).toBe(false);
    expect(matches({ topLevel: true, types: ['paste'] }, ev({ metadata: { type: 'paste' } }))).toBe(true);
  });

  it('every key must hold', () => {
    const m: Match = { kind: 'event', severity: { gte: 'high' }, types: ['illicit_networks'] };
    expect(matches(m, ev({ metadata: { severity: 'high', type: 'forum_post' } }))).toBe(true);
    expect(matches(m, ev({ metadata: { severity: 'high', type: 'paste' } }))).toBe(false);
    expect(matches(m, ev({ metadata: { severity: 'low', type: 'forum_post' } }))).toBe(false);
  });
});

describe('decide', () => {
  const routes = [
    { name: 'high-and-up', match: { kind: 'event', severity: { gte: 'high' } }, to: ['soc'] },
    { name: 'vip', match: { tags: { any: ['vip'] } }, to: ['soc', 'ciso'] },
    { name: 'leaked-logins', match: { kind: 'credential', domains: ['example.com'] }, to: ['soc'] },
  ];

  it('sends to the union of every matching route, naming the routes per destination in order', () => {
    const d = decide(
      config({ routes }),
      ev({ metadata: { severity: 'critical' }, tenant_metadata: { tags: ['vip'] } }),
      new Date(),
    );
    expect([...d.destinations.keys()]).toEqual(['soc', 'ciso']);
    expect(d.destinations.get('soc')).toEqual(['high-and-up', 'vip']);
    expect(d.destinations.get('ciso')).toEqual(['vip']);
    expect(d.silenced).toBeUndefined();
  });

  it('a route with stop: true ends the search when it matches', () => {
    const stopped = [{ ...routes[0], stop: true }, routes[1]];
    const d = decide(
      config({ routes: stopped }),
      ev({ metadata: { severity: 'high' }, tenant_metadata: { tags: ['vip'] } }),
      new Date(),
    );
    expect([...d.destinations.entries()]).toEqual([['soc', ['high-and-up']]]);
  });

  it('a stop route that does not match does not stop anything', () => {
    const stopped = [{ ...routes[0], stop: true }, routes[1]];
    const d = decide(
      config({ routes: stopped }),
      ev({ metadata: { severity: 'low' }, tenant_metadata: { tags: ['vip'] } }),
      new Date(),
    );
    expect([...d.destinations.entries()]).toEqual([
      ['soc', ['vip']],
      ['ciso', ['vip']],
    ]);
  });

  it('an item no route matches goes nowhere', () => {
    const d = decide(config({ routes }), ev({ metadata: { severity: 'low' } }), new Date());
    expect(d.destinations.size).toBe(0);
  });

  it('routes credentials by domain', () => {
    const d = decide(config({ routes }), cred({ domain: 'mail.example.com' }), new Date());
    expect([...d.destinations.entries()]).toEqual([['soc', ['leaked-logins']]]);
  });

  describe('silences', () => {
    const until = '2026-12-31T00:00:00Z';
    const silences = [
      { name: 'paste-noise', match: { types: ['paste'] }, until, reason: 'paste noise during migration' },
    ];
    const paste = () => ev({ metadata: { severity: 'critical', type: 'paste' } });

    it('applies just before until, and still says where the item would have gone', () => {
      const d = decide(config({ routes, silences }), paste(), new Date(Date.parse(until) - 1));
      expect(d.silenced).toEqual({ name: 'paste-noise', reason: 'paste noise during migration', until });
      expect([...d.destinations.keys()]).toEqual(['soc']);
    });

    it('is ignored at until and after it', () => {
      expect(decide(config({ routes, silences }), paste(), new Date(until)).silenced).toBeUndefined();
      expect(
        decide(config({ routes, silences }), paste(), new Date(Date.parse(until) + 1)).silenced,
      ).toBeUndefined();
    });

    it('only silences what it matches', () => {
      const d = decide(
        config({ routes, silences }),
        ev({ metadata: { severity: 'critical', type: 'leak' } }),
        new Date(0),
      );
      expect(d.silenced).toBeUndefined();
    });

    it('an unnamed silence reports its reason without a name', () => {
      const d = decide(
        config({ routes, silences: [{ match: {}, until, reason: 'maintenance' }] }),
        cred(),
        new Date(0),
      );
      expect(d.silenced).toEqual({ reason: 'maintenance', until });
    });
  });
});
