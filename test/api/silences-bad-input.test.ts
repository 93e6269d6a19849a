/**
 * Every request the silence and status routes must refuse, in one table, in the documented order
 * of checks (route and method, auth, content type and size, validation): each case asserts the
 * status, the error code, a JSON body of the documented shape, and that nothing reached the table
 * (a DynamoDB client of its own counts every request) or the upstream. Then the same requests made
 * valid do reach the table, so the table of cases is not passing by accident.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../lib/api/errors.ts';
import { errorBodySchema } from '../../lib/api/schemas.ts';
import { countingClient, type SeenRequest, useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, bearer, buildApi, JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator();
const db = useDynalite();
let api: ApiUnderTest;
let requests: SeenRequest[];

beforeAll(async () => {
  const counting = countingClient(db.endpoint);
  requests = counting.requests;
  api = buildApi(emu, { table: { client: counting.client, name: await db.table() } });
});

beforeEach(() => {
  requests.length = 0;
  emu.running.emulator.control.clearLog();
});

const good = { match: { types: ['paste'] }, until: 'PT4H', reason: 'paste noise' };
const body = (over: Record<string, unknown>) => JSON.stringify({ ...good, ...over });
const ID = 's-000000001-abcdef';
const WWW = ['WWW-Authenticate', /^Bearer realm="exposure-alerts"/] as [string, RegExp];

interface Case {
  name: string;
  method: string;
  path: string;
  auth?: 'none' | string;
  contentType?: string | null;
  body?: string;
  status: number;
  code: string;
  /** Text the message must hold (the path of what was wrong). */
  says?: RegExp;
  header?: [string, RegExp];
}

const post = (name: string, text: string, says: RegExp): Case => ({
  name,
  method: 'POST',
  path: '/silences',
  body: text,
  status: 400,
  code: 'invalid_request',
  says,
});

const cases: Case[] = [
  // --- route and method (before auth) ---
  {
    name: 'PUT /silences',
    method: 'PUT',
    path: '/silences',
    body: body({}),
    status: 405,
    code: 'method_not_allowed',
    header: ['Allow', /GET.*POST|POST.*GET/],
  },
  {
    name: 'DELETE /silences',
    method: 'DELETE',
    path: '/silences',
    auth: 'none',
    status: 405,
    code: 'method_not_allowed',
  },
  {
    name: 'GET /silences/{id}',
    method: 'GET',
    path: `/silences/${ID}`,
    status: 405,
    code: 'method_not_allowed',
    header: ['Allow', /DELETE/],
  },
  {
    name: 'PATCH /silences/{id} without a token',
    method: 'PATCH',
    path: `/silences/${ID}`,
    auth: 'none',
    status: 405,
    code: 'method_not_allowed',
  },
  {
    name: 'POST /status',
    method: 'POST',
    path: '/status',
    body: '{}',
    status: 405,
    code: 'method_not_allowed',
    header: ['Allow', /GET/],
  },
  {
    name: 'DELETE /silences/{id}/x',
    method: 'DELETE',
    path: `/silences/${ID}/x`,
    status: 404,
    code: 'not_found',
  },
  {
    name: 'GET /silences/ (trailing slash)',
    method: 'GET',
    path: '/silences/',
    status: 404,
    code: 'not_found',
  },
  { name: 'GET /statuses', method: 'GET', path: '/statuses', auth: 'none', status: 404, code: 'not_found' },
  // --- auth ---
  {
    name: 'GET /silences without a token',
    method: 'GET',
    path: '/silences',
    auth: 'none',
    status: 401,
    code: 'unauthorized',
    header: WWW,
  },
  {
    name: 'POST /silences with a wrong token',
    method: 'POST',
    path: '/silences',
    auth: `Bearer ${newToken()}`,
    body: body({}),
    status: 401,
    code: 'unauthorized',
    header: WWW,
  },
  {
    name: 'POST /silences without a token and a bad body',
    method: 'POST',
    path: '/silences',
    auth: 'none',
    body: '[1]',
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'DELETE /silences/{id} without a token and a bad id',
    method: 'DELETE',
    path: '/silences/nope',
    auth: 'none',
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'GET /status without a token',
    method: 'GET',
    path: '/status',
    auth: 'none',
    status: 401,
    code: 'unauthorized',
    header: WWW,
  },
  {
    name: 'GET /status with Basic auth',
    method: 'GET',
    path: '/status',
    auth: 'Basic dXNlcjpwYXNz',
    status: 401,
    code: 'unauthorized',
  },
  // --- content type and size ---
  {
    name: 'POST /silences as text/plain',
    method: 'POST',
    path: '/silences',
    contentType: 'text/plain',
    body: body({}),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'POST /silences without a content type',
    method: 'POST',
    path: '/silences',
    contentType: null,
    body: body({}),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'POST /silences of 17 KiB',
    method: 'POST',
    path: '/silences',
    body: body({ reason: 'x'.repeat(17 * 1024) }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'POST /silences as text/plain and 17 KiB',
    method: 'POST',
    path: '/silences',
    contentType: 'text/plain',
    body: body({ reason: 'x'.repeat(17 * 1024) }),
    status: 415,
    code: 'unsupported_media_type',
  },
  // --- the body ---
  post('body: none', '', /empty/),
  post('body: not JSON', '{match: {}}', /not valid JSON/),
  post('body: an array', '[]', /expected an object/),
  post('body: null', 'null', /expected an object/),
  post('match: missing', JSON.stringify({ until: 'PT4H', reason: 'x' }), /match: expected an object/),
  post(
    'match.severity.gte: not a severity',
    body({ match: { severity: { gte: 'urgent' } } }),
    /match\.severity\.gte: expected one of/,
  ),
  post(
    'match.severity: both gte and in',
    body({ match: { severity: { gte: 'high', in: ['low'] } } }),
    /match\.severity/,
  ),
  post('match.colour: unknown key', body({ match: { colour: 'red' } }), /match\.colour: unknown key/),
  post(
    'match.kind: not a kind',
    body({ match: { kind: 'alert' } }),
    /match\.kind: expected one of event, credential/,
  ),
  post('match.types[0]: unknown type', body({ match: { types: ['nope'] } }), /match\.types\[0\]/),
  post('match.domains[0]: not a domain', body({ match: { domains: ['acme'] } }), /match\.domains\[0\]/),
  post('match.identifiers: a boolean', body({ match: { identifiers: [true] } }), /match\.identifiers\[0\]/),
  post(
    'until: missing',
    JSON.stringify({ match: good.match, reason: 'x' }),
    /until: expected a string, got missing/,
  ),
  post('until: a number', body({ until: 1_900_000_000 }), /until: expected a string/),
  post('until: in the past', body({ until: '2020-01-01T00:00:00Z' }), /until: must be in the future/),
  post('until: a zero duration', body({ until: 'PT0S' }), /until: must be in the future/),
  post('until: more than 366 days', body({ until: 'P400D' }), /until: must be at most 366 days away/),
  post(
    'until: without a time zone, and too far',
    body({ until: '2099-01-01T00:00:00' }),
    /until: must be at most 366 days away/,
  ),
  post('until: words', body({ until: 'tomorrow morning' }), /until: expected a timestamp/),
  post('reason: missing', JSON.stringify({ match: good.match, until: 'PT4H' }), /reason: expected a string/),
  post('reason: empty', body({ reason: '' }), /reason: expected at least 1 character/),
  post('reason: blanks', body({ reason: '   ' }), /reason: expected a reason, not blanks/),
  post(
    'reason: 501 characters',
    body({ reason: 'r'.repeat(501) }),
    /reason: expected at most 500 characters/,
  ),
  post('extra key: createdBy', body({ createdBy: 'mallory' }), /createdBy: unknown key/),
  post('extra key: id', body({ id: ID }), /id: unknown key/),
  // --- ids and query ---
  {
    name: 'DELETE a malformed id',
    method: 'DELETE',
    path: '/silences/abc',
    status: 400,
    code: 'invalid_request',
    says: /id must be a silence id/,
  },
  {
    name: 'DELETE an id with an encoded slash',
    method: 'DELETE',
    path: '/silences/s-000000001%2Fabcdef',
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'DELETE an upper-case id',
    method: 'DELETE',
    path: '/silences/S-000000001-ABCDEF',
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'GET /silences?all=yes',
    method: 'GET',
    path: '/silences?all=yes',
    status: 400,
    code: 'invalid_request',
    says: /all must be true or false/,
  },
  { name: 'GET /silences?all=', method: 'GET', path: '/silences?all=', status: 400, code: 'invalid_request' },
];

function authHeader(auth: Case['auth']): Record<string, string> {
  if (auth === undefined) return bearer(api.tokens.runbook);
  if (auth === 'none') return {};
  return { Authorization: auth };
}

describe('bad input to the silence and status routes touches neither the table nor the upstream', () => {
  it('covers every status', () => {
    expect(new Set(cases.map((c) => c.status))).toEqual(new Set([400, 401, 404, 405, 413, 415]));
  });

  it.each(cases)('$name → $status $code', async (c) => {
    const headers: Record<string, string> = authHeader(c.auth);
    const contentType = c.contentType === undefined ? JSON_TYPE['Content-Type'] : c.contentType;
    if (contentType !== null && c.body !== undefined) headers['Content-Type'] = contentType;
    const res = await api.app.request(c.path, {
      method: c.method,
      headers,
      ...(c.body !== undefined ? { body: c.body } : {}),
    });
    expect(res.status).toBe(c.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const json = (await res.json()) as ErrorBody;
    expect(errorBodySchema.safeParse(json).success).toBe(true);
    expect(json.error.code).toBe(c.code);
    expect(json.error.message.length).toBeGreaterThan(10);
    if (c.says) expect(json.error.message).toMatch(c.says);
    if (c.header) expect(res.headers.get(c.header[0]) ?? '').toMatch(c.header[1]);
    expect(requests).toEqual([]);
    expect(emu.running.emulator.control.requests).toEqual([]);
  });

  it('the same requests, valid, do reach the table', async () => {
    const auth = { ...bearer(api.tokens.runbook), ...JSON_TYPE };
    const made = await api.app.request('/silences', { method: 'POST', headers: auth, body: body({}) });
    expect(made.status).toBe(201);
    const id = ((await made.json()) as { silence: { id: string } }).silence.id;
    expect((await api.app.request('/silences?all=true', { headers: auth })).status).toBe(200);
    expect((await api.app.request(`/silences/${id}`, { method: 'DELETE', headers: auth })).status).toBe(200);
    expect((await api.app.request('/status', { headers: auth })).status).toBe(200);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.some((r) => r.action === 'Scan')).toBe(false);
    // A well-formed id nobody made: it reaches the table, and is a 404.
    const unknown = await api.app.request(`/silences/${ID}`, { method: 'DELETE', headers: auth });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error.code).toBe('not_found');
    expect(emu.running.emulator.control.requests).toEqual([]);
  });

  it('16 KiB exactly is read, and refused by validation', async () => {
    const text = body({ reason: 'x'.repeat(16 * 1024 - body({ reason: '' }).length) });
    expect(Buffer.byteLength(text)).toBe(16 * 1024);
    const res = await api.app.request('/silences', {
      method: 'POST',
      headers: { ...bearer(api.tokens.runbook), ...JSON_TYPE },
      body: text,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/reason: expected at most 500/);
    expect(requests).toEqual([]);
  });
});
