/**
 * The API end to end through app.request(): a real emulator behind a real UpstreamClient, and a
 * real DynamoDB (dynalite) holding the audit trail. The happy path, every upstream failure's
 * documented answer, the audit listing, the per-request log, and the OpenAPI document.
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { ErrorBody } from '../../lib/api/errors.ts';
import { toggleBodySchema } from '../../lib/api/schemas.ts';
import { type AuditEntry, DynamoAuditStore } from '../../lib/state/audit.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type ApiUnderTest, acmeAsset, acmeAssetIds, bearer, buildApi, JSON_TYPE } from './harness.ts';

const emu = useEmulator();
const dynamo = useDynalite();
const control = () => emu.running.emulator.control;

let api: ApiUnderTest;
let ids: number[];

beforeAll(async () => {
  api = buildApi(emu, { audit: new DynamoAuditStore(dynamo.client, await dynamo.table()) });
  ids = acmeAssetIds(emu);
});

beforeEach(() => {
  control().clearLog();
  control().clearFaults();
  api.logger.lines.length = 0;
});

function toggle(target: ApiUnderTest, assetId: number, isDisabled: boolean, token = target.tokens.runbook) {
  return target.app.request(`/assets/${assetId}/toggle`, {
    method: 'POST',
    headers: { ...bearer(token), ...JSON_TYPE },
    body: JSON.stringify({ is_disabled: isDisabled }),
  });
}

async function auditOf(target: ApiUnderTest, assetId: number): Promise<AuditEntry[]> {
  const res = await target.app.request(`/assets/${assetId}/audit`, {
    headers: bearer(target.tokens.chatbot),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: AuditEntry[] }).items;
}

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON document whose shape the test asserts
type Json = any;

async function errorOf(res: Response): Promise<ErrorBody['error']> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return ((await res.json()) as ErrorBody).error;
}

describe('happy path', () => {
  it('toggles an asset off and on again; the emulator and the audit trail agree', async () => {
    const id = ids[1] as number;
    expect(acmeAsset(emu, id).is_disabled).toBe(false);

    const off = await toggle(api, id, true);
    expect(off.status).toBe(200);
    const offBody = (await off.json()) as { asset: { id: number; is_disabled: boolean } };
    expect(offBody.asset).toMatchObject({ id, is_disabled: true });
    expect(acmeAsset(emu, id).is_disabled).toBe(true);

    const on = await toggle(api, id, false, api.tokens.chatbot);
    expect(on.status).toBe(200);
    expect(((await on.json()) as { asset: { is_disabled: boolean } }).asset.is_disabled).toBe(false);
    expect(acmeAsset(emu, id).is_disabled).toBe(false);

    // Exactly what was asked of the upstream, once each.
    expect(
      control()
        .calls('assetToggle')
        .map((r) => [r.path, r.input, r.status]),
    ).toEqual([
      [`/firework/v2/assets/${id}/toggle`, { is_disabled: true }, 200],
      [`/firework/v2/assets/${id}/toggle`, { is_disabled: false }, 200],
    ]);

    const items = await auditOf(api, id);
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({
      client: 'chatbot',
      assetId: id,
      requestedDisabled: false,
      outcome: 'ok',
      status: 200,
      isDisabled: false,
    });
    expect(items[1]).toMatchObject({
      client: 'runbook',
      assetId: id,
      requestedDisabled: true,
      outcome: 'ok',
      status: 200,
      isDisabled: true,
    });
    // Newest first, real times, and the request ids the caller saw.
    expect(Date.parse(items[0]?.at as string)).toBeGreaterThan(Date.parse(items[1]?.at as string));
    expect(items[0]?.requestId).toBe(on.headers.get('x-request-id'));
    expect(items[1]?.requestId).toBe(off.headers.get('x-request-id'));
    // Another asset's trail is its own.
    expect(await auditOf(api, ids[2] as number)).toEqual([]);
  });

  it('the audit listing honours limit', async () => {
    const id = ids[3] as number;
    for (const state of [true, false, true]) expect((await toggle(api, id, state)).status).toBe(200);
    const res = await api.app.request(`/assets/${id}/audit?limit=2`, { headers: bearer(api.tokens.runbook) });
    const items = ((await res.json()) as { items: AuditEntry[] }).items;
    expect(items.map((i) => i.requestedDisabled)).toEqual([true, false]);
  });

  it('GET /health answers without a token', async () => {
    const res = await api.app.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('upstream failures map to the documented answers, and are audited', () => {
  it('404 → 404 not_found', async () => {
    const res = await toggle(api, 987654321, true);
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe('not_found');
    expect(control().calls('assetToggle')).toHaveLength(1);
    expect(await auditOf(api, 987654321)).toMatchObject([
      { outcome: 'not_found', status: 404, client: 'runbook' },
    ]);
  });

  it('429 with Retry-After past the budget → 503 upstream_rate_limited with that Retry-After, at once', async () => {
    const id = ids[0] as number;
    control().addFault({ endpoint: 'assetToggle', status: 429, retryAfter: 30 });
    const started = Date.now();
    const res = await toggle(api, id, true);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect((await errorOf(res)).code).toBe('upstream_rate_limited');
    expect(control().calls('assetToggle')).toHaveLength(1);
    expect(acmeAsset(emu, id).is_disabled).toBe(false);
    expect((await auditOf(api, id))[0]).toMatchObject({ outcome: 'upstream_rate_limited', status: 503 });
  });

  it('429 without Retry-After → 503 with the default Retry-After of 10 s', async () => {
    control().addFault({ endpoint: 'assetToggle', status: 429 });
    const res = await toggle(api, ids[0] as number, true);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('10');
    expect((await errorOf(res)).code).toBe('upstream_rate_limited');
  });

  it('a short Retry-After within the budget is waited out and the toggle succeeds', async () => {
    const id = ids[0] as number;
    control().addFault({ endpoint: 'assetToggle', status: 429, retryAfter: 0 });
    const res = await toggle(api, id, true);
    expect(res.status).toBe(200);
    expect(
      control()
        .calls('assetToggle')
        .map((r) => r.status),
    ).toEqual([429, 200]);
    expect(acmeAsset(emu, id).is_disabled).toBe(true);
    expect((await toggle(api, id, false)).status).toBe(200);
  });

  it('500 on every attempt → 502 upstream_error, after the retries', async () => {
    control().addFault({ endpoint: 'assetToggle', status: 500, times: 10 });
    const res = await toggle(api, ids[0] as number, true);
    expect(res.status).toBe(502);
    expect((await errorOf(res)).code).toBe('upstream_error');
    expect(
      control()
        .calls('assetToggle')
        .map((r) => r.status),
    ).toEqual([500, 500]);
    expect((await auditOf(api, ids[0] as number))[0]).toMatchObject({
      outcome: 'upstream_error',
      status: 502,
    });
  });

  it('one 503 then success → 200 (a toggle is idempotent, so it is retried)', async () => {
    const id = ids[0] as number;
    control().addFault({ endpoint: 'assetToggle', status: 503 });
    const res = await toggle(api, id, true);
    expect(res.status).toBe(200);
    expect(
      control()
        .calls('assetToggle')
        .map((r) => r.status),
    ).toEqual([503, 200]);
    expect((await toggle(api, id, false)).status).toBe(200);
  });

  it('no answer → 504 upstream_timeout within the budget', async () => {
    control().addFault({ endpoint: 'assetToggle', hang: true, times: 10 });
    const started = Date.now();
    const res = await toggle(api, ids[0] as number, true);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    expect((await errorOf(res)).code).toBe('upstream_timeout');
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(1_500 + 500);
    expect((await auditOf(api, ids[0] as number))[0]).toMatchObject({
      outcome: 'upstream_timeout',
      status: 504,
    });
    control().clearFaults();
  });

  it('upstream 401 → 502 upstream_auth_failed, logged at error level for operators', async () => {
    const wrong = buildApi(emu, { audit: api.audit, upstreamToken: 'revoked-upstream-token' });
    const res = await toggle(wrong, ids[0] as number, true);
    expect(res.status).toBe(502);
    const error = await errorOf(res);
    expect(error.code).toBe('upstream_auth_failed');
    expect(error.message).toMatch(/not yours/);
    expect(
      control()
        .calls('assetToggle')
        .map((r) => r.status),
    ).toEqual([401]);
    const errors = wrong.logger.lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/OPERATOR ACTION NEEDED/);
    expect(errors[0]).toMatchObject({ assetId: ids[0], client: 'runbook', code: 'upstream_auth_failed' });
    expect(JSON.stringify(wrong.logger.lines)).not.toContain('revoked-upstream-token');
    expect((await auditOf(api, ids[0] as number))[0]).toMatchObject({
      outcome: 'upstream_auth_failed',
      status: 502,
    });
  });

  it('upstream 403 → 502 upstream_auth_failed as well', async () => {
    control().addFault({ endpoint: 'assetToggle', status: 403 });
    const res = await toggle(api, ids[0] as number, true);
    expect(res.status).toBe(502);
    expect((await errorOf(res)).code).toBe('upstream_auth_failed');
  });

  it('a malformed upstream answer → 502 upstream_error', async () => {
    control().addFault({ endpoint: 'assetToggle', malformedJson: true, times: 10 });
    const res = await toggle(api, ids[0] as number, true);
    expect(res.status).toBe(502);
    expect((await errorOf(res)).code).toBe('upstream_error');
  });
});

describe('the audit trail is never skipped', () => {
  it('when the audit store is down, the toggle is not sent', async () => {
    const broken = buildApi(emu, {
      audit: {
        record: async () => {
          throw new Error('table unavailable');
        },
        list: async () => [],
      },
    });
    const res = await toggle(broken, ids[0] as number, true);
    expect(res.status).toBe(500);
    expect((await errorOf(res)).code).toBe('internal_error');
    expect(control().calls('assetToggle')).toEqual([]);
  });

  it('an attempt is recorded as pending before the upstream answers', async () => {
    const id = ids[2] as number;
    control().addFault({ endpoint: 'assetToggle', delayMs: 200 });
    const pending = toggle(api, id, true);
    await new Promise((r) => setTimeout(r, 100));
    expect(await auditOf(api, id)).toMatchObject([
      { outcome: 'pending', status: 0, requestedDisabled: true },
    ]);
    expect((await pending).status).toBe(200);
    expect(await auditOf(api, id)).toMatchObject([{ outcome: 'ok', status: 200, isDisabled: true }]);
    expect((await toggle(api, id, false)).status).toBe(200);
  });
});

describe('logs', () => {
  it('one structured line per request with its request id, and never a token', async () => {
    const wrongToken = 'Zm9vYmFyLXdyb25nLXRva2VuLXZhbHVl';
    const responses = [
      await toggle(api, ids[0] as number, true),
      await toggle(api, ids[0] as number, false, api.tokens.chatbot),
      await toggle(api, ids[0] as number, true, wrongToken),
      await api.app.request(`/assets/${ids[0]}/audit?token=${api.tokens.runbook}`, {
        headers: bearer(api.tokens.runbook),
      }),
      await api.app.request('/nope', { headers: bearer(api.tokens.runbook) }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 200, 404]);
    const all = api.logger.lines.join('\n');
    for (const token of [api.tokens.runbook, api.tokens.chatbot, wrongToken])
      expect(all).not.toContain(token);
    const requests = api.logger.lines.map((l) => JSON.parse(l)).filter((l) => l.message === 'request');
    expect(requests).toHaveLength(responses.length);
    expect(requests.map((l) => l.requestId)).toEqual(responses.map((r) => r.headers.get('x-request-id')));
    expect(requests[0]).toMatchObject({ method: 'POST', status: 200, client: 'runbook' });
    expect(requests[2]).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(requests[2].client).toBeUndefined();
    expect(requests[4]).toMatchObject({ status: 404, code: 'not_found', path: '/nope' });
    for (const line of requests) expect(typeof line.durationMs).toBe('number');
  });
});

describe('OpenAPI', () => {
  it('is served without a token and generated from the validating schemas', async () => {
    const res = await api.app.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, Json>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const post = doc.paths['/assets/{asset_id}/toggle']?.post;
    const { $schema: _, ...bodySchema } = z.toJSONSchema(toggleBodySchema, { io: 'input' });
    expect(post.requestBody.content['application/json'].schema).toEqual(bodySchema);
    expect(post.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(Object.keys(post.responses).sort()).toEqual(
      [
        '200',
        '400',
        '401',
        '403',
        '404',
        '405',
        '409',
        '413',
        '415',
        '422',
        '500',
        '502',
        '503',
        '504',
      ].sort(),
    );
    expect(post.responses['502'].description).toMatch(/upstream_auth_failed/);
    const pattern = new RegExp(post.parameters[0].schema.pattern);
    for (const good of ['1', '10011']) expect(pattern.test(good)).toBe(true);
    for (const bad of ['0', '-1', '1.5', 'abc', '010']) expect(pattern.test(bad)).toBe(false);
    expect(doc.paths['/assets/{asset_id}/audit']?.get.responses['200']).toBeDefined();
  });
});
