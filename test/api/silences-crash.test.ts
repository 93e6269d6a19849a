/**
 * `POST /silences` with an `Idempotency-Key`, through app.request on dynalite, when the process dies
 * (or a write's answer is lost) between its writes: the client's retry with the same key answers
 * with the silence the first attempt made, and there is one silence only, wherever it stopped.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../lib/api/app.ts';
import { systemClock } from '../../lib/clock.ts';
import type { Silence } from '../../lib/rules/silences.ts';
import { IDEMPOTENCY_LEASE_MS, IdempotencyStore } from '../../lib/state/idempotency.ts';
import { dyingClient } from '../helpers/dying-client.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, bearer, buildApi, JSON_TYPE } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
let table: string;
let healthy: ApiUnderTest;

beforeAll(async () => {
  table = await db.table();
  healthy = buildApi(emu, { table: { client: db.client, name: table } });
});

/** The API's table client, stopped after its `after`-th write (helpers/dying-client.ts). */
const stopping = (after: number, dies: boolean) => dyingClient(db.client, after, { dies });

async function post(app: ApiUnderTest['app'], token: string, key: string, body: unknown) {
  const res = await app.request('/silences', {
    method: 'POST',
    headers: { ...bearer(token), ...JSON_TYPE, 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { silence?: Silence } };
}

/** The API as a new process would be, `laterMs` on: the first attempt's lease has run out. */
function restarted(laterMs: number) {
  const now = () => Date.now() + laterMs;
  return createApiApp({
    ...healthy.deps,
    now,
    idempotency: new IdempotencyStore({
      client: db.client,
      tableName: table,
      clock: { ...systemClock, now },
    }),
  });
}

const silencesWith = async (reason: string) =>
  (await healthy.deps.silences.all()).filter((s) => s.reason === reason);

describe('POST /silences stopped between its writes, then retried with the same key', () => {
  it('a request that runs through writes the key, the audit, the silence, the outcome, the answer', async () => {
    const run = stopping(0, false);
    const api = buildApi(emu, { table: { client: run.client, name: table } });
    const body = { match: { types: ['paste'] }, until: 'PT1H', reason: 'through' };
    expect((await post(api.app, api.tokens.runbook, 'through', body)).status).toBe(201);
    expect(run.seen).toHaveLength(5);
  });

  for (const after of [1, 2, 3, 4, 5])
    for (const dies of [true, false])
      it(`${dies ? 'the process dies' : 'the answer is lost'} after write ${after}: one silence, the one answered`, async () => {
        const reason = `stop ${after} ${dies}`;
        const body = { match: { types: ['paste'], identifiers: [after] }, until: 'PT2H', reason };
        const key = `crash-${after}-${dies}`;
        const run = stopping(after, dies);
        const api = buildApi(emu, { table: { client: run.client, name: table } });
        const first = await post(api.app, api.tokens.runbook, key, body);
        // The client retries (a dead process answers nothing): a key whose claim was written and
        // never finished is taken over once its lease has run out; one freed, at once.
        const retryApp = dies || after === 1 ? restarted(IDEMPOTENCY_LEASE_MS + 1_000) : healthy.app;
        const retry = await post(retryApp, healthy.tokens.runbook, key, body);
        expect(retry.status).toBe(201);
        const made = await silencesWith(reason);
        expect(made).toHaveLength(1);
        expect(retry.json.silence?.id).toBe(made[0]?.id);
        if (!dies && first.status === 201) expect(first.json.silence?.id).toBe(made[0]?.id);
        // And again: the same answer.
        expect(await post(retryApp, healthy.tokens.runbook, key, body)).toEqual(retry);
        expect(await silencesWith(reason)).toHaveLength(1);
      });
});
