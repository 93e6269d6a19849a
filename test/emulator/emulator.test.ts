/** The emulator's own promises: deterministic data, opaque cursors, limits, and its knobs over HTTP. */
import { describe, expect, it } from 'vitest';
import { Dataset } from '../../lib/emulator/dataset.ts';
import { Emulator } from '../../lib/emulator/index.ts';
import { EVENT_TYPES, SEVERITIES } from '../../lib/upstream/event-types.ts';
import { useEmulator } from '../helpers/emulator.ts';

const anchor = new Date('2026-11-20T12:00:00Z');

describe('dataset', () => {
  it('is the same for the same seed and different for another', () => {
    const a = new Dataset({ seed: 3, anchor });
    const b = new Dataset({ seed: 3, anchor });
    const c = new Dataset({ seed: 4, anchor });
    const uids = (d: Dataset) => d.tenants.flatMap((t) => t.events.map((e) => e.item.metadata.uid));
    expect(uids(a)).toEqual(uids(b));
    expect(a.credentials).toEqual(b.credentials);
    expect(uids(a)).not.toEqual(uids(c));
  });

  it('has events of every type and severity, overrides, tags, identifiers and <mark> highlights', () => {
    const events = new Dataset({ seed: 1, anchor }).tenant('acme').events.map((e) => e.item);
    expect(new Set(events.map((e) => e.metadata.type))).toEqual(new Set(EVENT_TYPES));
    expect(new Set(events.map((e) => e.metadata.severity))).toEqual(new Set(SEVERITIES));
    expect(events.some((e) => e.tenant_metadata.severity.override)).toBe(true);
    expect(events.some((e) => e.tenant_metadata.tags.length > 0)).toBe(true);
    expect(events.every((e) => e.identifiers.length > 0)).toBe(true);
    expect(events.every((e) => e.highlights.content?.[0]?.includes('<mark>'))).toBe(true);
    expect(events.some((e) => e.metadata.uid.split('/').length > 3)).toBe(true);
  });

  it('has credentials for several domains, cleartext and hashed', () => {
    const creds = new Dataset({ seed: 1, anchor }).credentials;
    expect(new Set(creds.map((c) => c.domain)).size).toBeGreaterThanOrEqual(5);
    expect(creds.some((c) => c.hash_type === 'plaintext' && c.hash === c.password)).toBe(true);
    expect(creds.some((c) => c.hash_type === 'sha1' && /^[0-9a-f]{40}$/.test(c.hash))).toBe(true);
  });

  it('tenants have their own tokens, API keys, groups and assets', () => {
    const d = new Dataset({ seed: 1, anchor });
    expect(new Set(d.tenants.map((t) => t.token)).size).toBe(d.tenants.length);
    expect(new Set(d.tenants.map((t) => t.apiKey)).size).toBe(d.tenants.length);
    const groupIds = d.tenants.flatMap((t) => t.groups.map((g) => g.id));
    expect(new Set(groupIds).size).toBe(groupIds.length);
    expect(d.tenants.some((t) => !t.accountTakeover)).toBe(true);
  });

  it('holds as many identifier groups as asked, every tenth with a backlog; two (the default) changes nothing', () => {
    const plain = new Dataset({ seed: 1, anchor });
    const many = new Dataset({ seed: 1, anchor, groupsPerTenant: 100 });
    const acme = many.tenant('acme');
    expect(acme.groups).toHaveLength(100);
    const ids = many.tenants.flatMap((t) => t.groups.map((g) => g.id));
    expect(new Set(ids).size).toBe(ids.length);
    const matching = (groupIds: number[]) =>
      acme.events.filter((e) => e.item.identifiers.some((i) => groupIds.includes(i.id))).length;
    // Group 10 holds one of the tenant's own identifiers; Group 11 one of its own, which a few name.
    const backlog = matching(acme.groups[9]?.identifierIds ?? []);
    const few = matching(acme.groups[10]?.identifierIds ?? []);
    expect(backlog).toBeGreaterThan(acme.events.length / 10);
    expect(few).toBeLessThan(backlog);
    expect(acme.groups.slice(0, 2)).toEqual(plain.tenant('acme').groups);
    // Asking for the default draws the same data as not asking.
    const two = new Dataset({ seed: 1, anchor, groupsPerTenant: 2 });
    expect(two.tenant('acme').events.map((e) => e.item)).toEqual(
      plain.tenant('acme').events.map((e) => e.item),
    );
    expect(two.credentials).toEqual(plain.credentials);
    expect(new Dataset({ seed: 1, anchor, groupsPerTenant: 1 }).tenant('acme').groups).toHaveLength(1);
    expect(() => new Dataset({ seed: 1, anchor, groupsPerTenant: 10_001 })).toThrow(/groupsPerTenant/);
  });

  it("appends credentials naming the logins given, in turn, each of its login's domain", () => {
    const d = new Dataset({ seed: 1, anchor, credentials: 0 });
    const logins = ['kim@acme.test', 'lee@corp.acme.test', 'ana@acme.test'];
    const added = d.appendCredentials(7, { logins });
    expect(added.map((c) => c.identity_name)).toEqual([...logins, ...logins, logins[0]]);
    expect(added.map((c) => c.domain)).toEqual(added.map((c) => c.identity_name.split('@')[1]));
    expect(new Set(added.map((c) => c.id)).size).toBe(7);
    expect(d.appendCredentials(1, { logins, domain: 'acme.test' })[0]?.domain).toBe('acme.test');
  });
});

describe('over HTTP', () => {
  const emu = useEmulator();
  const post = (path: string, body: unknown, token = 'emu-acme-token') =>
    fetch(`${emu.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('an MSSP key acts for two tenants of its organization, not the third; shared events have one uid', async () => {
    const generate = (body: unknown) =>
      fetch(`${emu.url}/tokens/generate`, {
        method: 'POST',
        headers: { Authorization: 'emu-mssp-key', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const tenantOf = async (body: unknown) => {
      const { token } = (await (await generate(body)).json()) as { token: string };
      const info = await fetch(`${emu.url}/tokens/test`, { headers: { Authorization: `Bearer ${token}` } });
      return ((await info.json()) as { tenant_id: number; organization_id: number }).tenant_id;
    };
    expect(await tenantOf({})).toBe(1002);
    expect(await tenantOf({ tenant_id: 1003 })).toBe(1003);
    expect((await generate({ tenant_id: 1004 })).status).toBe(403);
    expect(emu.running.emulator.dataset.tenant(1004).organizationId).toBe(301);
    const [shared] = emu.running.emulator.dataset.appendSharedEvents([1002, 1003], 1);
    const uid = shared?.item.metadata.uid;
    for (const id of [1002, 1003])
      expect(
        emu.running.emulator.dataset.tenant(id).events.filter((e) => e.item.metadata.uid === uid),
      ).toHaveLength(1);
    expect(emu.running.emulator.dataset.tenant(1004).events.some((e) => e.item.metadata.uid === uid)).toBe(
      false,
    );
  });

  it('issues opaque cursors and refuses altered, foreign or mismatched ones', async () => {
    const first = (await (
      await post('/firework/v4/events/tenant/_search', { size: 10, order: 'asc' })
    ).json()) as {
      next: string;
    };
    expect(first.next).not.toMatch(/^\d+$/);
    const altered = `${first.next.slice(0, -2)}xx`;
    expect(
      (await post('/firework/v4/events/tenant/_search', { size: 10, order: 'asc', from: altered })).status,
    ).toBe(400);
    const otherFilter = await post('/firework/v4/events/tenant/_search', {
      size: 10,
      order: 'asc',
      from: first.next,
      filters: { severity: ['high'] },
    });
    expect(otherFilter.status).toBe(400);
    expect(((await otherFilter.json()) as { error: { message: string } }).error.message).toMatch(
      /different request/,
    );
    const ok = await post('/firework/v4/events/tenant/_search', { size: 5, order: 'asc', from: first.next });
    expect(ok.status).toBe(200);
    // Another emulator instance (a restart) does not honour this one's cursors.
    const other = new Emulator({ seed: 7 });
    const res = await other.app.request('/firework/v4/events/tenant/_search', {
      method: 'POST',
      headers: { Authorization: 'Bearer emu-acme-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({ size: 10, order: 'asc', from: first.next }),
    });
    expect(res.status).toBe(400);
  });

  it('answers over-limit sizes with a 400 JSON error on every limited endpoint', async () => {
    const checks = [
      await post('/firework/v4/events/tenant/_search', { size: 11 }),
      await post('/firework/v4/credentials/global/_search', {
        query: { type: 'domain', fqdn: 'x.test' },
        size: 10_001,
      }),
      await fetch(`${emu.url}/leaksdb/identities/by_password/x?size=10001`, {
        headers: { Authorization: 'Bearer emu-acme-token' },
      }),
      await fetch(`${emu.url}/leaksdb/v2/credentials?size=5001`, {
        headers: { Authorization: 'Bearer emu-acme-token' },
      }),
      await post('/astp/identities/by_accounts', {
        accounts: Array.from({ length: 101 }, (_, i) => `a${i}`),
      }),
    ];
    for (const res of checks) {
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/json/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST');
    }
  });

  it('scopes requests to the token: missing or unknown tokens get 401', async () => {
    const res = await fetch(`${emu.url}/tokens/test`);
    expect(res.status).toBe(401);
    expect((await post('/firework/v4/events/tenant/_search', {}, 'nope')).status).toBe(401);
  });

  it('serves the legacy /leaksdb and renamed /astp prefixes alike', async () => {
    const a = await fetch(`${emu.url}/leaksdb/identities/by_domain/acme.test?size=5`, {
      headers: { Authorization: 'Bearer emu-acme-token' },
    });
    const b = await fetch(`${emu.url}/astp/identities/by_domain/acme.test?size=5`, {
      headers: { Authorization: 'Bearer emu-acme-token' },
    });
    expect(await a.json()).toEqual(await b.json());
  });

  it('never serves the cleartext password field it keeps for the by-password search', async () => {
    const res = await post('/firework/v4/credentials/global/_search', {
      query: { type: 'domain', fqdn: 'example.com' },
      size: 50,
    });
    const body = (await res.json()) as { items: Record<string, unknown>[] };
    expect(body.items.length).toBeGreaterThan(0);
    for (const item of body.items) expect(item).not.toHaveProperty('password');
  });

  it('takes faults, settings and appended items through /_emulator, and shows the request log', async () => {
    await fetch(`${emu.url}/_emulator/requests`, { method: 'DELETE' });
    await fetch(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ endpoint: 'tokenTest', status: 503 }),
    });
    expect(
      (await fetch(`${emu.url}/tokens/test`, { headers: { Authorization: 'Bearer emu-acme-token' } })).status,
    ).toBe(503);
    const added = (await (
      await fetch(`${emu.url}/_emulator/events`, {
        method: 'POST',
        body: JSON.stringify({ tenant: 'globex', count: 2 }),
      })
    ).json()) as { added: string[] };
    expect(added.added).toHaveLength(2);
    const settings = await fetch(`${emu.url}/_emulator/settings`, {
      method: 'PUT',
      body: JSON.stringify({ latencyMs: 50 }),
    });
    expect(((await settings.json()) as { latencyMs: number }).latencyMs).toBe(50);
    const started = Date.now();
    await fetch(`${emu.url}/tokens/test`, { headers: { Authorization: 'Bearer emu-acme-token' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await fetch(`${emu.url}/_emulator/settings`, { method: 'PUT', body: JSON.stringify({ latencyMs: 0 }) });
    const log = (await (await fetch(`${emu.url}/_emulator/requests`)).json()) as {
      requests: { status: number }[];
    };
    expect(log.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('produces live events on a timer', async () => {
    const tenant = emu.running.emulator.dataset.tenant('initech');
    const before = tenant.events.length;
    const stop = emu.running.emulator.startLiveEvents({ tenant: 'initech', everyMs: 50, min: 2, max: 2 });
    await new Promise((r) => setTimeout(r, 180));
    stop();
    expect(tenant.events.length - before).toBeGreaterThanOrEqual(4);
    const uids = tenant.events.map((e) => e.item.metadata.uid);
    expect(new Set(uids).size).toBe(uids.length);
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await fetch(`${emu.url}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
