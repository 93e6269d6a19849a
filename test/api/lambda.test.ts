/**
 * functions/api.ts as Lambda runs it: the real cold start (environment, SECRETS_FILE, upstream
 * client, DynamoDB table), then Function URL (payload v2) events through the exported handler.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import type { FunctionUrlHandler } from '../../lib/api/lambda.ts';
import { DynamoAuditStore } from '../../lib/state/audit.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { functionUrlEvent } from './function-url.ts';
import { acmeAsset, acmeAssetIds, newToken } from './harness.ts';

const emu = useEmulator();
const dynamo = useDynalite();
const control = () => emu.running.emulator.control;
const token = newToken();
const saved = { ...process.env };
let handler: FunctionUrlHandler;
let tableName: string;
let dir: string;

async function secretsFile(content: unknown): Promise<string> {
  const file = join(dir, `secrets-${randomBytes(4).toString('hex')}.json`);
  await writeFile(file, JSON.stringify(content));
  return file;
}

function setEnv(extra: Record<string, string | undefined>) {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved, {
    EXPOSURE_API_URL: emu.url,
    EXPOSURE_API_TOKEN: 'emu-acme-token',
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    TABLE_NAME: tableName,
    LOG_LEVEL: 'error',
    ...extra,
  });
  for (const [key, value] of Object.entries(extra)) if (value === undefined) delete process.env[key];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ea-api-'));
  // A table name the cold start has to create itself (DYNAMODB_ENDPOINT is set).
  tableName = `api-${randomBytes(4).toString('hex')}`;
  setEnv({ SECRETS_FILE: await secretsFile({ apiClients: { runbook: sha256Hex(token) } }) });
  vi.resetModules();
  ({ handler } = await import('../../functions/api.ts'));
});

afterAll(() => {
  setEnv({});
});

beforeEach(() => {
  control().clearLog();
  control().clearFaults();
});

const event = functionUrlEvent;

const auth = { authorization: `Bearer ${token}` };
const json = { 'content-type': 'application/json' };

async function call(e: LambdaFunctionURLEvent) {
  const result = await handler(e);
  const headers = (result.headers ?? {}) as Record<string, string>;
  expect(headers['content-type']).toMatch(/^application\/json/);
  return { status: result.statusCode, headers, body: JSON.parse(result.body ?? 'null') };
}

describe('functions/api.ts on Function URL events', () => {
  it('GET /health', async () => {
    const res = await call(event('GET', '/health'));
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('toggles an asset off (base64 body) and on again, with the audit trail in DynamoDB', async () => {
    const id = acmeAssetIds(emu)[0] as number;
    const off = await call(
      event('POST', `/assets/${id}/toggle`, {
        headers: { ...auth, ...json },
        body: '{"is_disabled":true}',
        base64: true,
      }),
    );
    expect(off.status).toBe(200);
    expect(off.body.asset).toMatchObject({ id, is_disabled: true });
    expect(acmeAsset(emu, id).is_disabled).toBe(true);

    const on = await call(
      event('POST', `/assets/${id}/toggle`, { headers: { ...auth, ...json }, body: '{"is_disabled":false}' }),
    );
    expect(on.status).toBe(200);
    expect(acmeAsset(emu, id).is_disabled).toBe(false);
    expect(control().calls('assetToggle')).toHaveLength(2);

    const audit = await call(event('GET', `/assets/${id}/audit`, { headers: auth }));
    expect(audit.status).toBe(200);
    expect(audit.body.items).toMatchObject([
      { client: 'runbook', requestedDisabled: false, outcome: 'ok', isDisabled: false },
      { client: 'runbook', requestedDisabled: true, outcome: 'ok', isDisabled: true },
    ]);
    // The records are in the table the cold start created, not only in the answer.
    const stored = await new DynamoAuditStore(dynamo.client, tableName).list(id);
    expect(stored.map((e) => e.requestId)).toEqual(
      audit.body.items.map((e: { requestId: string }) => e.requestId),
    );
  });

  it.each([
    [
      'no token',
      event('POST', '/assets/10011/toggle', { headers: json, body: '{"is_disabled":true}' }),
      401,
      'unauthorized',
    ],
    [
      'a wrong token',
      event('POST', '/assets/10011/toggle', {
        headers: { authorization: `Bearer ${newToken()}`, ...json },
        body: '{"is_disabled":true}',
      }),
      401,
      'unauthorized',
    ],
    [
      'an encoded slash in the id',
      event('POST', '/assets/1%2F2/toggle', { headers: { ...auth, ...json }, body: '{"is_disabled":true}' }),
      400,
      'invalid_request',
    ],
    [
      'the string "true"',
      event('POST', '/assets/10011/toggle', {
        headers: { ...auth, ...json },
        body: '{"is_disabled":"true"}',
      }),
      400,
      'invalid_request',
    ],
    [
      '17 KiB',
      event('POST', '/assets/10011/toggle', {
        headers: { ...auth, ...json },
        body: JSON.stringify({ is_disabled: true, pad: 'x'.repeat(17 * 1024) }),
      }),
      413,
      'payload_too_large',
    ],
    [
      'text/plain',
      event('POST', '/assets/10011/toggle', {
        headers: { ...auth, 'content-type': 'text/plain' },
        body: '{"is_disabled":true}',
      }),
      415,
      'unsupported_media_type',
    ],
    ['GET on toggle', event('GET', '/assets/10011/toggle', { headers: auth }), 405, 'method_not_allowed'],
    ['an unknown route', event('GET', '/nope'), 404, 'not_found'],
  ])('%s → %s %s, and no upstream call', async (_name, e, status, code) => {
    const res = await call(e);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    if (status === 401) expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="exposure-alerts"/);
    if (status === 405) expect(res.headers.allow).toBe('POST');
    expect(control().calls('assetToggle')).toEqual([]);
  });

  it('a GET that carries a body is still answered (the adapter alone would refuse it with plain text)', async () => {
    const res = await call(event('GET', '/health', { body: 'ignored' }));
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('with the production budget, a 429 whose Retry-After passes it is a 503 at once', async () => {
    control().addFault({ endpoint: 'assetToggle', status: 429, retryAfter: 30 });
    const started = Date.now();
    const res = await call(
      event('POST', '/assets/10012/toggle', { headers: { ...auth, ...json }, body: '{"is_disabled":true}' }),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body.error.code).toBe('upstream_rate_limited');
  });

  it('the exported app answers app.request() the same way', async () => {
    const { app } = await import('../../functions/api.ts');
    const res = await app.request('/assets/10011/audit', { headers: auth });
    expect(res.status).toBe(200);
  });
});

describe('cold start fails loudly on bad configuration', () => {
  it('a raw token in apiClients names the client', async () => {
    setEnv({ SECRETS_FILE: await secretsFile({ apiClients: { chatbot: 'not-a-digest' } }) });
    vi.resetModules();
    const error = await import('../../functions/api.ts').then(
      () => undefined,
      (e: unknown) => e,
    );
    // resetModules gave the function its own copy of the class, hence the name check.
    expect((error as Error).name).toBe('ConfigError');
    expect((error as Error).message).toMatch(/apiClients\.chatbot/);
    expect((error as Error).message).not.toContain('not-a-digest');
  });

  it('no upstream credentials names the variables to set', async () => {
    setEnv({ SECRETS_FILE: await secretsFile({}), EXPOSURE_API_TOKEN: undefined });
    vi.resetModules();
    await expect(import('../../functions/api.ts')).rejects.toThrow(/EXPOSURE_API_TOKEN/);
  });

  it('a missing SECRETS_FILE names it', async () => {
    setEnv({ SECRETS_FILE: join(dir, 'absent.json') });
    vi.resetModules();
    await expect(import('../../functions/api.ts')).rejects.toThrow(/SECRETS_FILE/);
  });
});
