/**
 * What the console changes through the API, and the merged audit trail: a silence's dry run counts
 * the recent alerts a match would have held and makes nothing; a destination's test message goes
 * out at once, and a second within the minute is refused (429, Retry-After) by another app on the
 * same table too; dead deliveries are re-queued and anything else is left alone; `read` clients
 * are refused every change (403, audited); `GET /audit` merges the trails newest first, page by
 * page. The alerts are seeded as a poll records them (state/records), on dynalite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_PAGE } from '../../lib/api/alerts.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { resolveDestination } from '../../lib/deliver/destinations.ts';
import { DynamoAuditStore } from '../../lib/state/audit.ts';
import type { TableIo } from '../../lib/state/io.ts';
import { type DeliveryRecord, DeliveryRecords, type NewDelivery } from '../../lib/state/records/index.ts';
import { fakeClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { type ApiUnderTest, acmeAssetIds, bearer, buildApi, JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 5 });
const db = useDynalite();
const viewer = newToken();
const ops = newToken();
let hook: Receiver;
let table: string;

beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());

function event(i: number, type: string, tenant?: number): NewDelivery {
  const key = `${tenant === undefined ? '' : `${tenant}:`}${type}/src/${i}`;
  return {
    destination: 'hook',
    kind: 'event',
    key,
    source: tenant === undefined ? 'tenant' : `tenant:${tenant}`,
    routes: ['all'],
    status: 'pending',
    item: {
      metadata: {
        uid: `${type}/src/${i}`,
        type,
        severity: i % 2 ? 'high' : 'low',
        matched_at: new Date().toISOString(),
      },
      identifiers: [{ id: 7, name: 'Acme CEO' }],
    },
  };
}

function app(clock = fakeClock(), more: { table?: string } = {}): ApiUnderTest {
  const name = more.table ?? table;
  const io: TableIo = { client: db.client, tableName: name, clock };
  return buildApi(emu, {
    table: { client: db.client, name },
    audit: new DynamoAuditStore(db.client, name),
    clients: {
      viewer: { digest: sha256Hex(viewer), scopes: ['read'] },
      ops: { digest: sha256Hex(ops), scopes: ['read', 'destinations:write', 'silences:write'] },
    },
    console: {
      io,
      tenants: async () => [{ id: 1001, name: 'Globex' }],
      destinations: async () => ({
        destinations: new Map([
          ['hook', resolveDestination('hook', { type: 'webhook', url: hook.url }, {}, [])],
        ]),
        unusable: new Map([['pager', 'destinations.pager.routingKey: the secret object has no "PD_KEY"']]),
        appUrl: 'https://app.example',
        digest: { threshold: 10, maxItems: 50 },
      }),
    },
  });
}

async function post(api: ApiUnderTest, path: string, body: unknown, token = ops, headers = {}) {
  const res = await api.app.request(path, {
    method: 'POST',
    headers: { ...bearer(token), ...JSON_TYPE, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('POST /silences?dryRun=true', () => {
  it('counts the recent alerts a match would have held, and makes no silence', async () => {
    table = await db.table();
    const records = new DeliveryRecords(db.client, table, fakeClock());
    await records.recordPage(
      [...[1, 2, 3].map((i) => event(i, 'paste')), ...[4, 5].map((i) => event(i, 'forum_post', 1001))],
      { exclusive: true },
    );
    const api = app();
    expect((await post(api, '/silences?dryRun=true', { match: { types: ['paste'] } }, viewer)).body).toEqual({
      wouldHold: 3,
      of: 5,
    });
    expect(
      (await post(api, '/silences?dryRun=true', { match: { tenants: ['Globex'] } }, viewer)).body,
    ).toEqual({
      wouldHold: 2,
      of: 5,
    });
    expect(
      (
        await post(
          api,
          '/silences?dryRun=true',
          { match: { severity: { gte: 'high' }, identifiers: ['acme ceo'] } },
          viewer,
        )
      ).body,
    ).toEqual({ wouldHold: 3, of: 5 });
    const full = { match: { topLevel: true }, until: 'PT1H', reason: 'the form as it will be sent' };
    expect((await post(api, '/silences?dryRun=true', full, viewer)).body).toEqual({ wouldHold: 3, of: 5 });
    // A bad match or until is a 400 naming it; nothing is made either way.
    const bad = await post(api, '/silences?dryRun=true', { match: { severity: { gte: 'urgent' } } }, viewer);
    expect(bad.status).toBe(400);
    expect((bad.body.error as { message: string }).message).toMatch(/match\.severity\.gte/);
    expect((await post(api, '/silences?dryRun=true', { match: {}, until: 'yesterday' }, viewer)).status).toBe(
      400,
    );
    expect((await post(api, '/silences?dryRun=maybe', { match: {} }, viewer)).status).toBe(400);
    const list = await api.app.request('/silences?all=true', { headers: bearer(viewer) });
    expect(((await list.json()) as { items: unknown[] }).items).toEqual([]);
    // Without dryRun, a read client may not make one.
    expect((await post(api, '/silences', full, viewer)).status).toBe(403);
  });
});

describe('POST /destinations/{name}/test', () => {
  it('sends at once, then refuses a second within the minute from another app on the table, with Retry-After', async () => {
    table = await db.table();
    const clock = fakeClock();
    const first = app(clock);
    const second = app(clock);
    hook.requests.length = 0;
    const sent = await post(first, '/destinations/hook/test', {});
    expect(sent).toMatchObject({ status: 200, body: { result: 'sent', detail: 'HTTP 200' } });
    expect(hook.requests).toHaveLength(1);
    expect(JSON.stringify(hook.requests[0]?.json())).toMatch(/test of the \\"hook\\" destination/);
    clock.advance(20_000);
    const refused = await post(second, '/destinations/hook/test', {});
    expect(refused.status).toBe(429);
    expect((refused.body.error as { code: string }).code).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toBe('40');
    expect(hook.requests).toHaveLength(1);
    clock.advance(40_000);
    expect((await post(second, '/destinations/hook/test', {})).body).toMatchObject({ result: 'sent' });
    expect(hook.requests).toHaveLength(2);
  });

  it('says refused for a destination whose secret is missing, 404 for an unknown one, 403 for a read client', async () => {
    table = await db.table();
    const api = app();
    expect((await post(api, '/destinations/pager/test', {})).body).toEqual({
      result: 'refused',
      detail: 'not sent: destinations.pager.routingKey: the secret object has no "PD_KEY"',
    });
    const unknown = await post(api, '/destinations/nope/test', {});
    expect(unknown.status).toBe(404);
    expect((unknown.body.error as { message: string }).message).toMatch(/hook, pager/);
    expect((await post(api, '/destinations/hook/test', {}, viewer)).status).toBe(403);
    // No body at all is as good as {}.
    const bare = await api.app.request('/destinations/hook/test', { method: 'POST', headers: bearer(ops) });
    expect(bare.status).toBe(200);
  });

  it('says failed for a destination that does not answer well, refused for one that refuses', async () => {
    table = await db.table();
    const api = app();
    hook.fallback = { status: 503, body: 'busy' };
    try {
      const failed = await post(api, '/destinations/hook/test', {});
      expect(failed.body).toEqual({ result: 'failed', detail: 'HTTP 503 busy' });
    } finally {
      hook.fallback = { status: 200, body: 'ok' };
    }
  });
});

describe('POST /deliveries/retry', () => {
  it('re-queues the dead, by ids or by destination, and leaves the rest alone', async () => {
    table = await db.table();
    const clock = fakeClock();
    const records = new DeliveryRecords(db.client, table, clock, { tenants: [1001] });
    const { created } = await records.recordPage(
      [1, 2, 3, 4].map((i) => event(i, 'paste', i === 4 ? 1001 : undefined)),
      { exclusive: true },
    );
    const [a, b, c, d] = created as [DeliveryRecord, DeliveryRecord, DeliveryRecord, DeliveryRecord];
    await records.queue.save([
      { ...a, status: 'dead', attempts: 5, lastError: 'HTTP 400' },
      { ...b, status: 'sent', attempts: 1, sentAt: new Date(clock.now()).toISOString() },
      { ...d, status: 'dead', attempts: 5, lastError: 'HTTP 400' },
    ]);
    const api = app(clock);
    expect(
      (await post(api, '/deliveries/retry', { ids: [a.id, b.id, c.id, 'hook~event~never/seen/1'] }, viewer))
        .status,
    ).toBe(403);
    expect(
      (await post(api, '/deliveries/retry', { ids: [a.id, b.id, c.id, 'hook~event~never/seen/1'] })).body,
    ).toEqual({
      requeued: 1,
      skipped: 3,
    });
    const now = await records.getMany([a.id, b.id, c.id]);
    expect(now.get(a.id)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(now.get(a.id)?.lastError).toBeUndefined();
    expect(now.get(b.id)?.status).toBe('sent');
    // By destination: the tenant's dead one (its own queue partition) is found too.
    expect((await post(api, '/deliveries/retry', { destination: 'hook', status: 'dead' })).body).toEqual({
      requeued: 1,
      skipped: 0,
    });
    expect((await records.getMany([d.id])).get(d.id)?.status).toBe('pending');
    expect((await post(api, '/deliveries/retry', { destination: 'hook', status: 'dead' })).body).toEqual({
      requeued: 0,
      skipped: 0,
    });
    for (const wrong of [
      {},
      { ids: [] },
      { destination: 'hook', status: 'sent' },
      { ids: ['x'], destination: 'hook' },
    ]) {
      expect((await post(api, '/deliveries/retry', wrong)).status, JSON.stringify(wrong)).toBe(400);
    }
  });
});

describe('GET /audit', () => {
  it('merges toggles, silences, actions and refusals newest first, page after page', async () => {
    table = await db.table();
    const api = app();
    // 30 silences made and ended: 60 entries, beside a refused request and a toggle.
    for (let i = 0; i < 30; i++) {
      const made = await post(
        api,
        '/silences',
        { match: { types: ['paste'] }, until: 'PT1H', reason: `r${i}` },
        ops,
      );
      const id = (made.body.silence as { id: string }).id;
      await api.app.request(`/silences/${id}`, { method: 'DELETE', headers: bearer(ops) });
    }
    expect((await post(api, '/deliveries/retry', { ids: ['x'] }, viewer)).status).toBe(403);
    const assetId = acmeAssetIds(emu)[0] as number;
    const toggled = await post(api, `/assets/${assetId}/toggle`, { is_disabled: true }, api.tokens.runbook);
    expect(toggled.status).toBe(200);
    const lines: { at: string; who: string; what: string; target: string; result: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.app.request(`/audit${cursor ? `?cursor=${cursor}` : ''}`, {
        headers: bearer(viewer),
      });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: typeof lines; cursor?: string };
      expect(page.items.length).toBeLessThanOrEqual(AUDIT_PAGE);
      lines.push(...page.items);
      cursor = page.cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(2);
    expect(lines).toHaveLength(62);
    const ats = lines.map((l) => l.at);
    expect(ats).toEqual([...ats].sort().reverse());
    expect(lines[0]).toEqual({
      at: expect.any(String),
      who: 'runbook',
      what: 'disable asset',
      target: `asset ${assetId}`,
      result: 'ok',
    });
    expect(lines[1]).toMatchObject({
      who: 'viewer',
      what: 'POST /deliveries/retry',
      result: 'forbidden: needs destinations:write',
    });
    expect(lines.filter((l) => l.what === 'silence add')).toHaveLength(30);
    expect(lines.filter((l) => l.what === 'silence expire' && l.result === 'ok')).toHaveLength(30);
    const bad = await api.app.request('/audit?cursor=eyJ2IjoxLCJ6IjoiMjAyNiJ9', { headers: bearer(viewer) });
    expect(bad.status).toBe(400);
  });
});
