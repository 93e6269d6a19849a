/**
 * The console's reads (docs/console.md) against alerts a real poll made: the real poll
 * cycle and delivery pass put events and credentials through the emulator into dynalite and to two
 * webhook receivers (one accepts, one refuses for good, so some deliveries end dead), then
 * `GET /alerts`, `GET /alerts/{key}` and `GET /audit` read them back through the app. Paging is
 * checked item by item against the delivery records themselves; a page's cost against a counting
 * DynamoDB client, over an index seeded past a page's read bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { systemClock } from '../../lib/clock.ts';
import { MAX_QUERIES, MAX_RECORD_KEYS, PAGE_ITEMS } from '../../lib/state/alert-list.ts';
import { DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { countingClient, useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { type ApiUnderTest, bearer, buildApi, JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 60, lateMatchesPerTenant: 0, credentials: 40 });
const db = useDynalite();
let hook: Receiver;
let refusing: Receiver;
let world: World;
let table: string;
let api: ApiUnderTest;
let silencedType: string;
const viewer = newToken();

interface Row {
  key: string;
  kind: string;
  severity?: string;
  title: string;
  matchedAt: string;
  identity?: { verdict: string };
  deliveries: {
    id: string;
    destination: string;
    status: string;
    attempts: number;
    lastError?: string;
    sentAt?: string;
  }[];
}

beforeAll(async () => {
  hook = await startReceiver();
  refusing = await startReceiver({ status: 400, body: 'no such hook' });
  table = await db.table();
  const events = emu.running.emulator.dataset.tenant('acme').events;
  silencedType = String((events[0]?.item as { metadata?: { type?: string } } | undefined)?.metadata?.type);
  world = await makeWorld(
    emu,
    db,
    {
      sources: {
        tenantEvents: { lookback: 'P30D' },
        credentials: { domains: ['acme.test'], lookback: 'P30D' },
      },
      destinations: {
        hook: { type: 'webhook', url: hook.url },
        bad: { type: 'webhook', url: refusing.url },
      },
      routes: [
        { name: 'all', to: ['hook'] },
        { name: 'creds', match: { kind: 'credential' }, to: ['bad'] },
      ],
      upstream: { requestsPerSecond: 500, searchRequestsPerSecond: 500 },
    },
    { table },
  );
  // One event type silenced from the first cycle on: its items are recorded `silenced`.
  const now = Date.now();
  await world.runtime.silences.create({
    id: `s-${now.toString(36).padStart(9, '0')}-abcdef`,
    match: { types: [silencedType] },
    until: new Date(now + 3_600_000).toISOString(),
    reason: 'test',
    createdBy: 'cli:test',
    createdAt: new Date(now).toISOString(),
  });
  await world.cycle('events');
  await world.cycle('credentials');
  await world.deliver();
  api = buildApi(emu, {
    table: { client: db.client, name: table },
    clients: { viewer: { digest: sha256Hex(viewer), scopes: ['read'] } },
  });
}, 60_000);
afterAll(async () => {
  await hook.close();
  await refusing.close();
});

async function get(path: string, token = api.tokens.runbook) {
  const res = await api.app.request(path, { headers: bearer(token) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Every page of `GET /alerts` with `query`, in order. */
async function allPages(query = ''): Promise<{ pages: Row[][]; items: Row[] }> {
  const pages: Row[][] = [];
  let cursor: string | undefined;
  do {
    const sep = query ? '&' : '';
    const { status, body } = await get(`/alerts?${query}${cursor ? `${sep}cursor=${cursor}` : ''}`);
    expect(status).toBe(200);
    pages.push(body.items as Row[]);
    cursor = body.cursor as string | undefined;
  } while (cursor && pages.length < 50);
  return { pages, items: pages.flat() };
}

/** What the delivery records say was alerted: every (kind, key) with a record that is not a baseline. */
async function recorded(): Promise<Set<string>> {
  const records = await world.runtime.deliver.deliveries.list({ limit: 100_000 });
  return new Set(records.filter((r) => r.status !== 'baseline').map((r) => `${r.kind}:${r.key}`));
}

describe('GET /alerts after a real poll', () => {
  it('lists every alerted item once, newest first, across pages of at most 50', async () => {
    const { pages, items } = await allPages();
    expect(pages.length, `${items.length} items`).toBeGreaterThan(1);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(PAGE_ITEMS);
    const keys = items.map((i) => `${i.kind}:${i.key}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys)).toEqual(await recorded());
    // The credentials were recorded by the later cycle: they come first.
    const firstEvent = items.findIndex((i) => i.kind === 'event');
    expect(items.slice(firstEvent).every((i) => i.kind === 'event')).toBe(true);
    expect(firstEvent).toBeGreaterThan(0);
  });

  it('shows each destination’s delivery state: sent (kept in packs), dead, silenced', async () => {
    const { items } = await allPages();
    const credential = items.find((i) => i.kind === 'credential') as Row;
    expect(credential.title).toMatch(/@/);
    expect(credential.matchedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(credential.severity).toBeUndefined();
    const byDestination = Object.fromEntries(credential.deliveries.map((d) => [d.destination, d]));
    expect(byDestination.hook).toMatchObject({ status: 'sent', attempts: 1 });
    expect(byDestination.hook?.sentAt).toMatch(/^\d{4}-/);
    expect(byDestination.bad).toMatchObject({ status: 'dead' });
    expect(byDestination.bad?.lastError).toMatch(/HTTP 400/);
    expect(byDestination.bad?.id).toBe(`bad~credential~${credential.key}`);
    const held = items.filter((i) => i.title.startsWith(silencedType));
    expect(held.length).toBeGreaterThan(0);
    for (const i of held)
      expect(i.deliveries).toEqual([expect.objectContaining({ status: 'silenced', attempts: 0 })]);
    const event = items.find((i) => i.kind === 'event' && !i.title.startsWith(silencedType)) as Row;
    expect(event.severity).toMatch(/^(info|low|medium|high|critical)$/);
    expect(event.deliveries).toEqual([expect.objectContaining({ destination: 'hook', status: 'sent' })]);
  });

  it('filters by kind, severity, destination, state and text, each page holding only matches', async () => {
    const { items: all } = await allPages();
    const creds = (await allPages('kind=credential')).items;
    expect(creds.length).toBe(all.filter((i) => i.kind === 'credential').length);
    const severity = (all.find((i) => i.severity) as Row).severity as string;
    const bySeverity = (await allPages(`severity=${severity}`)).items;
    expect(bySeverity.map((i) => i.key)).toEqual(
      all.filter((i) => i.severity === severity).map((i) => i.key),
    );
    const bad = (await allPages('destination=bad')).items;
    expect(bad.length).toBe(creds.length);
    const dead = (await allPages('state=dead')).items;
    expect(dead.map((i) => i.key)).toEqual(
      all.filter((i) => i.deliveries.some((d) => d.status === 'dead')).map((i) => i.key),
    );
    expect(dead.length).toBeGreaterThan(0);
    const silenced = (await allPages('state=silenced')).items;
    expect(silenced.every((i) => i.title.startsWith(silencedType))).toBe(true);
    const login = (creds[0] as Row).title;
    const found = (await allPages(`q=${encodeURIComponent(login.slice(0, 6).toUpperCase())}`)).items;
    expect(found.map((i) => i.key)).toContain((creds[0] as Row).key);
    expect(
      found.every((i) => `${i.title} ${i.key}`.toLowerCase().includes(login.slice(0, 6).toLowerCase())),
    ).toBe(true);
  });

  it('refuses a bad cursor, an unknown filter value or parameter (400), and a read-only client may read', async () => {
    for (const query of [
      'cursor=not-a-cursor!',
      `cursor=${Buffer.from('{"v":1,"m":"2026-13"}').toString('base64url')}`,
      'cursor=eyJ2IjoxfQ',
      'state=lost',
      'kind=x',
      'severity=urgent',
      'tenant=Nobody',
      'colour=red',
      'kind=event&kind=credential',
    ]) {
      const { status, body } = await get(`/alerts?${query}`);
      expect(status, query).toBe(400);
      expect((body.error as { code: string }).code).toBe('invalid_request');
    }
    expect((await get('/alerts', viewer)).status).toBe(200);
  });
});

describe('GET /alerts/{key}', () => {
  it('gives a packed credential’s item (policy applied), deliveries, and its audit trail', async () => {
    const { items } = await allPages('kind=credential');
    const row = items[0] as Row;
    const { status, body } = await get(`/alerts/${encodeURIComponent(row.key)}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ key: row.key, kind: 'credential', actions: [] });
    const item = body.item as { identity_name: string; hash: string };
    expect(item.identity_name).toBe(row.title);
    // The password policy's default: masked.
    expect(item.hash).not.toMatch(/^[0-9a-f]{32,}$/);
    expect(body.deliveries).toEqual(row.deliveries);
    // The sent delivery is in a pack, not a record of its own: the index is what keeps it.
    const own = await world.runtime.deliver.deliveries.getMany([`hook~credential~${row.key}`]);
    expect(own.size).toBe(0);
    const audit = body.audit as { what: string; who: string; result: string }[];
    expect(audit.at(-1)).toMatchObject({ what: 'recorded', who: 'poll:credentials:acme.test' });
    expect(audit.at(-1)?.result).toMatch(/hook: sent; bad: pending/);
  });

  it('lists an action taken on an event, and 404s an unknown key', async () => {
    const { items } = await allPages('kind=event&destination=hook&state=sent');
    const row = items[0] as Row;
    const acted = await api.app.request('/events/actions', {
      method: 'POST',
      headers: { ...bearer(api.tokens.runbook), ...JSON_TYPE },
      body: JSON.stringify({ action: 'ignore', uids: [row.key] }),
    });
    expect(acted.status).toBe(200);
    const { body } = await get(`/alerts/${encodeURIComponent(row.key)}`);
    expect(body.actions).toEqual([expect.objectContaining({ type: 'ignore', by: 'runbook', result: 'ok' })]);
    expect((body.audit as { what: string }[])[0]).toMatchObject({ what: 'ignore', who: 'runbook' });
    const missing = await get(`/alerts/${encodeURIComponent('nope/never/seen')}`);
    expect(missing.status).toBe(404);
    expect((missing.body.error as { code: string }).code).toBe('not_found');
  });
});

describe('a page’s cost', () => {
  it('reads at most its bounds whatever the filters, and pages on with a cursor', async () => {
    const seeded = await db.table();
    const records = new DeliveryRecords(db.client, seeded, systemClock);
    const deliveries: NewDelivery[] = Array.from({ length: 450 }, (_, i) => ({
      destination: i % 2 ? 'hook' : 'other',
      kind: 'event',
      key: `leak/paste/${String(i).padStart(4, '0')}`,
      source: 'tenant',
      routes: ['all'],
      status: 'pending',
      item: {
        metadata: {
          uid: `leak/paste/${i}`,
          type: 'leak',
          severity: 'high',
          matched_at: new Date(Date.now() - i * 1000).toISOString(),
          estimated_created_at: new Date().toISOString(),
        },
      },
    }));
    await records.recordPage(deliveries, { exclusive: true });
    const counting = countingClient(db.endpoint);
    const cheap = buildApi(emu, { table: { client: counting.client, name: seeded } });
    const read = async (query: string) => {
      counting.requests.length = 0;
      const res = await cheap.app.request(`/alerts?${query}`, { headers: bearer(cheap.tokens.runbook) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { items: Row[]; cursor?: string };
      const queries = counting.requests.filter((r) => r.action === 'Query').length;
      const batches = counting.requests.filter((r) => r.action === 'BatchGetItem').length;
      return { body, queries, batches };
    };
    // Nothing matches: the page stops at its bounds, empty, with a cursor.
    const none = await read('q=nothing-matches-this');
    expect(none.body.items).toEqual([]);
    expect(none.body.cursor).toBeDefined();
    expect(none.queries).toBeLessThanOrEqual(MAX_QUERIES);
    expect(none.batches).toBe(0);
    // Everything matches: 50 items, their pending records read in batches within the bound.
    const full = await read('');
    expect(full.body.items).toHaveLength(PAGE_ITEMS);
    expect(full.queries).toBeLessThanOrEqual(MAX_QUERIES);
    expect(full.batches).toBeLessThanOrEqual(Math.ceil(MAX_RECORD_KEYS / 100));
    // A state filter that needs every record read: bounded too, and the pages add up.
    let cursor: string | undefined;
    const seen: string[] = [];
    let pages = 0;
    do {
      const page = await read(`state=pending${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.queries).toBeLessThanOrEqual(MAX_QUERIES);
      expect(page.batches).toBeLessThanOrEqual(Math.ceil(MAX_RECORD_KEYS / 100));
      seen.push(...page.body.items.map((i) => i.key));
      cursor = page.body.cursor;
      pages += 1;
    } while (cursor && pages < 40);
    expect(seen).toHaveLength(450);
    expect(new Set(seen).size).toBe(450);
    // Newest first: recorded together, so by matchedAt, newest first.
    expect(seen[0]).toBe('leak/paste/0000');
    expect(seen.at(-1)).toBe('leak/paste/0449');
    counting.client.destroy();
  });
});
