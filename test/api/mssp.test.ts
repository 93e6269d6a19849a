/**
 * The MSSP's security review (issue 49): a client bound to tenant A (Globex) walks every route of
 * the API with tenant B's (Initech's) keys, uids, logins, silence ids, action ids, asset ids and
 * names, through `app.request` and through the Lambda's handler (functions/api.ts, its real cold
 * start over the same table), and no answer holds anything of B's, none reaches the upstream or an
 * identity provider for B, and none confirms that B's ids exist: where B's id is answered 404, the
 * answer equals the one for an id that does not exist but for the id sent back. The list of
 * routes comes from the app, so a route added without a row here fails. Then what an adversary
 * would try beside the walk: replayed Idempotency-Keys, cursors of an unbound client's pages,
 * silences that name B some other way, a uid both tenants hold. The table of routes is
 * mssp-routes.ts; the world, mssp-world.ts: the emulator's MSSP dataset, dynalite, the identity
 * providers' stand-in.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCursor, listCursor } from '../../lib/api/alerts.ts';
import type { FunctionUrlHandler } from '../../lib/api/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { functionUrlEvent } from './function-url.ts';
import { bearer, JSON_TYPE } from './harness.ts';
import { mentionsOfB, onlyA, othersThanA, type Probe, ROUTES } from './mssp-routes.ts';
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

/** Walks every probe of every route through `door`; the failures, named. */
async function walk(door: Door, routes: readonly string[]): Promise<string[]> {
  const mentions = mentionsOfB(w);
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
    expect(ids).toEqual(expect.arrayContaining([w.b.silenceId, w.b.sourcesSilenceId, w.b.mixedSilenceId]));
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
    expect(mentionsOfB(w)(text)).toBeUndefined();
    expect([200, 400]).toContain(res.status);
    const future = '9999-01-01T00:00:00.000Z';
    for (const cursor of [auditCursor({}), auditCursor({ a: future, s: future, e: future, r: future })]) {
      const res = await send(w.tokens.a, 'GET', `/audit?cursor=${cursor}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(mentionsOfB(w)(JSON.stringify(othersThanA(body)))).toBeUndefined();
      // The first page holds A's tries at B's ids (the walks'), each ended as for an id of nothing.
      const tries = onlyA(w)(body);
      if (cursor === auditCursor({})) expect(tries).toBeGreaterThan(0);
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
