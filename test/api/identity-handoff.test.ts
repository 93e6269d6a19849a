/**
 * Account actions as on AWS, where only the workers read the identity providers' secrets: the API
 * built as its Lambda builds it (createApiDeps, no providers), called through the Lambda handler
 * with Function URL events and through `app.request`, records the action and hands its id to a
 * worker (202); the events worker (functions/worker.ts, a config with identity and no
 * actions.slack) takes the work from its queue message and acts, once, however often the message
 * comes; `GET /identity/actions/{id}` follows it from under way to done. Against dynalite, the
 * emulator and the providers' stand-in over HTTP.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import type { SlackWork } from '../../lib/actions/slack-work.ts';
import { createApiApp } from '../../lib/api/app.ts';
import { sha256Hex } from '../../lib/api/auth.ts';
import { createApiDeps } from '../../lib/api/deps.ts';
import { createLambdaHandler } from '../../lib/api/lambda.ts';
import { systemClock } from '../../lib/clock.ts';
import { ALL_ENTRA_ROLES } from '../../lib/emulator/identity/index.ts';
import { readEnvironment } from '../../lib/env.ts';
import { IdentityStore } from '../../lib/identity/store.ts';
import { memoryLogger } from '../../lib/log.ts';
import { CatalogStore } from '../../lib/state/catalog.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from '../functions/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type IdentityProviders, identityProviders } from '../helpers/identity-providers.ts';
import { functionUrlEvent } from './function-url.ts';
import { newToken } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 1, lateMatchesPerTenant: 0, credentials: 0 });
const db = useDynalite();
const TOKEN = newToken();
const LOGINS = ['kim@acme.test', 'lee@acme.test'];
let idp: IdentityProviders;
let table: string;
let app: ReturnType<typeof createApiApp>;
let handler: ReturnType<typeof createLambdaHandler>;
let close: () => void;
const handed: SlackWork[] = [];

beforeAll(async () => {
  idp = await identityProviders({
    entra: { roles: ALL_ENTRA_ROLES, users: LOGINS.map((userPrincipalName) => ({ userPrincipalName })) },
  });
  table = await db.table();
  const io = { client: db.client, tableName: table, clock: systemClock };
  // What a credentials poll leaves: the catalog (identity at the top level), each login's verdict.
  await new CatalogStore(io).write({
    streams: ['credentials:acme.test'],
    destinations: ['local'],
    configSilences: [],
    followUps: [],
    identity: [{ scope: 'top', provider: 'corp', type: 'entra' }],
  });
  await new IdentityStore(io).keepVerdicts(
    LOGINS.map((login, i) => ({
      key: `cred-${i}`,
      scope: 'top' as const,
      login,
      verdict: {
        provider: 'corp',
        verdict: 'at_risk' as const,
        userId: idp.stand.entra.user(login)?.id as string,
        leakDate: '2026-01-02',
      },
    })),
    true,
  );
  const env = readEnvironment({
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    TABLE_NAME: table,
    DYNAMODB_ENDPOINT: db.endpoint,
  });
  const deps = await createApiDeps(
    env,
    { apiClients: { soar: { digest: sha256Hex(TOKEN), scopes: ['identity:act', 'read'] } } },
    { logger: memoryLogger('info') },
  );
  close = deps.close;
  // The queue, as the Lambda's hand-off would fill it: the work as JSON.
  app = createApiApp({
    ...deps,
    handOff: async (work) => {
      handed.push(JSON.parse(JSON.stringify(work)));
    },
  });
  handler = createLambdaHandler(app);
});
afterAll(async () => {
  close?.();
  await idp.close();
});

const headers = (key?: string) => ({
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  ...(key ? { 'idempotency-key': key } : {}),
});
const viaLambda = async (method: string, path: string, body?: unknown, key?: string) => {
  const res = await handler(
    functionUrlEvent(method, path, {
      headers: headers(key),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
  return { status: res.statusCode, body: JSON.parse(res.body ?? '{}') };
};

/** The events worker, as Lambda runs it, given these queue messages. */
async function runWorker(messages: unknown[]) {
  const dir = await mkdtemp(join(tmpdir(), 'ea-identity-handoff-'));
  const secrets = join(dir, 'secrets.json');
  await writeFile(secrets, JSON.stringify(idp.secrets));
  const vars = await lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table,
    config: {
      sources: { credentials: { domains: ['acme.test'], lookback: 'P1D' } },
      destinations: { local: { type: 'console' } },
      routes: [{ name: 'all', to: ['local'] }],
      identity: { providers: idp.providers({ entra: ['acme.test'] }) },
    },
    extra: { SECRETS_FILE: secrets },
  });
  return withEnvironment(vars, async () => {
    const worker = await createWorkerHandler('events');
    return worker({ Records: messages.map((m) => sqsRecord(m)) }, context());
  });
}

describe('an account action through the API on AWS', () => {
  it('is recorded and handed off (202), the same through both doors; a worker acts once; its outcome follows', async () => {
    const body = { action: 'revokeSessions', logins: ['kim@acme.test'], reason: 'leaked' };
    const first = await viaLambda('POST', '/identity/actions', body, 'soar-run-1');
    expect(first.status).toBe(202);
    const { id } = first.body as { id: string };
    expect(id).toMatch(/^api:soar:soar-run-1:/);
    expect(handed).toEqual([{ kind: 'identity-action', id }]);
    // The same request by the other door, with the same key: the same answer, handed off once.
    const replay = await app.request('/identity/actions', {
      method: 'POST',
      headers: headers('soar-run-1'),
      body: JSON.stringify(body),
    });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toEqual({ id });
    expect(handed).toHaveLength(1);
    expect(idp.actions).toEqual([]);

    const path = `/identity/actions/${encodeURIComponent(id)}`;
    const waiting = await viaLambda('GET', path);
    expect(waiting.status).toBe(200);
    expect(waiting.body).toMatchObject({ id, action: 'revokeSessions', open: true });
    expect(waiting.body.results).toEqual([
      { login: 'kim@acme.test', ok: false, error: expect.stringContaining('under way') },
    ]);

    // The worker takes the message; SQS may bring it again: still one call.
    expect(await runWorker([handed[0], handed[0]])).toEqual({ batchItemFailures: [] });
    expect(await runWorker([handed[0]])).toEqual({ batchItemFailures: [] });
    expect(idp.actions.map((a) => `${a.action} ${a.login}`)).toEqual(['revokeSessions kim@acme.test']);

    const finished = await viaLambda('GET', path);
    expect(finished.body).toMatchObject({
      id,
      open: false,
      results: [{ login: 'kim@acme.test', ok: true }],
    });
  });

  it('20 calls at once with one key: one action recorded and handed off, one provider call', async () => {
    handed.length = 0;
    const body = { action: 'requirePasswordChange', logins: ['lee@acme.test'] };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => viaLambda('POST', '/identity/actions', body, 'soar-run-2')),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(handed).toHaveLength(1);
    await runWorker(handed);
    expect(idp.actions.filter((a) => a.login === 'lee@acme.test').map((a) => a.action)).toEqual([
      'requirePasswordChange',
    ]);
    expect(idp.stand.entra.user('lee@acme.test')?.passwordProfile.forceChangePasswordNextSignIn).toBe(true);
  });

  it('a login never leaked is refused through the Lambda too: nothing recorded or handed off', async () => {
    handed.length = 0;
    const res = await viaLambda('POST', '/identity/actions', {
      action: 'revokeSessions',
      logins: ['kim@acme.test', 'stranger@acme.test'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('stranger@acme.test');
    expect(handed).toEqual([]);
  });
});
