/**
 * The MSSP's security review (issue 49): a client bound to tenant A (Globex) walks every route of
 * the API with tenant B's (Initech's) keys, uids, logins, silence ids, action ids, asset ids and
 * names, through `app.request` and through the Lambda's handler (functions/api.ts, its real cold
 * start over the same table), and no answer holds anything of B's, none reaches the upstream or an
 * identity provider for B, and none confirms that B's ids exist: where B's id is answered 404, the
 * answer equals the one for an id that does not exist but for the id sent back. The list of
 * routes comes from the app, so a route added without a row here fails. Then what an adversary
 * would try beside the walk: replayed Idempotency-Keys, cursors of an unbound client's pages,
 * silences that name B some other way. The world (mssp-world.ts): the emulator's MSSP dataset,
 * dynalite, the identity providers' stand-in.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCursor, listCursor } from '../../lib/api/alerts.ts';
import type { FunctionUrlHandler } from '../../lib/api/lambda.ts';
import { PAGE_FILES } from '../../lib/console/page-packed.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { slackSigned } from '../helpers/slack-api.ts';
import { functionUrlEvent } from './function-url.ts';
import { bearer, JSON_TYPE } from './harness.ts';
import { A, B, type MsspWorld, msspWorld } from './mssp-world.ts';

const emu = useEmulator({ eventsPerTenant: 2, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const control = () => emu.running.emulator.control;
let w: MsspWorld;
let lambda: { handler: FunctionUrlHandler; app: { routes: { method: string; path: string }[] } };
const saved = { ...process.env };

beforeAll(async () => {
  w = await msspWorld(emu, db, await mkdtemp(join(tmpdir(), 'ea-mssp-')));
  // The handler's cold start reads them (its first import here: no module is loaded twice, so
  // an ApiError of a route loaded later is the one the app knows).
  Object.assign(process.env, w.lambdaEnv);
  lambda = (await import('../../functions/api.ts')) as never;
}, 20_000);

afterAll(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  w?.close();
  await w?.idp.close();
});

/** One request of the walk, as client A (or no client) sends it. */
interface Probe {
  method: string;
  /** Path and query, B's ids percent-encoded where they are a segment. */
  path: string;
  body?: unknown;
  /** Not A's bearer token: Slack's doors, which take a signature. */
  headers?: Record<string, string>;
  status: number;
  /**
   * B's values in the request and what stands in for them in a twin request naming nothing that
   * exists: the two answers must be equal once B's values sent back are replaced by the twin's.
   */
  twin?: [string, string][];
  /** The twin's path where swapping B's values in it would change more than they (an asset id). */
  twinPath?: string;
  /** The part of the answer to look for B's strings in (default: all of it). */
  scan?: (body: Record<string, unknown>) => unknown;
  /** What else "nothing of B's" means for this route's answer. */
  check?: (body: Record<string, unknown>) => void;
}

/** A route's tenant rule as the walk checks it: the probes, or why it has none of its own. */
type Row = ((w: MsspWorld) => Probe[]) | { middleware: string };

const NONE = {
  key: `${A.id}:paste/none/1`,
  uid: 'paste/none/2',
  tenant: 'Hooli',
  tenantId: '9999',
  login: 'kim@nowhere.test',
  domain: 'nowhere.test',
};
const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
const items = (body: Record<string, unknown>) => body.items as Record<string, unknown>[];

/**
 * The audit trail but A's own doings' targets: those are the ids A sent (B's among them, in the
 * walk), which `onlyA` checks were answered as ids that do not exist.
 */
const othersThanA = (body: Record<string, unknown>) =>
  items(body).map((e) => (e.who === 'a' ? { ...e, target: undefined } : e));

/** Only A's doings, and those that named B's ids ended as those that named nothing that exists. */
function onlyA(body: Record<string, unknown>) {
  const entries = items(body);
  expect(entries.filter((e) => e.who !== 'a')).toEqual([]);
  const mentions = MENTIONS_B(w);
  const results = (named: (t: string) => boolean) =>
    new Set(entries.filter((e) => named(String(e.target))).map((e) => `${e.what}: ${e.result}`));
  const nothing = results((t) => /none|Hooli|9999|nowhere|0000$/.test(t));
  for (const result of results((t) => mentions(t) !== undefined)) expect(nothing).toContain(result);
}

/** Every route of the app (method and path, as `app.routes` lists it) and its rule. */
const ROUTES: Record<string, Row> = {
  'ALL /*': { middleware: 'the request log and 405s: each route’s probes pass through it' },
  'ALL /silences': { middleware: 'the silence dry run: probed under POST /silences?dryRun=true' },
  'GET /health': () => [{ method: 'GET', path: '/health', status: 200 }],
  'GET /openapi.json': () => [{ method: 'GET', path: '/openapi.json', status: 200 }],
  'GET /whoami': () => [
    {
      method: 'GET',
      path: '/whoami',
      status: 200,
      check: (body) => expect((body.grants as { tenants: number[] }[])[0]?.tenants).toEqual([A.id]),
    },
  ],
  'GET /console': () => [{ method: 'GET', path: '/console', status: 200 }],
  'GET /console/:file': () =>
    Object.keys(PAGE_FILES)
      .filter((f) => f !== 'index.html')
      .map((file) => ({ method: 'GET', path: `/console/${file}`, status: 200 })),
  'GET /assets/:asset_id/audit': (w) => [
    {
      method: 'GET',
      path: `/assets/${w.b.assetId}/audit`,
      status: 200,
      // B's asset was toggled as Initech: none of it shows; only A's own toggles of that id could.
      check: (body) => expect(items(body).filter((e) => e.client !== 'a')).toEqual([]),
    },
  ],
  'POST /assets/:asset_id/toggle': (w) => [
    // As A's tenant (its one): with A's token, which reaches only A's assets.
    {
      method: 'POST',
      path: `/assets/${w.b.assetId}/toggle`,
      body: { is_disabled: true },
      status: 404,
      twin: [[String(w.b.assetId), '999999']],
    },
    ...[B.name, B.name.toUpperCase(), String(B.id), ` ${B.id} `].map(
      (tenant): Probe => ({
        method: 'POST',
        path: `/assets/${w.b.assetId}/toggle?tenant=${encodeURIComponent(tenant)}`,
        body: { is_disabled: true },
        status: 404,
        twin: [[tenant, NONE.tenant]],
        twinPath: `/assets/${w.b.assetId}/toggle?tenant=${NONE.tenant}`,
      }),
    ),
  ],
  'GET /alerts': () => [
    {
      method: 'GET',
      path: '/alerts',
      status: 200,
      check: (body) => expect(items(body).every((i) => String(i.key).startsWith(`${A.id}:`))).toBe(true),
    },
    ...[B.name, B.name.toLowerCase(), String(B.id), `0${B.id}`].map(
      (tenant): Probe => ({
        method: 'GET',
        path: `/alerts?tenant=${encodeURIComponent(tenant)}`,
        status: 404,
        twin: [[tenant, NONE.tenant]],
      }),
    ),
  ],
  'GET /alerts/:key': (w) =>
    [
      w.b.key,
      w.b.uid,
      w.b.sharedKey,
      // Another tenant's prefix on either's uid.
      `${B.id}:${w.a.uid}`,
      `${A.id}:${w.b.uid}`,
      w.b.key.toUpperCase(),
    ].map((key) => ({
      method: 'GET',
      path: `/alerts/${encodeURIComponent(key)}`,
      status: 404,
      twin: [[key, NONE.key]],
    })),
  'GET /audit': () => [{ method: 'GET', path: '/audit', status: 200, scan: othersThanA, check: onlyA }],
  'GET /silences': () =>
    ['/silences', '/silences?all=true'].map((path) => ({
      method: 'GET',
      path,
      status: 200,
      check: (body) =>
        expect(items(body).every((s) => JSON.stringify(s.match).includes(`[${A.id}]`))).toBe(true),
    })),
  'POST /silences': () => [
    ...[
      { tenants: [B.name] },
      { tenants: [B.name.toLowerCase()] },
      { tenants: [String(B.id)] },
      { tenants: [B.id, A.id] },
      { sources: [`tenant:${B.id}`] },
      { sources: [`group:${B.id}:1`] },
      { sources: [`credentials:${B.id}:${B.domain}`] },
    ].map(
      (match): Probe => ({
        method: 'POST',
        path: '/silences',
        body: { match, until: 'PT1H', reason: 'mssp review' },
        status: 404,
        twin: [
          [B.name, NONE.tenant],
          [B.name.toLowerCase(), NONE.tenant],
          [String(B.id), NONE.tenantId],
          [B.domain, NONE.domain],
        ],
      }),
    ),
    // The top level, which A is not bound to, is as another tenant.
    {
      method: 'POST',
      path: '/silences',
      body: { match: { topLevel: true }, until: 'PT1H', reason: 'mssp review' },
      status: 404,
    },
    // The dry run (the ALL /silences middleware): A's alerts only, and B named is 404.
    {
      method: 'POST',
      path: '/silences?dryRun=true',
      body: { match: {} },
      status: 200,
      check: (body) => expect(body).toEqual({ wouldHold: 2, of: 2 }),
    },
    {
      method: 'POST',
      path: '/silences?dryRun=true',
      body: { match: { sources: [`tenant:${B.id}`] } },
      status: 404,
      twin: [[String(B.id), NONE.tenantId]],
    },
  ],
  'DELETE /silences/:id': (w) =>
    [w.b.silenceId, w.b.sourcesSilenceId].map((id) => ({
      method: 'DELETE',
      path: `/silences/${id}`,
      status: 404,
      twin: [[id, `${id.slice(0, -4)}0000`]],
    })),
  'GET /status': () => [
    {
      method: 'GET',
      path: '/status',
      status: 200,
      check: (body) => {
        expect(Object.keys(body).sort()).toEqual(['identityProviders', 'streams']);
        const tenants = [...(body.streams as never[]), ...(body.identityProviders as never[])].map(
          (s: { tenant: { id: number } | null }) => s.tenant?.id,
        );
        expect(new Set(tenants)).toEqual(new Set([A.id]));
      },
    },
  ],
  'GET /lookup': () => [
    ...[
      `domain=${B.domain}`,
      `domain=mail.${B.domain}`,
      `account=${B.login}`,
      `account=${B.login.toUpperCase()}`,
      `keyword=*@${B.domain}`,
      `keyword=*.${B.domain}`,
    ].map(
      (query): Probe => ({
        method: 'GET',
        path: `/lookup?${query}`,
        status: 404,
        twin: [
          [B.login.toUpperCase(), NONE.login.toUpperCase()],
          [B.login, NONE.login],
          [B.domain, NONE.domain],
        ],
      }),
    ),
    ...[B.name, String(B.id)].map(
      (tenant): Probe => ({
        method: 'GET',
        path: `/lookup?domain=${A.domain}&tenant=${tenant}`,
        status: 404,
        twin: [[tenant, NONE.tenant]],
      }),
    ),
  ],
  'POST /events/actions': (w) => [
    {
      method: 'POST',
      path: '/events/actions',
      body: {
        action: 'ignore',
        uids: [w.b.key, w.b.uid, w.b.sharedKey, `${B.id}:${w.a.uid}`, `${A.id}:${w.b.uid}`],
      },
      status: 200,
      twin: [
        [w.b.key, `${NONE.key}a`],
        [w.b.sharedKey, `${NONE.key}b`],
        [`${B.id}:${w.a.uid}`, `${NONE.key}c`],
        [`${A.id}:${w.b.uid}`, `${NONE.key}d`],
        [w.b.uid, NONE.uid],
      ],
      check: (body) =>
        expect((body.results as { error?: string }[]).every((r) => r.error === 'not_found')).toBe(true),
    },
  ],
  'POST /identity/actions': () => [
    {
      method: 'POST',
      path: '/identity/actions',
      body: { action: 'revokeSessions', logins: [B.login] },
      status: 200,
      twin: [[B.login, NONE.login]],
    },
    ...[B.name, B.name.toLowerCase(), String(B.id), B.id].map(
      (tenant): Probe => ({
        method: 'POST',
        path: '/identity/actions',
        body: { action: 'disable', logins: [B.login], tenant },
        status: 404,
        twin: [
          [B.login, NONE.login],
          [String(tenant), NONE.tenantId],
        ],
      }),
    ),
  ],
  'GET /identity/actions/:id': (w) => [
    {
      method: 'GET',
      path: `/identity/actions/${encodeURIComponent(w.b.actionId)}`,
      status: 404,
      twin: [[w.b.actionId, `${w.b.actionId.slice(0, -4)}0000`]],
    },
  ],
  'POST /destinations/:name/test': () => [{ method: 'POST', path: '/destinations/hook/test', status: 403 }],
  'POST /deliveries/retry': (w) => [
    {
      method: 'POST',
      path: '/deliveries/retry',
      body: { ids: [w.b.deliveryId] },
      status: 403,
      twin: [[w.b.deliveryId, 'hook#event#none']],
    },
  ],
  // Slack's doors take Slack's signature, not a token: unsigned, or signed with A's token as the
  // secret, a request naming B's item is refused before anything is read.
  'POST /slack/interactions': (w) => {
    const body = `payload=${encodeURIComponent(
      JSON.stringify({
        type: 'block_actions',
        user: { id: 'U0ANA' },
        team: { id: 'T0MSSP' },
        actions: [{ action_id: 'exposure:ignore', block_id: `exposure:${w.b.key}` }],
      }),
    )}`;
    return [form, slackSigned(body, w.tokens.a)].map(
      (headers): Probe => ({ method: 'POST', path: '/slack/interactions', headers, body, status: 401 }),
    );
  },
  'POST /slack/commands': () => [
    {
      method: 'POST',
      path: '/slack/commands',
      headers: form,
      body: `team_id=T0MSSP&user_id=U0ANA&command=%2Fexposure&text=${encodeURIComponent(`lookup ${B.login}`)}`,
      status: 401,
    },
  ],
};

function routesOf(app: { routes: { method: string; path: string }[] }): string[] {
  return [...new Set(app.routes.map((r) => `${r.method} ${r.path}`))];
}

interface Answer {
  status: number;
  text: string;
}

/** How a walk sends a request: through the app, or as a Function URL event to the handler. */
type Door = (probe: Omit<Probe, 'status'>) => Promise<Answer>;

function request(probe: Omit<Probe, 'status'>, token: string) {
  const body =
    probe.body === undefined || typeof probe.body === 'string' ? probe.body : JSON.stringify(probe.body);
  const headers = probe.headers ?? { ...bearer(token), ...(body === undefined ? {} : JSON_TYPE) };
  return { body, headers };
}

const viaApp: Door = async (probe) => {
  const { body, headers } = request(probe, w.tokens.a);
  const res = await w.app.request(probe.path, {
    method: probe.method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  return { status: res.status, text: await res.text() };
};

const viaLambda: Door = async (probe) => {
  const { body, headers } = request(probe, w.tokens.a);
  const [path, query] = probe.path.split('?') as [string, string | undefined];
  const res = await lambda.handler(
    functionUrlEvent(probe.method, path, {
      headers,
      ...(body === undefined ? {} : { body }),
      ...(query ? { query } : {}),
    }),
  );
  const text = res.isBase64Encoded
    ? Buffer.from(res.body ?? '', 'base64').toString('utf8')
    : (res.body ?? '');
  return { status: res.statusCode ?? 0, text };
};

/** `text` with each of `pairs`' first replaced by its second (as sent, JSON-escaped, percent-encoded). */
function swapped(text: string, pairs: readonly [string, string][]): string {
  let out = text;
  for (const [from, to] of pairs) {
    for (const [f, t] of [
      [encodeURIComponent(from), encodeURIComponent(to)],
      [JSON.stringify(from).slice(1, -1), JSON.stringify(to).slice(1, -1)],
      [from, to],
    ] as const)
      out = out.split(f).join(t);
  }
  return out;
}

const MENTIONS_B = (w: MsspWorld) => {
  const strings = w.bStrings().map((s) => s.toLowerCase());
  return (text: string): string | undefined => {
    const lower = text.toLowerCase();
    const found = strings.find((s) => lower.includes(s));
    if (found) return found;
    return /(?<![\d])1003(?![\d])/.test(text) ? '1003' : undefined;
  };
};

/** Walks every probe of every route through `door`; the failures, named. */
async function walk(door: Door, routes: readonly string[]): Promise<string[]> {
  const mentions = MENTIONS_B(w);
  const failures: string[] = [];
  for (const route of routes) {
    const row = ROUTES[route];
    if (!row || !(typeof row === 'function')) continue;
    for (const probe of row(w)) {
      const name = `${route}: ${probe.method} ${probe.path} ${JSON.stringify(probe.body ?? '')}`;
      const got = await door(probe);
      if (got.status !== probe.status) failures.push(`${name}: ${got.status} ${got.text.slice(0, 300)}`);
      const shown = probe.twin ? swapped(got.text, probe.twin) : got.text;
      const scanned =
        probe.scan && got.status < 300 ? JSON.stringify(probe.scan(JSON.parse(got.text))) : shown;
      const named = mentions(scanned);
      if (named) failures.push(`${name}: the answer holds B's ${JSON.stringify(named)}`);
      if (probe.twin) {
        const twin = await door({
          ...probe,
          path: probe.twinPath ?? swapped(probe.path, probe.twin),
          ...(probe.body === undefined
            ? {}
            : { body: JSON.parse(swapped(JSON.stringify(probe.body), probe.twin)) }),
        });
        if (twin.status !== got.status || twin.text !== shown)
          failures.push(`${name}: answered unlike an id that does not exist: ${shown} / ${twin.text}`);
      }
      if (probe.check && got.status < 300) {
        try {
          probe.check(JSON.parse(got.text));
        } catch (error) {
          failures.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
        }
      }
    }
  }
  return failures;
}

/** What reached the upstream or an identity provider naming B, since `since` requests of the latter. */
function reachedForB(since: number): string[] {
  const upstream = control()
    .calls()
    .filter((c) => c.tenantId === B.id || JSON.stringify(c.input ?? '').includes(w.b.uid))
    .map((c) => `upstream ${c.method} ${c.path} for ${c.tenantId}`);
  const providers = w.idp.requests
    .slice(since)
    .filter((r) => JSON.stringify(r).toLowerCase().includes(B.login))
    .map((r) => `provider ${r.method} ${r.path}`);
  return [...upstream, ...providers];
}

describe('a client bound to A walks every route with B’s ids', () => {
  it('every route of the app has a row here, and every row a route', () => {
    const routes = routesOf(w.app);
    expect(routes.filter((r) => !(r in ROUTES))).toEqual([]);
    expect(Object.keys(ROUTES).filter((r) => !routes.includes(r))).toEqual([]);
    // The Lambda serves the same routes (Slack's with SLACK_ACTIONS).
    expect(routesOf(lambda.app).sort()).toEqual(routes.sort());
  });

  it('through app.request: nothing of B’s answered, confirmed or sent upstream', async () => {
    control().clearLog();
    const since = w.idp.requests.length;
    const failures = await walk(viaApp, routesOf(w.app));
    expect(w.logged).toEqual([]);
    expect(failures).toEqual([]);
    expect(reachedForB(since)).toEqual([]);
    // B's silences still hold, B's action is untouched.
    const left = await w.app.request('/silences', { headers: bearer(w.tokens.root) });
    const ids = ((await left.json()) as { items: { id: string }[] }).items.map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining([w.b.silenceId, w.b.sourcesSilenceId]));
    expect(w.idp.actions.filter((a) => a.login === B.login).map((a) => a.action)).toEqual(['revokeSessions']);
  });

  it('through the Lambda’s handler: the same', async () => {
    control().clearLog();
    const since = w.idp.requests.length;
    expect(await walk(viaLambda, routesOf(lambda.app))).toEqual([]);
    expect(reachedForB(since)).toEqual([]);
  });
});

describe('as an adversary beside the walk', () => {
  const send = (token: string, method: string, path: string, body?: unknown, key?: string) =>
    w.app.request(path, {
      method,
      headers: { ...bearer(token), ...JSON_TYPE, ...(key ? { 'Idempotency-Key': key } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('an Idempotency-Key B’s client used, replayed by A with the same body, is A’s own request', async () => {
    const res = await send(
      w.tokens.a,
      'POST',
      '/silences',
      { match: { types: ['leak'] }, until: 'PT1H', reason: 'b replay bait' },
      w.b.idempotencyKey,
    );
    expect(res.status).toBe(201);
    const { silence } = (await res.json()) as { silence: { id: string; match: unknown; by?: string } };
    expect(silence.match).toEqual({ types: ['leak'], tenants: [A.id] });
    const again = await send(
      w.tokens.a,
      'POST',
      '/silences',
      { match: { types: ['leak'] }, until: 'PT1H', reason: 'b replay bait' },
      w.b.idempotencyKey,
    );
    expect(((await again.json()) as { silence: { id: string } }).silence.id).toBe(silence.id);
    expect((await send(w.tokens.a, 'DELETE', `/silences/${silence.id}`)).status).toBe(200);
  });

  it('cursors of an unbound client’s pages, or made up, page through A’s items only', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const cursors = [
      listCursor({ month }),
      listCursor({ month: '2020-01' }),
      listCursor({ month, below: `${month}~` }),
    ];
    for (const cursor of cursors) {
      const res = await send(w.tokens.a, 'GET', `/alerts?cursor=${cursor}`);
      expect(res.status).toBe(200);
      const keys = ((await res.json()) as { items: { key: string }[] }).items.map((i) => i.key);
      expect(
        keys.every((k) => k.startsWith(`${A.id}:`)),
        keys.join(' '),
      ).toBe(true);
    }
    // A cursor of a client bound to several tenants (each copy's position), B's among them.
    const merged = Buffer.from(
      JSON.stringify({ v: 2, p: { [B.id]: { month }, [A.id]: { month } } }),
    ).toString('base64url');
    const res = await send(w.tokens.a, 'GET', `/alerts?cursor=${merged}`);
    const text = await res.text();
    expect(MENTIONS_B(w)(text)).toBeUndefined();
    expect([200, 400]).toContain(res.status);
    const future = '9999-01-01T00:00:00.000Z';
    for (const cursor of [auditCursor({}), auditCursor({ a: future, s: future, e: future, r: future })]) {
      const res = await send(w.tokens.a, 'GET', `/audit?cursor=${cursor}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(MENTIONS_B(w)(JSON.stringify(othersThanA(body)))).toBeUndefined();
      onlyA(body);
    }
  });

  it('a bare uid both tenants hold is A’s item to A, and ambiguous to a client bound to both: not_found, no upstream call', async () => {
    control().clearLog();
    const act = async (token: string) =>
      (
        (await (
          await send(token, 'POST', '/events/actions', { action: 'ignore', uids: [w.shared] })
        ).json()) as { results: { uid: string; ok: boolean; error?: string }[] }
      ).results;
    expect(await act(w.tokens.a)).toEqual([{ uid: w.shared, ok: true }]);
    expect(
      control()
        .calls('eventActions')
        .map((c) => c.tenantId),
    ).toEqual([A.id]);
    control().clearLog();
    expect(await act(w.tokens.both)).toEqual([{ uid: w.shared, ok: false, error: 'not_found' }]);
    expect(control().calls()).toEqual([]);
  });

  it('an item’s detail lists the actions on that item, not those on the top level’s or B’s item of the same uid', async () => {
    const act = (token: string, uid: string) =>
      send(token, 'POST', '/events/actions', { action: 'ignore', uids: [uid] });
    expect((await act(w.tokens.root, w.shared)).status).toBe(200);
    expect((await act(w.tokens.root, w.b.sharedKey)).status).toBe(200);
    expect((await act(w.tokens.a, w.a.sharedKey)).status).toBe(200);
    const detail = (await (
      await send(w.tokens.a, 'GET', `/alerts/${encodeURIComponent(w.a.sharedKey)}`)
    ).json()) as { actions: { by: string }[]; audit: { who: string }[] };
    expect(detail.actions.length).toBeGreaterThan(0);
    expect(detail.actions.filter((a) => a.by !== 'a')).toEqual([]);
    expect(detail.audit.map((e) => e.who)).not.toContain('root');
  });
});
