/**
 * Contract tests: the real client against the real emulator over HTTP. Every endpoint, both paging
 * styles to the end, every limit refused before sending, every fault knob, token renewal and
 * tenant isolation.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/clock.ts';
import { systemClock } from '../../lib/clock.ts';
import { memoryLogger } from '../../lib/log.ts';
import { apiKeyExchange } from '../../lib/upstream/auth.ts';
import { resetDeprecationWarnings, UpstreamClient } from '../../lib/upstream/client.ts';
import { UpstreamError } from '../../lib/upstream/errors.ts';
import type { RateGovernor } from '../../lib/upstream/rate.ts';
import { useEmulator } from '../helpers/emulator.ts';

const emu = useEmulator({ eventsPerTenant: 57, credentials: 300 });
const control = () => emu.running.emulator.control;
const dataset = () => emu.running.emulator.dataset;

beforeEach(() => {
  control().clearFaults();
  control().clearLog();
  control().endOfFeed = 'cursor';
});

async function expectUpstreamError(promise: Promise<unknown>, code: string): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  expect((error as UpstreamError).code).toBe(code);
  return error as UpstreamError;
}

describe('every endpoint', () => {
  it('1 tokenTest returns the caller tenant', async () => {
    const info = await emu.client().tokenTest();
    expect(info.tenant_id).toBe(1001);
    expect(info.scopes.length).toBeGreaterThan(0);
  });

  it('2 identitiesByAccounts splits 250 accounts into 3 requests and merges them', async () => {
    const known = dataset()
      .credentials.slice(0, 5)
      .map((c) => c.identity_name);
    const accounts = [...known, ...Array.from({ length: 245 }, (_, i) => `nobody${i}@nowhere.test`)];
    const { identities, invalid } = await emu.client().identitiesByAccounts(accounts);
    expect(control().calls('identitiesByAccounts')).toHaveLength(3);
    expect(Object.keys(identities)).toHaveLength(250);
    expect(invalid).toEqual([]);
    expect(identities[known[0] as string]?.passwords.length).toBeGreaterThan(0);
    const batches = control()
      .calls('identitiesByAccounts')
      .map((r) => (r.input as { accounts: string[] }).accounts.length);
    expect(batches).toEqual([100, 100, 50]);
  });

  it('3 identifier group search returns only events of the group identifiers', async () => {
    const tenant = dataset().tenant('acme');
    const group = tenant.groups[1]!;
    const page = await emu.client().searchIdentifierGroupEvents(group.id, { size: 50, order: 'asc' });
    expect(page.items.length).toBeGreaterThan(0);
    for (const item of page.items) {
      expect(item.identifiers?.some((i) => group.identifierIds.includes(i.id))).toBe(true);
    }
  });

  it('4 tenant event search pages to the end with order asc', async () => {
    const uids: string[] = [];
    let pages = 0;
    for await (const page of emu.client().tenantEventPages({ order: 'asc', size: 10 })) {
      pages += 1;
      uids.push(...page.items.map((i) => i.metadata.uid));
    }
    const expected = dataset()
      .tenant('acme')
      .events.map((e) => e.item.metadata.uid);
    expect(uids).toEqual(expected);
    // 57 events: 6 pages with items, then one empty page whose next is the same cursor again.
    expect(pages).toBe(7);
  });

  it('5 identitiesByPassword finds the accounts that used a password, and warns once that it is deprecated', async () => {
    resetDeprecationWarnings();
    const logger = memoryLogger();
    const client = emu.client('emu-acme-token', { logger });
    const target = dataset().credentials[3]!;
    const page = await client.identitiesByPassword(target.password, { size: 50 });
    expect(page.items.some((i) => i.name === target.identity_name)).toBe(true);
    await client.identitiesByPassword(target.password, { size: 50 });
    expect(logger.lines.filter((l) => l.includes('identitiesByPassword is deprecated'))).toHaveLength(1);
  });

  it('5 identitiesByPassword is forbidden to a tenant without the account-takeover module', async () => {
    await expectUpstreamError(emu.client('emu-globex-token').identitiesByPassword('x'), 'forbidden');
  });

  it('6 listCredentialsV2 pages by next until null', async () => {
    let count = 0;
    for await (const page of emu.client().credentialsV2Pages({ size: 70 })) count += page.items.length;
    expect(count).toBe(dataset().credentials.length);
  });

  it('7 identitiesByKeyword honours leading and trailing wildcards, case-insensitively', async () => {
    const client = emu.client();
    const all = dataset().credentials.map((c) => c.identity_name);
    const lead = new Set<string>();
    for await (const page of client.identitiesByKeywordPages('*@ACME.test'))
      for (const i of page.items) lead.add(i.name);
    expect([...lead].sort()).toEqual([...new Set(all.filter((n) => n.endsWith('@acme.test')))].sort());
    const trail = new Set<string>();
    for await (const page of client.identitiesByKeywordPages('Jane*'))
      for (const i of page.items) trail.add(i.name);
    expect([...trail].sort()).toEqual([...new Set(all.filter((n) => n.startsWith('jane')))].sort());
    expect(trail.size).toBeGreaterThan(0);
  });

  it('8 identitiesByDomain pages by numeric id until an empty list, subdomains included', async () => {
    const records: number[] = [];
    let pages = 0;
    for await (const page of emu.client().identitiesByDomainPages('example.com', { size: 7 })) {
      pages += 1;
      for (const identity of page.items) for (const p of identity.passwords) records.push(p.id);
    }
    const expected = dataset()
      .credentials.filter((c) => c.domain === 'example.com' || c.domain.endsWith('.example.com'))
      .map((c) => c.id);
    expect(records).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 7));
    // The last request was the one that came back empty.
    const last = control().calls('identitiesByDomain').at(-1);
    expect(last?.status).toBe(200);
  });

  it('9 global credential search pages to the end and hands over the quota headers', async () => {
    const quotas: number[] = [];
    const client = emu.client('emu-acme-token', { onQuota: (q) => quotas.push(q.remaining ?? -1) });
    const ids: number[] = [];
    for await (const page of client.globalCredentialPages({
      query: { type: 'domain', fqdn: 'acme.test' },
      order: 'asc',
      size: 20,
    })) {
      expect(page.quota.remaining).toBeTypeOf('number');
      ids.push(...page.items.map((c) => c.id));
    }
    expect(ids).toEqual(
      dataset()
        .credentials.filter((c) => c.domain === 'acme.test')
        .map((c) => c.id),
    );
    expect(quotas.length).toBeGreaterThan(1);
    expect(quotas.at(-1)).toBeLessThan(quotas[0]!);
  });

  it('10 toggleAsset disables and re-enables an asset, and the state persists', async () => {
    const tenant = dataset().tenant('acme');
    const id = [...tenant.assets.keys()][0]!;
    expect((await emu.client().toggleAsset(id, true)).is_disabled).toBe(true);
    expect(tenant.assets.get(id)?.is_disabled).toBe(true);
    expect((await emu.client().toggleAsset(id, false)).is_disabled).toBe(false);
    expect(tenant.assets.get(id)?.is_disabled).toBe(false);
  });

  it('10 toggleAsset on an unknown asset is not_found', async () => {
    await expectUpstreamError(emu.client().toggleAsset(999_999, true), 'not_found');
  });

  it('11 legacy global search pages through links.next with types, time and order', async () => {
    const tenant = dataset().tenant('acme');
    const times = tenant.events.map((e) => e.item.metadata.estimated_created_at).sort();
    const time = `${times[5]}@${times[40]}`;
    const seen: string[] = [];
    for await (const page of emu
      .client()
      .legacySearchPages({ types: ['illicit_networks'], time, order: 'asc', size: 4 })) {
      seen.push(...page.items.map((i) => (i as { metadata: { uid: string } }).metadata.uid));
      expect(page.quota.remaining).toBeTypeOf('number');
    }
    const family = new Set([
      'listing',
      'forum_topic',
      'seller',
      'stealer_log',
      'blog_post',
      'ransomleak',
      'forum_post',
      'bot',
      'financial_data',
      'chat_message',
      'forum_profile',
    ]);
    const expected = tenant.events
      .filter((e) => family.has(e.item.metadata.type))
      .filter(
        (e) =>
          e.item.metadata.estimated_created_at >= times[5]! &&
          e.item.metadata.estimated_created_at <= times[40]!,
      )
      .map((e) => e.item.metadata.uid);
    expect(seen).toEqual(expected);
    expect(seen.length).toBeGreaterThan(4);
  });
});

describe('paging', () => {
  it('stops on a null next when the emulator ends feeds with null', async () => {
    control().endOfFeed = 'null';
    let count = 0;
    let pages = 0;
    for await (const page of emu.client().tenantEventPages({ order: 'asc', size: 10 })) {
      count += page.items.length;
      pages += 1;
    }
    const total = dataset().tenant('acme').events.length;
    expect(count).toBe(total);
    expect(pages).toBe(Math.ceil(total / 10));
  });

  it('does not stop on an empty page in the middle of a feed', async () => {
    // is_ignored is applied after the page window, so pages come back short or empty mid-feed.
    const tenant = dataset().tenant('acme');
    const saved = tenant.events.map((e) => e.isIgnored);
    tenant.events.forEach((e, i) => {
      e.isIgnored = i >= 10 && i < 30; // pages 2 and 3 become empty
    });
    try {
      const sizes: number[] = [];
      for await (const page of emu
        .client()
        .tenantEventPages({ order: 'asc', size: 10, filters: { is_ignored: false } })) {
        sizes.push(page.items.length);
      }
      expect(sizes.slice(0, 4)).toEqual([10, 0, 0, 10]);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(tenant.events.length - 20);
    } finally {
      tenant.events.forEach((e, i) => {
        e.isIgnored = saved[i]!;
      });
    }
  });

  it('picks up events appended after the end when resumed from the last cursor', async () => {
    const client = emu.client('emu-initech-token');
    let last: string | null = null;
    for await (const page of client.tenantEventPages({ order: 'asc', size: 10 })) last = page.next ?? last;
    const added = dataset().appendEvents(1003, 3);
    const after: string[] = [];
    for await (const page of client.tenantEventPages({ order: 'asc', size: 10, from: last })) {
      after.push(...page.items.map((i) => i.metadata.uid));
    }
    expect(after).toEqual(added.map((e) => e.item.metadata.uid));
  });
});

describe('limits are refused before sending', () => {
  const cases: [string, (c: UpstreamClient) => Promise<unknown>][] = [
    ['tenant events size 11', (c) => c.searchTenantEvents({ size: 11 })],
    ['tenant events size 0', (c) => c.searchTenantEvents({ size: 0 })],
    [
      'global credentials size 0',
      (c) => c.searchGlobalCredentials({ query: { type: 'domain', fqdn: 'a.test' }, size: 0 }),
    ],
    [
      'global credentials size 10001',
      (c) => c.searchGlobalCredentials({ query: { type: 'domain', fqdn: 'a.test' }, size: 10_001 }),
    ],
    ['by-password size 10001', (c) => c.identitiesByPassword('x', { size: 10_001 })],
    ['v2 credentials size 5001', (c) => c.listCredentialsV2({ size: 5_001 })],
    ['asset id 0', (c) => c.toggleAsset(0, true)],
    ['identifier group -1', (c) => c.searchIdentifierGroupEvents(-1)],
    ['empty keyword', (c) => c.identitiesByKeyword('')],
  ];
  for (const [name, call] of cases) {
    it(name, async () => {
      await expectUpstreamError(call(emu.client()), 'bad_request');
      expect(control().requests).toHaveLength(0);
    });
  }

  it('the emulator itself answers 400 with a JSON error to an oversized page', async () => {
    const res = await fetch(`${emu.url}/firework/v4/events/tenant/_search`, {
      method: 'POST',
      headers: { Authorization: 'Bearer emu-acme-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({ size: 11 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'BAD_REQUEST' } });
  });
});

describe('faults', () => {
  it('429 with Retry-After waits as told, then succeeds', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 429, retryAfter: 1 });
    const started = Date.now();
    const info = await emu.client().tokenTest();
    expect(info.tenant_id).toBe(1001);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(
      control()
        .calls('tokenTest')
        .map((r) => r.status),
    ).toEqual([429, 200]);
  });

  it('429 without Retry-After waits about 10 s', async () => {
    const waits: number[] = [];
    const clock: Clock = { now: () => Date.now(), sleep: async (ms) => void waits.push(ms) };
    control().addFault({ endpoint: 'tokenTest', status: 429, times: 2 });
    await emu.client('emu-acme-token', { clock }).tokenTest();
    expect(waits).toEqual([10_000, 10_000]);
  });

  it('a 429 whose wait would pass the deadline fails at once as rate_limited', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 429, retryAfter: 30 });
    const started = Date.now();
    const error = await expectUpstreamError(
      emu.client().tokenTest({ deadline: Date.now() + 2_000 }),
      'rate_limited',
    );
    expect(error.retryAfterMs).toBe(30_000);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('5xx is retried with backoff within the attempt bound', async () => {
    const waits: number[] = [];
    const clock: Clock = { now: () => Date.now(), sleep: async (ms) => void waits.push(ms) };
    control().addFault({ endpoint: 'tokenTest', status: 503, times: 2 });
    await emu.client('emu-acme-token', { clock, backoffBaseMs: 400, backoffMaxMs: 10_000 }).tokenTest();
    expect(
      control()
        .calls('tokenTest')
        .map((r) => r.status),
    ).toEqual([503, 503, 200]);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(200);
    expect(waits[0]).toBeLessThanOrEqual(400);
    expect(waits[1]).toBeGreaterThanOrEqual(400);
    expect(waits[1]).toBeLessThanOrEqual(800);
  });

  it('5xx that persists gives up after maxAttempts as upstream_unavailable', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 500, times: 10 });
    const error = await expectUpstreamError(
      emu.client('emu-acme-token', { maxAttempts: 3 }).tokenTest(),
      'upstream_unavailable',
    );
    expect(error.attempts).toBe(3);
    expect(control().calls('tokenTest')).toHaveLength(3);
  });

  it('a hung request times out and is retried', async () => {
    control().addFault({ endpoint: 'tokenTest', hang: true });
    const info = await emu.client('emu-acme-token', { timeoutMs: 300 }).tokenTest();
    expect(info.tenant_id).toBe(1001);
  });

  it('a request that keeps timing out ends as timeout', async () => {
    control().addFault({ endpoint: 'tokenTest', hang: true, times: 2 });
    await expectUpstreamError(
      emu.client('emu-acme-token', { timeoutMs: 200, maxAttempts: 2 }).tokenTest(),
      'timeout',
    );
  });

  it('a slow answer within the timeout is simply waited for', async () => {
    control().addFault({ endpoint: 'tokenTest', delayMs: 300 });
    expect((await emu.client('emu-acme-token', { timeoutMs: 2_000 }).tokenTest()).tenant_id).toBe(1001);
    // A hung request of an earlier test may be logged late, when its connection closes: leave it out.
    const calls = control()
      .calls('tokenTest')
      .filter((r) => !r.fault?.includes('hang'));
    expect(calls.map((r) => r.status)).toEqual([200]);
  });

  it('malformed JSON is invalid_response, retried, and fails only when it persists', async () => {
    control().addFault({ endpoint: 'tenantEvents', malformedJson: true });
    const page = await emu.client().searchTenantEvents({ size: 5 });
    expect(page.items).toHaveLength(5);
    control().addFault({ endpoint: 'tenantEvents', malformedJson: true, times: 5 });
    await expectUpstreamError(
      emu.client('emu-acme-token', { maxAttempts: 2 }).searchTenantEvents({ size: 5 }),
      'invalid_response',
    );
  });

  it('a malformed item is reported with its field named while its page survives', async () => {
    control().addFault({ endpoint: 'tenantEvents', badItem: true, index: 2 });
    const page = await emu.client().searchTenantEvents({ size: 10, order: 'asc' });
    expect(page.items).toHaveLength(9);
    expect(page.invalid).toHaveLength(1);
    const bad = page.invalid[0]!;
    expect(bad.index).toBe(2);
    expect(bad.key).toBe(dataset().tenant('acme').events[2]?.item.metadata.uid);
    expect(bad.issues.map((i) => i.path)).toContain('metadata.severity');
    expect(page.next).not.toBeNull();
  });

  it('a malformed credential is quarantined the same way', async () => {
    control().addFault({ endpoint: 'globalCredentials', badItem: true });
    const page = await emu
      .client()
      .searchGlobalCredentials({ query: { type: 'domain', fqdn: 'example.com' }, size: 5 });
    expect(page.items).toHaveLength(4);
    expect(page.invalid[0]?.issues.map((i) => i.path)).toEqual(['imported_at']);
  });

  it('403, 404 and 400 are not retried', async () => {
    control().addFault({ endpoint: 'tokenTest', status: 403 });
    await expectUpstreamError(emu.client().tokenTest(), 'forbidden');
    expect(control().calls('tokenTest')).toHaveLength(1);
  });
});

describe('auth', () => {
  it('a wrong static token is unauthorized without a retry', async () => {
    await expectUpstreamError(emu.client('nope').tokenTest(), 'unauthorized');
    expect(control().calls('tokenTest')).toHaveLength(1);
  });

  it('an API key is exchanged once and the token is reused', async () => {
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key' });
    const client = new UpstreamClient({ baseUrl: emu.url, auth });
    await client.tokenTest();
    await client.tokenTest();
    expect(control().calls('generateToken')).toHaveLength(1);
  });

  it('a token exchange happens before the request takes its turn, so the request goes out at its slot', async () => {
    // What each turn saw: how many exchanges the upstream had answered when it was taken.
    const turns: { tier: string; exchanged: number }[] = [];
    const governor: RateGovernor = {
      take: async (tier) => {
        turns.push({ tier, exchanged: control().calls('generateToken').length });
      },
      slowDown: async () => {},
    };
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', governor });
    const client = new UpstreamClient({ baseUrl: emu.url, auth, governor });
    await client.tokenTest();
    // The exchange's own turn, then the request's, taken once the token was in hand: no exchange
    // (a round trip, and a wait for its own turn) sits between the request's slot and its sending.
    expect(turns).toEqual([
      { tier: 'basic', exchanged: 0 },
      { tier: 'basic', exchanged: 1 },
    ]);
  });

  it('the exchanged token is as secret as the key: a log line never shows it', async () => {
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key' });
    const token = await auth.getToken();
    const logger = memoryLogger();
    logger.error(`request failed with Authorization: Bearer ${token}`, { token });
    expect(logger.lines.join('\n')).not.toContain(token);
    expect(logger.lines[0]).toContain('[redacted]');
  });

  it('a token is renewed before its hour is up', async () => {
    let now = Date.now();
    const clock: Clock = { now: () => now, sleep: systemClock.sleep };
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', clock });
    const client = new UpstreamClient({ baseUrl: emu.url, auth, clock });
    await client.tokenTest();
    now += 44 * 60_000;
    await client.tokenTest();
    expect(control().calls('generateToken')).toHaveLength(1);
    now += 2 * 60_000;
    await client.tokenTest();
    expect(control().calls('generateToken')).toHaveLength(2);
  });

  it('an expired token meets a 401, is renewed once, and the request succeeds', async () => {
    control().tokenTtlMs = 200;
    try {
      const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key' });
      const client = new UpstreamClient({ baseUrl: emu.url, auth });
      await client.tokenTest();
      await new Promise((r) => setTimeout(r, 300));
      expect((await client.tokenTest()).tenant_id).toBe(1001);
      expect(
        control()
          .calls('tokenTest')
          .map((r) => r.status),
      ).toEqual([200, 401, 200]);
      expect(control().calls('generateToken')).toHaveLength(2);
    } finally {
      control().tokenTtlMs = 3_600_000;
    }
  });

  it('a revoked token is renewed once; a second 401 is final', async () => {
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key' });
    const client = new UpstreamClient({ baseUrl: emu.url, auth });
    await client.tokenTest();
    emu.running.emulator.revokeIssuedTokens();
    expect((await client.tokenTest()).tenant_id).toBe(1001);
    control().addFault({ endpoint: 'tokenTest', status: 401, times: 2 });
    await expectUpstreamError(client.tokenTest(), 'unauthorized');
    expect(
      control()
        .calls('tokenTest')
        .slice(-2)
        .map((r) => r.status),
    ).toEqual([401, 401]);
  });

  it('a bad API key is unauthorized', async () => {
    const auth = apiKeyExchange({ baseUrl: emu.url, apiKey: 'not-a-key' });
    await expectUpstreamError(new UpstreamClient({ baseUrl: emu.url, auth }).tokenTest(), 'unauthorized');
  });

  it('the exchange asks for the configured tenant and is refused another one', async () => {
    const ok = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', tenantId: 1001 });
    expect((await new UpstreamClient({ baseUrl: emu.url, auth: ok }).tokenTest()).tenant_id).toBe(1001);
    const other = apiKeyExchange({ baseUrl: emu.url, apiKey: 'emu-acme-key', tenantId: 1002 });
    await expectUpstreamError(
      new UpstreamClient({ baseUrl: emu.url, auth: other }).tokenTest(),
      'unauthorized',
    );
  });
});

describe('tenant isolation', () => {
  it("tenant A's token never sees tenant B's events, groups or assets", async () => {
    const acme = dataset().tenant('acme');
    const globex = dataset().tenant('globex');
    const acmeUids = new Set(acme.events.map((e) => e.item.metadata.uid));
    for await (const page of emu.client('emu-globex-token').tenantEventPages({ order: 'asc', size: 10 })) {
      for (const item of page.items) expect(acmeUids.has(item.metadata.uid)).toBe(false);
    }
    await expectUpstreamError(
      emu.client('emu-globex-token').searchIdentifierGroupEvents(acme.groups[0]!.id),
      'not_found',
    );
    await expectUpstreamError(
      emu.client('emu-globex-token').toggleAsset([...acme.assets.keys()][0]!, true),
      'not_found',
    );
    expect([...acme.assets.values()].every((a) => a.is_disabled === false)).toBe(true);
    expect(globex.events.length).toBeGreaterThan(0);
  });

  it("a cursor from tenant A's feed is refused for tenant B", async () => {
    const page = await emu.client().searchTenantEvents({ size: 10, order: 'asc' });
    await expectUpstreamError(
      emu.client('emu-globex-token').searchTenantEvents({ size: 10, order: 'asc', from: page.next }),
      'bad_request',
    );
  });
});
