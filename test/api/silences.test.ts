/**
 * The silence and status routes through `app.request()`, on a real dynalite table: add, list and
 * expire, who did what in the audit trail, `until` as a duration or a timestamp, and `GET /status`
 * on an empty table and on a busy one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Silence } from '../../lib/rules/silences.ts';
import { DynamoSilenceAudit } from '../../lib/state/audit.ts';
import type { Status } from '../../lib/state/status.ts';
import { BUSY_DEAD, BUSY_QUOTA, seedBusyTable } from '../helpers/busy.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, bearer, buildApi, JSON_TYPE } from './harness.ts';

// The API's upstream only: nothing here polls or reads its data, so it holds almost none.
const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let api: ApiUnderTest;
let table: string;

beforeAll(async () => {
  table = await db.table();
  api = buildApi(emu, { table: { client: db.client, name: table } });
});

const HOUR = 3_600_000;

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await api.app.request(path, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : JSON_TYPE) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('silences through the API', () => {
  it('add, list, expire; expired ones are kept, marked, and listed with ?all=true', async () => {
    const before = Date.now();
    const made = await call('POST', '/silences', api.tokens.runbook, {
      match: { kind: 'event', severity: { gte: 'high' }, sources: ['tenant'] },
      until: 'PT4H',
      reason: 'incident 4711: a flood of reposts',
    });
    expect(made.status).toBe(201);
    expect(made.json.warnings).toEqual([]);
    const silence = made.json.silence as Silence;
    expect(silence).toMatchObject({
      match: { kind: 'event', severity: { gte: 'high' }, sources: ['tenant'] },
      reason: 'incident 4711: a flood of reposts',
      createdBy: 'runbook',
    });
    expect(silence.id).toMatch(/^s-[0-9a-z]{9}-[0-9a-f]{6}$/);
    const until = Date.parse(silence.until);
    expect(until).toBeGreaterThanOrEqual(before + 4 * HOUR);
    expect(until).toBeLessThanOrEqual(Date.now() + 4 * HOUR);
    expect(silence.expiredAt).toBeUndefined();

    const listed = await call('GET', '/silences', api.tokens.chatbot);
    expect(listed.status).toBe(200);
    expect(listed.json.items).toEqual([silence]);

    const ended = await call('DELETE', `/silences/${silence.id}`, api.tokens.chatbot);
    expect(ended.status).toBe(200);
    const expired = ended.json.silence as Silence;
    expect(expired).toMatchObject({ ...silence, expiredBy: 'chatbot' });
    expect(Date.parse(expired.expiredAt as string)).toBeGreaterThanOrEqual(before);

    expect((await call('GET', '/silences', api.tokens.runbook)).json.items).toEqual([]);
    expect((await call('GET', '/silences?all=false', api.tokens.runbook)).json.items).toEqual([]);
    expect((await call('GET', '/silences?all=true', api.tokens.runbook)).json.items).toEqual([expired]);

    // Ending it again: the same answer, nothing changed.
    const again = await call('DELETE', `/silences/${silence.id}`, api.tokens.runbook);
    expect(again).toEqual({ status: 200, json: { silence: expired } });
  });

  it('until as a timestamp with its zone', async () => {
    const at = new Date(Date.now() + 48 * HOUR);
    at.setUTCMilliseconds(0);
    const local = at.toISOString().replace('.000Z', '+00:00');
    const made = await call('POST', '/silences', api.tokens.runbook, {
      match: { domains: ['acme.test'] },
      until: local,
      reason: 'credential reset in progress',
    });
    expect(made.status).toBe(201);
    expect((made.json.silence as Silence).until).toBe(at.toISOString());
  });

  it('a silence of everything for a year is made, and the answer says what it holds back; 30 February is refused', async () => {
    const made = await call('POST', '/silences', api.tokens.runbook, {
      match: {},
      until: 'P366D',
      reason: 'change freeze',
    });
    expect(made.status).toBe(201);
    expect(made.json.warnings).toEqual(['match: empty, so this silence holds back every alert']);
    const short = await call('POST', '/silences', api.tokens.runbook, {
      match: { types: ['paste'] },
      until: '2h',
      reason: 'short form',
    });
    expect(short.status).toBe(201);
    const impossible = await call('POST', '/silences', api.tokens.runbook, {
      match: { types: ['paste'] },
      until: '2027-02-30T00:00:00Z',
      reason: 'x',
    });
    expect(impossible.status).toBe(400);
    expect((impossible.json.error as { message: string }).message).toContain(
      'until: 2027-02-30 does not exist: February 2027 has 28 days',
    );
  });

  it('an unknown id is a 404 not_found', async () => {
    const res = await call('DELETE', '/silences/s-000000001-abcdef', api.tokens.runbook);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: { code: 'not_found', message: 'no silence with id s-000000001-abcdef' },
    });
  });

  it('the audit trail: who, when, what, with what outcome, for every change', async () => {
    const audit = new DynamoSilenceAudit(db.client, table);
    const start = new Date().toISOString();
    const made = await call('POST', '/silences', api.tokens.runbook, {
      match: { types: ['paste'] },
      until: 'PT1H',
      reason: 'paste noise',
    });
    const id = (made.json.silence as Silence).id;
    await call('DELETE', `/silences/${id}`, api.tokens.chatbot);
    await call('DELETE', `/silences/${id}`, api.tokens.runbook);
    const entries = (await audit.list()).filter((e) => e.silenceId === id).reverse();
    expect(entries.map((e) => [e.action, e.client, e.outcome, e.status])).toEqual([
      ['add', 'runbook', 'ok', 201],
      ['expire', 'chatbot', 'ok', 200],
      ['expire', 'runbook', 'already_ended', 200],
    ]);
    expect(entries[0]?.silence).toEqual({
      match: { types: ['paste'] },
      until: (made.json.silence as Silence).until,
      reason: 'paste noise',
    });
    for (const e of entries) expect(e.at >= start).toBe(true);
    // The unknown id of the test before is there too, as a 404.
    expect((await audit.list()).some((e) => e.outcome === 'not_found' && e.status === 404)).toBe(true);
  });
});

describe('when the table fails', () => {
  // A table that does not exist: DynamoDB refuses every request, as it would a broken grant.
  const broken = () => buildApi(emu, { table: { client: db.client, name: 'no-such-table' } });

  it.each([
    ['POST', '/silences', { match: { types: ['paste'] }, until: 'PT1H', reason: 'x' }],
    ['DELETE', '/silences/s-000000001-abcdef', undefined],
    ['GET', '/silences', undefined],
    ['GET', '/status', undefined],
  ])('%s %s → 500 internal_error, saying so', async (method, path, body) => {
    const api = broken();
    const res = await api.app.request(path, {
      method,
      headers: { ...bearer(api.tokens.runbook), ...(body ? JSON_TYPE : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect(res.status).toBe(500);
    const json = (await res.json()) as { error: { code: string; message: string } };
    expect(json.error.code).toBe('internal_error');
    if (method !== 'GET') expect(json.error.message).toMatch(/audit trail could not be written/);
  });
});

describe('GET /status', () => {
  it('on an empty table', async () => {
    const empty = buildApi(emu, { table: { client: db.client, name: await db.table() } });
    const res = await empty.app.request('/status', { headers: bearer(empty.tokens.runbook) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ streams: [], destinations: [], silences: 0, quota: null });
  });

  it('on a busy table', async () => {
    const world = await seedBusyTable(db);
    const busy = buildApi(emu, { table: { client: db.client, name: world.table } });
    const res = await busy.app.request('/status', { headers: bearer(busy.tokens.chatbot) });
    expect(res.status).toBe(200);
    const status = (await res.json()) as Status;
    expect(status.streams.map((s) => [s.stream, s.lastResult, s.lagSeconds])).toEqual([
      ['tenant', 'done', 42.5],
      ['group:12', 'failed', null],
      ['group:13', null, null],
      ['credentials:acme.test', null, null],
    ]);
    expect(
      status.destinations.map((d) => [d.destination, d.pendingMore ?? false, d.dead, d.refusing]),
    ).toEqual([
      ['soc', true, 0, false],
      ['siem', false, BUSY_DEAD, false],
      ['pager', false, 0, true],
    ]);
    expect(status.silences).toBe(3);
    expect(status.quota).toEqual(BUSY_QUOTA);
  }, 60_000);
});
