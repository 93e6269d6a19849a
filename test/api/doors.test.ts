/**
 * Every route of the API through both of its doors: `app.request` (what `serve` and `npm start`
 * run) and the Lambda handler with Function URL events (base64 bodies included). The same request
 * gets the same status, headers and bytes from each, successes, errors, Slack's signed requests
 * (an empty 200), HTML and binary answers alike. The table below is checked against the app's own
 * route list, so a route added later without a row here fails this file.
 */
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { systemClock } from '../../lib/clock.ts';
import { PAGE_FILES } from '../../lib/console/page-packed.ts';
import { resolveDestination } from '../../lib/deliver/destinations.ts';
import { type DeliveryRecord, DeliveryRecords } from '../../lib/state/records/index.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { functionUrlEvent } from './function-url.ts';
import {
  type ApiUnderTest,
  acmeAssetIds,
  bearer,
  buildApi,
  JSON_TYPE,
  newToken,
  recordAlert,
} from './harness.ts';
import { identityApi } from './identity-harness.ts';

const emu = useEmulator({ eventsPerTenant: 3, lateMatchesPerTenant: 0, credentials: 20 });
const db = useDynalite();
const control = () => emu.running.emulator.control;
const SECRET = 'slack-signing-secret-for-doors';
const TEAM = 'T0TEAM01';
const ANA = 'U0ANA001';
const viewer = newToken();
const actor = newToken();
const ops = newToken();
/** An alert the index holds (seeded as a poll records one), with a dead delivery. */
const ALERT_KEY = 'leak/paste/doors-1';
let hook: Receiver;

/** Bytes no text decoding keeps: a PNG's signature, a NUL, an invalid UTF-8 sequence. */
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80]);
const PAGE = '\uFEFF<!doctype html><title>Exposure</title><p>Événements: 3 → 0</p>';

let api: ApiUnderTest;
let handler: ReturnType<typeof createLambdaHandler>;
let assetId: number;
let uid: string;
let silenceId: string;
let actionId: string;
const handed = () => identity.handed;
let identity: ReturnType<typeof identityApi>;

beforeAll(async () => {
  hook = await startReceiver();
  const table = { client: db.client, name: await db.table() };
  const built = buildApi(emu, {
    table,
    clients: {
      viewer: { digest: sha256Hex(viewer), scopes: ['read'] },
      actor: { digest: sha256Hex(actor), scopes: ['identity:act'] },
      ops: { digest: sha256Hex(ops), scopes: ['read', 'destinations:write'] },
    },
    // The console's test messages go to a receiver.
    console: {
      destinations: async () => ({
        destinations: new Map([
          ['hook', resolveDestination('hook', { type: 'webhook', url: hook.url }, {}, [])],
        ]),
        appUrl: 'https://app.example',
        digest: { threshold: 10, maxItems: 50 },
      }),
    },
    slack: {
      signingSecret: SECRET,
      teamId: TEAM,
      allowedUsers: [ANA],
      responseUrlPrefix: 'https://hooks.slack.com/',
    },
  });
  // Account actions as on AWS: recorded and handed to a worker (identity-harness.ts).
  identity = identityApi(built, table);
  api = { ...built, app: identity.app };
  await identity.seed(['kim@acme.test']);
  // Answers of the kinds the console will serve: a page, a file, bytes with no type, non-UTF-8 text.
  api.app.get('/test/page', (c) => c.html(PAGE));
  api.app.get('/test/file', (c) =>
    c.body(PNG, 200, { 'Content-Type': 'image/png', 'Cache-Control': 'no-store' }),
  );
  api.app.get('/test/raw', (c) => c.body(PNG));
  api.app.get('/test/latin1', (c) =>
    c.body(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]), 200, {
      'Content-Type': 'text/plain; charset=iso-8859-1',
    }),
  );
  handler = createLambdaHandler(api.app);
  assetId = acmeAssetIds(emu)[0] as number;
  const [first] = emu.running.emulator.dataset.tenant('acme').events;
  uid = (first?.item as unknown as EventItem | undefined)?.metadata.uid ?? '';
  const made = await api.app.request('/silences', {
    method: 'POST',
    headers: { ...bearer(api.tokens.runbook), ...JSON_TYPE },
    body: JSON.stringify({ match: { types: ['paste'] }, until: 'PT1H', reason: 'doors' }),
  });
  silenceId = ((await made.json()) as { silence: { id: string } }).silence.id;
  const acted = await api.app.request('/identity/actions', {
    method: 'POST',
    headers: { ...bearer(actor), ...JSON_TYPE },
    body: JSON.stringify({ action: 'revokeSessions', logins: ['kim@acme.test'], reason: 'doors' }),
  });
  actionId = ((await acted.json()) as { id: string }).id;
  // An alert in the index, as a poll records one, whose delivery then went dead.
  const records = new DeliveryRecords(table.client, table.name, systemClock);
  const [recorded] = await recordAlert(table, ALERT_KEY);
  await records.queue.save([
    { ...(recorded as DeliveryRecord), status: 'dead', attempts: 3, lastError: 'HTTP 400' },
  ]);
});
afterAll(() => hook.close());

interface Request {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The Lambda door gets the body base64-encoded. */
  base64?: boolean;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
}

async function viaApp(r: Request): Promise<Answer> {
  const res = await api.app.request(`https://api.example${r.path}${r.query ? `?${r.query}` : ''}`, {
    method: r.method,
    headers: r.headers ?? {},
    ...(r.body === undefined ? {} : { body: r.body }),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return { status: res.status, headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function viaLambda(r: Request | LambdaFunctionURLEvent): Promise<Answer> {
  const event = 'rawPath' in r ? r : functionUrlEvent(r.method, r.path, r);
  const result = await handler(event);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
  const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  return { status: result.statusCode ?? 0, headers, bytes };
}

/** What must match between the doors: everything but the request's own id. */
function comparable(a: Answer) {
  const { 'x-request-id': id, ...headers } = a.headers;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  return { status: a.status, headers, body: a.bytes.toString('base64') };
}

const auth = () => bearer(api.tokens.runbook);
const jsonAuth = () => ({ ...auth(), ...JSON_TYPE });
const signed = (body: string) => slackSigned(body, SECRET);
const click = () =>
  `payload=${encodeURIComponent(
    JSON.stringify({
      type: 'block_actions',
      user: { id: ANA },
      team: { id: TEAM },
      actions: [
        {
          action_id: 'exposure:ignore',
          block_id: `exposure:${uid}`,
          value: uid,
          action_ts: '1716999999.000777',
        },
      ],
    }),
  )}`;
const command = 'team_id=T0TEAM01&user_id=U0ANA001&command=%2Fexposure&text=help';

interface Row {
  name: string;
  /** The app route it reaches (`METHOD /path/:param`), or none for a request no route takes. */
  route?: string;
  request: () => Request;
  status: number;
  /** The error code, for an error; checks on the answer otherwise. */
  code?: string;
  check?: (a: Answer) => void;
  /** Runs before each door's request (a fault the upstream answers with, once). */
  before?: () => void;
}

const json = (a: Answer) => JSON.parse(a.bytes.toString('utf8'));

const ROWS: Row[] = [
  { name: 'health', route: 'GET /health', request: () => ({ method: 'GET', path: '/health' }), status: 200 },
  {
    name: 'HEAD health',
    route: 'GET /health',
    request: () => ({ method: 'HEAD', path: '/health' }),
    status: 200,
    check: (a) => expect(a.bytes.byteLength).toBe(0),
  },
  {
    name: 'the OpenAPI document',
    route: 'GET /openapi.json',
    request: () => ({ method: 'GET', path: '/openapi.json' }),
    status: 200,
    check: (a) => expect(json(a).openapi).toBe('3.1.0'),
  },
  {
    name: 'a toggle, base64, once per Idempotency-Key',
    route: 'POST /assets/:asset_id/toggle',
    request: () => ({
      method: 'POST',
      path: `/assets/${assetId}/toggle`,
      headers: { ...jsonAuth(), 'Idempotency-Key': 'doors-toggle-1' },
      body: '{"is_disabled":true}',
      base64: true,
    }),
    status: 200,
    check: (a) => expect(json(a).asset).toMatchObject({ id: assetId, is_disabled: true }),
  },
  {
    name: "an asset's audit trail",
    route: 'GET /assets/:asset_id/audit',
    request: () => ({ method: 'GET', path: `/assets/${assetId}/audit`, headers: auth(), query: 'limit=5' }),
    status: 200,
    check: (a) => expect(json(a).items.length).toBeGreaterThan(0),
  },
  {
    name: 'the silences',
    route: 'GET /silences',
    request: () => ({ method: 'GET', path: '/silences', headers: auth(), query: 'all=true' }),
    status: 200,
    check: (a) => expect(json(a).items.map((s: { id: string }) => s.id)).toContain(silenceId),
  },
  {
    name: 'a new silence, once per Idempotency-Key',
    route: 'POST /silences',
    request: () => ({
      method: 'POST',
      path: '/silences',
      headers: { ...jsonAuth(), 'Idempotency-Key': 'doors-silence-1' },
      body: JSON.stringify({ match: { types: ['paste'] }, until: 'PT2H', reason: 'doors, base64' }),
      base64: true,
    }),
    status: 201,
    check: (a) => expect(json(a).silence.createdBy).toBe('runbook'),
  },
  {
    name: 'a silence ended, its id percent-encoded',
    route: 'DELETE /silences/:id',
    request: () => ({
      method: 'DELETE',
      path: `/silences/${encodeURIComponent(silenceId).replace(/-/g, '%2D')}`,
      headers: auth(),
    }),
    status: 200,
    check: (a) => expect(json(a).silence).toMatchObject({ id: silenceId, expiredBy: 'runbook' }),
  },
  // The console (lib/console/routes.ts): its page and files gzipped as stored, and who a token is.
  {
    name: 'the console page, gzipped',
    route: 'GET /console',
    request: () => ({ method: 'GET', path: '/console', headers: { 'Accept-Encoding': 'gzip' } }),
    status: 200,
    check: (a) => expect(a.headers['content-encoding']).toBe('gzip'),
  },
  {
    name: "the console's script",
    route: 'GET /console/:file',
    request: () => ({
      method: 'GET',
      path: `/console/${Object.keys(PAGE_FILES).find((f) => f.endsWith('.js'))}`,
    }),
    status: 200,
    check: (a) => expect(a.headers['content-type']).toMatch(/^text\/javascript/),
  },
  {
    name: 'who a token is',
    route: 'GET /whoami',
    request: () => ({ method: 'GET', path: '/whoami', headers: bearer(viewer) }),
    status: 200,
    check: (a) => expect(json(a)).toEqual({ name: 'viewer', grants: [{ scopes: ['read'] }] }),
  },
  // The console's API (lib/api/console-api.ts).
  {
    name: 'the alerts, newest first',
    route: 'GET /alerts',
    request: () => ({
      method: 'GET',
      path: '/alerts',
      query: 'kind=event&state=dead',
      headers: bearer(viewer),
    }),
    status: 200,
    check: (a) =>
      expect(json(a).items).toEqual([
        expect.objectContaining({
          key: ALERT_KEY,
          deliveries: [expect.objectContaining({ destination: 'hook', status: 'dead', attempts: 3 })],
        }),
      ]),
  },
  {
    name: 'an alert, its key percent-encoded',
    route: 'GET /alerts/:key',
    request: () => ({
      method: 'GET',
      path: `/alerts/${encodeURIComponent(ALERT_KEY)}`,
      headers: bearer(viewer),
    }),
    status: 200,
    check: (a) =>
      expect(json(a)).toMatchObject({ key: ALERT_KEY, kind: 'event', item: { metadata: { type: 'leak' } } }),
  },
  {
    name: 'the audit trail',
    route: 'GET /audit',
    request: () => ({ method: 'GET', path: '/audit', headers: bearer(viewer) }),
    status: 200,
    check: (a) => expect(json(a).items.map((i: { what: string }) => i.what)).toContain('silence add'),
  },
  {
    name: 'a silence’s dry run, for a read client',
    route: 'POST /silences',
    request: () => ({
      method: 'POST',
      path: '/silences',
      query: 'dryRun=true',
      headers: { ...bearer(viewer), ...JSON_TYPE },
      body: JSON.stringify({ match: { types: ['leak'] } }),
    }),
    status: 200,
    check: (a) => expect(json(a)).toEqual({ wouldHold: 1, of: 1 }),
  },
  {
    name: 'a test message, once per Idempotency-Key',
    route: 'POST /destinations/:name/test',
    request: () => ({
      method: 'POST',
      path: '/destinations/hook/test',
      headers: { ...bearer(ops), ...JSON_TYPE, 'Idempotency-Key': 'doors-test-1' },
      body: '{}',
    }),
    status: 200,
    check: (a) => {
      expect(json(a)).toMatchObject({ result: 'sent' });
      expect(hook.requests).toHaveLength(1);
    },
  },
  {
    name: 'the dead re-queued, once per Idempotency-Key',
    route: 'POST /deliveries/retry',
    request: () => ({
      method: 'POST',
      path: '/deliveries/retry',
      headers: { ...bearer(ops), ...JSON_TYPE, 'Idempotency-Key': 'doors-retry-1' },
      body: JSON.stringify({ destination: 'hook', status: 'dead' }),
    }),
    status: 200,
    check: (a) => expect(json(a)).toEqual({ requeued: 1, skipped: 0 }),
  },
  {
    name: 'the status',
    route: 'GET /status',
    request: () => ({ method: 'GET', path: '/status', headers: auth() }),
    status: 200,
  },
  {
    name: 'a lookup',
    route: 'GET /lookup',
    request: () => ({ method: 'GET', path: '/lookup', headers: auth(), query: 'domain=acme.test' }),
    status: 200,
    check: (a) => expect(json(a)).toHaveProperty('identities'),
  },
  {
    name: 'an action on an event, once per Idempotency-Key',
    route: 'POST /events/actions',
    request: () => ({
      method: 'POST',
      path: '/events/actions',
      headers: { ...jsonAuth(), 'Idempotency-Key': 'doors-act-1' },
      body: JSON.stringify({ action: 'ignore', uids: [uid] }),
      base64: true,
    }),
    status: 200,
    check: (a) => expect(json(a).results).toEqual([{ uid, ok: true }]),
  },
  {
    name: 'an account action, handed to a worker, once per Idempotency-Key',
    route: 'POST /identity/actions',
    request: () => ({
      method: 'POST',
      path: '/identity/actions',
      headers: { ...bearer(actor), ...JSON_TYPE, 'Idempotency-Key': 'doors-identity-1' },
      body: JSON.stringify({ action: 'revokeSessions', logins: ['kim@acme.test'] }),
      base64: true,
    }),
    status: 202,
    check: (a) => {
      expect(json(a).id).toMatch(/^api:actor:doors-identity-1:/);
      expect(handed().filter((w) => w.kind === 'identity-action' && w.id === json(a).id)).toHaveLength(1);
    },
  },
  {
    name: "an account action's outcome, its id percent-encoded",
    route: 'GET /identity/actions/:id',
    request: () => ({
      method: 'GET',
      path: `/identity/actions/${encodeURIComponent(actionId)}`,
      headers: auth(),
    }),
    status: 200,
    check: (a) =>
      expect(json(a)).toMatchObject({
        id: actionId,
        action: 'revokeSessions',
        open: true,
        results: [{ login: 'kim@acme.test', ok: false }],
      }),
  },
  {
    name: "a Slack click (signed, base64): Slack's empty 200",
    route: 'POST /slack/interactions',
    request: () => {
      const body = click();
      return { method: 'POST', path: '/slack/interactions', headers: signed(body), body, base64: true };
    },
    status: 200,
    check: (a) => {
      expect(a.bytes.byteLength).toBe(0);
      expect(api.handed.at(-1)).toMatchObject({
        kind: 'slack-action',
        request: { type: 'ignore', uids: [uid] },
      });
    },
  },
  {
    name: 'a Slack command (signed)',
    route: 'POST /slack/commands',
    request: () => ({ method: 'POST', path: '/slack/commands', headers: signed(command), body: command }),
    status: 200,
    check: (a) => expect(json(a)).toMatchObject({ response_type: 'ephemeral' }),
  },
  {
    name: 'an HTML page',
    route: 'GET /test/page',
    request: () => ({ method: 'GET', path: '/test/page' }),
    status: 200,
    check: (a) => {
      expect(a.headers['content-type']).toMatch(/^text\/html/);
      expect(a.bytes.equals(Buffer.from(PAGE))).toBe(true);
    },
  },
  {
    name: 'a binary file',
    route: 'GET /test/file',
    request: () => ({ method: 'GET', path: '/test/file' }),
    status: 200,
    check: (a) => expect(a.bytes.equals(Buffer.from(PNG))).toBe(true),
  },
  {
    name: 'bytes with no content type',
    route: 'GET /test/raw',
    request: () => ({ method: 'GET', path: '/test/raw' }),
    status: 200,
    check: (a) => expect(a.bytes.equals(Buffer.from(PNG))).toBe(true),
  },
  {
    name: 'text that is not UTF-8',
    route: 'GET /test/latin1',
    request: () => ({ method: 'GET', path: '/test/latin1' }),
    status: 200,
    check: (a) => expect(a.bytes.toString('latin1')).toBe('café'),
  },
  // Errors, each as JSON with its headers.
  { name: 'no route', request: () => ({ method: 'GET', path: '/nope' }), status: 404, code: 'not_found' },
  {
    name: 'a wrong method',
    request: () => ({ method: 'PUT', path: '/silences', headers: auth() }),
    status: 405,
    code: 'method_not_allowed',
  },
  {
    name: 'no token',
    route: 'GET /status',
    request: () => ({ method: 'GET', path: '/status' }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'outside the scopes',
    route: 'POST /assets/:asset_id/toggle',
    request: () => ({
      method: 'POST',
      path: `/assets/${assetId}/toggle`,
      headers: { ...bearer(viewer), ...JSON_TYPE },
      body: '{"is_disabled":false}',
    }),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'text/plain',
    route: 'POST /silences',
    request: () => ({
      method: 'POST',
      path: '/silences',
      headers: { ...auth(), 'Content-Type': 'text/plain' },
      body: '{}',
    }),
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: '17 KiB, base64',
    route: 'POST /events/actions',
    request: () => ({
      method: 'POST',
      path: '/events/actions',
      headers: jsonAuth(),
      body: JSON.stringify({ action: 'ignore', uids: ['x'.repeat(17 * 1024)] }),
      base64: true,
    }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'a bad body',
    route: 'POST /assets/:asset_id/toggle',
    request: () => ({
      method: 'POST',
      path: `/assets/${assetId}/toggle`,
      headers: jsonAuth(),
      body: '{"is_disabled":"yes"}',
    }),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'an upstream that fails',
    route: 'POST /assets/:asset_id/toggle',
    before: () => control().addFault({ endpoint: 'assetToggle', status: 500, times: 2 }),
    request: () => ({
      method: 'POST',
      path: `/assets/${assetId}/toggle`,
      headers: jsonAuth(),
      body: '{"is_disabled":false}',
    }),
    status: 502,
    code: 'upstream_error',
  },
  {
    name: 'an upstream that rate limits',
    route: 'POST /assets/:asset_id/toggle',
    before: () => control().addFault({ endpoint: 'assetToggle', status: 429, retryAfter: 60 }),
    request: () => ({
      method: 'POST',
      path: `/assets/${assetId}/toggle`,
      headers: jsonAuth(),
      body: '{"is_disabled":false}',
    }),
    status: 503,
    code: 'upstream_rate_limited',
  },
  {
    name: 'an unsigned Slack request',
    route: 'POST /slack/interactions',
    request: () => ({
      method: 'POST',
      path: '/slack/interactions',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: click(),
      base64: true,
    }),
    status: 401,
    code: 'unauthorized',
  },
  // Ids in paths: one percent-encoded segment each, an encoded slash included.
  {
    name: 'an asset id with an encoded slash',
    route: 'GET /assets/:asset_id/audit',
    request: () => ({ method: 'GET', path: '/assets/10%2F11/audit', headers: auth() }),
    status: 400,
    code: 'invalid_request',
    check: (a) => expect(json(a).error.message).toContain('"10/11"'),
  },
  {
    name: 'a toggle of an asset id with an encoded slash',
    route: 'POST /assets/:asset_id/toggle',
    request: () => ({
      method: 'POST',
      path: '/assets/10%2F11/toggle',
      headers: jsonAuth(),
      body: '{"is_disabled":true}',
    }),
    status: 400,
    code: 'invalid_request',
    check: (a) => expect(json(a).error.message).toContain('"10/11"'),
  },
  {
    name: 'a silence id with an encoded slash',
    route: 'DELETE /silences/:id',
    request: () => ({ method: 'DELETE', path: `/silences/${silenceId}%2Fx`, headers: auth() }),
    status: 400,
    code: 'invalid_request',
    check: (a) => expect(json(a).error.message).toContain(`"${silenceId}/x"`),
  },
  {
    name: 'a silence id with a bare slash: two segments, no route',
    request: () => ({ method: 'DELETE', path: `/silences/${silenceId}/x`, headers: auth() }),
    status: 404,
    code: 'not_found',
  },
];

describe('every route through both doors', () => {
  it('the table has a row for every route of the app', () => {
    const routes = new Set(
      api.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`),
    );
    const covered = new Set(ROWS.flatMap((row) => (row.route && row.status < 300 ? [row.route] : [])));
    expect([...routes].sort()).toEqual([...covered].sort());
  });

  it.each(ROWS.map((row) => [row.name, row] as const))(
    '%s: the same answer from app.request and Lambda',
    async (_name, row) => {
      row.before?.();
      const first = await viaApp(row.request());
      row.before?.();
      const second = await viaLambda(row.request());
      expect(comparable(second)).toEqual(comparable(first));
      expect(first.status).toBe(row.status);
      if (row.code) {
        expect(first.headers['content-type']).toMatch(/^application\/json/);
        expect(json(first).error.code).toBe(row.code);
      }
      if (row.status === 401 && !row.route?.includes('/slack/'))
        expect(first.headers).toHaveProperty('www-authenticate');
      if (row.status === 405) expect(first.headers.allow).toBe('GET, HEAD, POST');
      if (row.status === 503) expect(first.headers['retry-after']).toBe('60');
      row.check?.(first);
    },
  );

  it('an event the adapter cannot make a Request of is answered with a JSON error', async () => {
    const event = functionUrlEvent('GET', '/health', { headers: { 'x-bad': 'a\nb' } });
    const res = await viaLambda(event);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(json(res).error.code).toBe('invalid_request');
  });
});
