/**
 * `Idempotency-Key` on the POSTs that act (toggle, silences, event actions), through app.request
 * and the Lambda handler, with the keys in dynalite: a repeat answers as the first did and does
 * nothing more; another request under the same key is 422 and does nothing (audited); a repeat
 * of a request still running waits for its answer, or is 409 after 5 s; keys are per client, and
 * no client's name makes its keys another's; a key is forgotten after 24 hours.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { DynamoRefusalAudit } from '../../lib/state/audit.ts';
import { IdempotencyStore } from '../../lib/state/idempotency.ts';
import type { EventItem } from '../../lib/upstream/schemas.ts';
import { fakeClock, skipClock } from '../helpers/clock.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { functionUrlEvent } from './function-url.ts';
import { type ApiUnderTest, acmeAssetIds, bearer, buildApi, JSON_TYPE, newToken } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 8, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const control = () => emu.running.emulator.control;
const uidAt = (i: number) =>
  (emu.running.emulator.dataset.tenant('acme').events[i]?.item as unknown as EventItem | undefined)?.metadata
    .uid ?? '';
const tokens = { soar: newToken(), soarX: newToken() };
let api: ApiUnderTest;
let table: string;

beforeAll(async () => {
  table = await db.table();
  api = buildApi(emu, {
    table: { client: db.client, name: table },
    // Nothing here is about the upstream's timeouts: the harness's short ones (400 ms an attempt)
    // would fail a toggle on a busy machine.
    upstream: { timeoutMs: 10_000 },
    upstreamTimeoutMs: 20_000,
    // Two clients whose names and keys would join into the same text: `soar` + `x:k9`, `soar:x` + `k9`.
    clients: { soar: sha256Hex(tokens.soar), 'soar:x': sha256Hex(tokens.soarX) },
  });
});

type App = ReturnType<typeof createApiApp>;
/** An answer's JSON: results, a silence, an asset, or an error. */
type Answer = Record<string, unknown> & { error?: { code: string }; results?: unknown };

async function post(path: string, body: string, key: string, token = api.tokens.runbook, app: App = api.app) {
  const res = await app.request(path, {
    method: 'POST',
    headers: { ...bearer(token), ...JSON_TYPE, 'Idempotency-Key': key },
    body,
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

async function viaLambda(
  path: string,
  body: string,
  key: string,
  token = api.tokens.runbook,
  app: App = api.app,
) {
  const res = await createLambdaHandler(app)(
    functionUrlEvent('POST', path, {
      headers: { ...bearer(token), ...JSON_TYPE, 'Idempotency-Key': key },
      body,
      base64: true,
    }),
  );
  return { status: res.statusCode, body: JSON.parse(res.body ?? 'null') as Answer };
}

const refusals = () => new DynamoRefusalAudit(db.client, table).list();

describe('the same key again', () => {
  it('toggle: the same body (keys reordered, spaced) answers as the first did, through either door; another body is 422, changing nothing', async () => {
    const id = acmeAssetIds(emu)[1] as number;
    const path = `/assets/${id}/toggle`;
    const calls = () => control().calls('assetToggle').length;
    const before = calls();
    const first = await post(path, '{"is_disabled":true}', 'toggle-1');
    expect(first.status).toBe(200);
    const again = await viaLambda(path, ' { "is_disabled" : true } ', 'toggle-1');
    expect(again).toEqual(first);
    expect(calls() - before).toBe(1);

    const other = await post(path, '{"is_disabled":false}', 'toggle-1');
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe('idempotency_key_reused');
    // The same key on another asset is another request too.
    const elsewhere = await viaLambda(
      `/assets/${acmeAssetIds(emu)[2]}/toggle`,
      '{"is_disabled":true}',
      'toggle-1',
    );
    expect(elsewhere.status).toBe(422);
    expect(calls() - before).toBe(1);
    expect(emu.running.emulator.dataset.tenant('acme').assets.get(id)?.is_disabled).toBe(true);
    expect(await refusals()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ client: 'runbook', path, code: 'idempotency_key_reused', status: 422 }),
      ]),
    );
    await post(path, '{"is_disabled":false}', 'toggle-2');
  });

  it('silences: a repeat makes no second silence; another body makes none and is refused', async () => {
    const body = { match: { types: ['paste'] }, until: 'PT1H', reason: 'idempotency' };
    const count = async () => (await api.deps.silences.all()).length;
    const before = await count();
    const first = await post('/silences', JSON.stringify(body), 'silence-1');
    expect(first.status).toBe(201);
    const again = await viaLambda(
      '/silences',
      JSON.stringify({ reason: 'idempotency', until: 'PT1H', match: { types: ['paste'] } }),
      'silence-1',
    );
    expect(again).toEqual(first);
    const other = await post('/silences', JSON.stringify({ ...body, reason: 'another' }), 'silence-1');
    expect(other.status).toBe(422);
    expect(await count()).toBe(before + 1);
  });

  it('events: a repeat acts once; another body under the key is 422 and acts on nothing', async () => {
    const calls = () => control().calls('eventActions').length;
    const before = calls();
    const first = await post(
      '/events/actions',
      JSON.stringify({ action: 'ignore', uids: [uidAt(0)] }),
      'act-1',
    );
    expect(first).toEqual({ status: 200, body: { results: [{ uid: uidAt(0), ok: true }] } });
    expect(
      await viaLambda('/events/actions', JSON.stringify({ uids: [uidAt(0)], action: 'ignore' }), 'act-1'),
    ).toEqual(first);
    const other = await post(
      '/events/actions',
      JSON.stringify({ action: 'ignore', uids: [uidAt(1)] }),
      'act-1',
    );
    expect(other.status).toBe(422);
    expect(calls() - before).toBe(1);
    expect(emu.running.emulator.dataset.tenant('acme').events[1]?.isIgnored).toBe(false);
  });

  it('a request that failed frees its key: the same key tries again', async () => {
    const id = acmeAssetIds(emu)[3] as number;
    control().addFault({ endpoint: 'assetToggle', status: 500, times: 2 });
    const failed = await post(`/assets/${id}/toggle`, '{"is_disabled":true}', 'retry-1');
    expect(failed.status).toBe(502);
    const retried = await post(`/assets/${id}/toggle`, '{"is_disabled":true}', 'retry-1');
    expect(retried.status).toBe(200);
    await post(`/assets/${id}/toggle`, '{"is_disabled":false}', 'retry-2');
  });
});

describe('keys are per client', () => {
  it('another client may use the same key; no name makes two clients share one', async () => {
    const act = (token: string, uid: string, key: string) =>
      post('/events/actions', JSON.stringify({ action: 'remediate', uids: [uid] }), key, token);
    const a = await act(tokens.soar, uidAt(2), 'x:k9');
    const b = await act(tokens.soarX, uidAt(3), 'k9');
    const c = await act(api.tokens.chatbot, uidAt(4), 'x:k9');
    expect(a.body.results).toEqual([{ uid: uidAt(2), ok: true }]);
    expect(b.body.results).toEqual([{ uid: uidAt(3), ok: true }]);
    expect(c.body.results).toEqual([{ uid: uidAt(4), ok: true }]);
    const events = emu.running.emulator.dataset.tenant('acme').events;
    expect([2, 3, 4].map((i) => events[i]?.isRemediated)).toEqual([true, true, true]);
    const trail = (await api.deps.act?.actions.auditTrail()) ?? [];
    const ids = trail.filter((e) => e.type === 'remediate').map((e) => [e.by, e.id]);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(3);
    expect(ids.map(([by]) => by).sort()).toEqual(['chatbot', 'soar', 'soar:x']);
  });
});

describe('while the first is still running', () => {
  it('a repeat waits for its answer; after 5 s of waiting it is 409, and later answers as the first did', async () => {
    const body = JSON.stringify({ action: 'ignore', uids: [uidAt(5)] });
    const calls = () => control().calls('eventActions').length;
    const before = calls();
    // The first's upstream call is held until the test lets it go: the first is still running
    // for every step below, however slow the machine.
    const act = api.deps.act as NonNullable<typeof api.deps.act>;
    const upstream = act.upstream;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = Object.create(upstream, {
      eventActions: {
        value: async (...args: Parameters<typeof upstream.eventActions>) => {
          await gate;
          return upstream.eventActions(...args);
        },
      },
    }) as typeof upstream;
    const first = post(
      '/events/actions',
      body,
      'slow-1',
      api.tokens.runbook,
      createApiApp({ ...api.deps, act: { ...act, upstream: held } }),
    );
    // Until the first holds the key.
    const scope = { client: 'runbook', route: 'POST /events/actions', key: 'slow-1' };
    while (!(await api.deps.idempotency?.get(scope))) await new Promise((r) => setTimeout(r, 10));
    // Waits (for real, on a clock whose 5 s never run out) while the first runs, then answers as it did.
    const still = fakeClock();
    let waits = 0;
    const patient = createApiApp({
      ...api.deps,
      now: still.now,
      sleep: (ms) => {
        waits += 1;
        return still.sleep(ms);
      },
    });
    const waited = viaLambda('/events/actions', body, 'slow-1', api.tokens.runbook, patient);
    // A clock whose waits pass at once: the 5 s are up before the first is.
    const clock = skipClock();
    const impatient = createApiApp({ ...api.deps, now: clock.now, sleep: (ms) => clock.sleep(ms) });
    const asked = clock.now();
    const refused = await post('/events/actions', body, 'slow-1', api.tokens.runbook, impatient);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe('idempotency_key_in_progress');
    expect(clock.now() - asked).toBeGreaterThanOrEqual(5_000);
    while (waits === 0) await new Promise((r) => setTimeout(r, 10));
    release();
    const answered = await first;
    expect(answered).toEqual({ status: 200, body: { results: [{ uid: uidAt(5), ok: true }] } });
    expect(await waited).toEqual(answered);
    expect(await post('/events/actions', body, 'slow-1', api.tokens.runbook, impatient)).toEqual(answered);
    expect(calls() - before).toBe(1);
  });
});

describe('after 24 hours', () => {
  it('a key is forgotten: the same key with another body acts', async () => {
    const id = acmeAssetIds(emu)[0] as number;
    const path = `/assets/${id}/toggle`;
    expect((await post(path, '{"is_disabled":true}', 'day-1')).status).toBe(200);
    const later = { now: () => Date.now() + 24 * 3600_000 + 1_000 };
    const tomorrow = createApiApp({
      ...api.deps,
      idempotency: new IdempotencyStore({
        client: db.client,
        tableName: table,
        clock: { ...later, sleep: async () => {} },
      }),
    });
    const res = await post(path, '{"is_disabled":false}', 'day-1', api.tokens.runbook, tomorrow);
    expect(res.status).toBe(200);
    expect(emu.running.emulator.dataset.tenant('acme').assets.get(id)?.is_disabled).toBe(false);
  });
});
