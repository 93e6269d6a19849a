/**
 * The published OpenAPI document, as GET /openapi.json serves it: Redocly's `recommended` ruleset
 * finds no error in it, and its relative server leads to the app's real routes wherever the
 * document was fetched from. @redocly/openapi-core is a dev dependency, imported only here.
 */
import { brotliDecompressSync } from 'node:zlib';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/api/auth.ts';
import { openApiDocument } from '../../lib/api/openapi.ts';
import { OPENAPI_PACKED } from '../../lib/api/openapi-packed.ts';
import { resolveDestination } from '../../lib/deliver/destinations.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { acmeAssetIds, bearer, buildApi, JSON_TYPE, newToken, recordAlert } from './harness.ts';
import { identityApi } from './identity-harness.ts';

const emu = useEmulator();
const db = useDynalite();
const ALERT_KEY = 'leak/paste/servers-1';
let hook: Receiver;
beforeAll(async () => {
  hook = await startReceiver();
});
afterAll(() => hook.close());

type Operation = {
  operationId: string;
  security?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
};
type Doc = {
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
};

async function servedDocument(): Promise<Doc> {
  const res = await buildApi(emu).app.request('/openapi.json');
  expect(res.status).toBe(200);
  return (await res.json()) as Doc;
}

async function lint(doc: unknown): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  return lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
}

const describeProblem = (p: NormalizedProblem) =>
  `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;

describe('OpenAPI document under the recommended ruleset', () => {
  it('has no error, and only the two warnings kept on purpose', async () => {
    const problems = await lint(await servedDocument());
    expect(problems.filter((p) => p.severity === 'error').map(describeProblem)).toEqual([]);
    expect(
      problems.filter((p) => p.severity !== 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}`),
    ).toEqual([
      // The package is UNLICENSED (package.json): there is no licence to name or link.
      'info-license #/info',
      // GET /health takes no input and no auth: it has no 4xx answer to document.
      'operation-4xx-response #/paths/~1health/get/responses',
    ]);
  });

  it('is linted for real: without servers or an operationId, the ruleset says so', async () => {
    const doc = structuredClone(await servedDocument());
    delete doc.servers;
    const health = doc.paths['/health']?.get as Partial<Operation>;
    delete health.operationId;
    const rules = (await lint(doc)).map((p) => `${p.severity} ${p.ruleId}`);
    expect(rules).toContain('error no-empty-servers');
    expect(rules).toContain('warn operation-operationId');
  });

  it('names every operation', async () => {
    const doc = await servedDocument();
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids).toEqual([
      'getHealth',
      'toggleAsset',
      'listAssetAudit',
      'listSilences',
      'createSilence',
      'expireSilence',
      'actOnEvents',
      'lookup',
      'actOnAccounts',
      'getAccountAction',
      'listAlerts',
      'getAlert',
      'getAuditTrail',
      'getWhoAmI',
      'testDestination',
      'retryDeliveries',
      'getStatus',
    ]);
  });
});

describe('OpenAPI servers', () => {
  /** A valid request for each documented operation, and the success status it documents. */
  const requests: Record<string, { body?: unknown; query?: string; status: string; actor?: boolean }> = {
    getHealth: { status: '200' },
    toggleAsset: { body: { is_disabled: false }, status: '200' },
    listAssetAudit: { status: '200' },
    listSilences: { status: '200' },
    createSilence: {
      body: { match: { types: ['paste'] }, until: 'PT1H', reason: 'servers test' },
      status: '201',
    },
    expireSilence: { status: '200' },
    // An event the upstream does not have: it answers, so the API does, per uid.
    actOnEvents: { body: { action: 'ignore', uids: ['servers/test/0'] }, status: '200' },
    lookup: { query: '?domain=acme.test', status: '200' },
    // A leaked login (seeded), by a client granted identity:act by name; recorded and handed off.
    actOnAccounts: {
      body: { action: 'revokeSessions', logins: ['kim@acme.test'] },
      status: '202',
      actor: true,
    },
    getAccountAction: { status: '200' },
    listAlerts: { query: '?kind=event', status: '200' },
    getAlert: { status: '200' },
    getAuditTrail: { status: '200' },
    getWhoAmI: { status: '200' },
    // A client granted destinations:write by name; the test goes to a receiver.
    testDestination: { status: '200', actor: true },
    retryDeliveries: { body: { ids: ['hook~event~servers/test/0'] }, status: '200', actor: true },
    getStatus: { status: '200' },
  };

  // Where the document can be fetched from: a Lambda Function URL, and `serve` on another port.
  it.each([
    'https://abcdefghijklmnopqrstuvwxyz012345.lambda-url.eu-west-1.on.aws/openapi.json',
    'http://127.0.0.1:9911/openapi.json',
  ])('from %s, the server is that same origin and reaches every documented operation', async (docUrl) => {
    const actor = newToken();
    const table = { client: db.client, name: await db.table() };
    const base0 = buildApi(emu, {
      table,
      clients: { actor: { digest: sha256Hex(actor), scopes: ['identity:act', 'destinations:write'] } },
      console: {
        destinations: async () => ({
          destinations: new Map([
            ['hook', resolveDestination('hook', { type: 'webhook', url: hook.url }, {}, [])],
          ]),
          appUrl: 'https://app.example',
          digest: { threshold: 10, maxItems: 50 },
        }),
      },
    });
    // An alert in the index, as a poll records one.
    await recordAlert(table, ALERT_KEY);
    const identity = identityApi(base0, table);
    await identity.seed(['kim@acme.test']);
    const api = { ...base0, app: identity.app };
    const doc = await servedDocument();
    expect(doc.servers).toHaveLength(1);
    const server = doc.servers?.[0] as { url: string };
    // OpenAPI resolves a relative server URL against the document's own URL.
    const base = new URL(server.url, docUrl);
    expect(base.origin).toBe(new URL(docUrl).origin);
    const assetId = String(acmeAssetIds(emu)[0]);
    let silenceId = '';
    let actionId = '';
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const request = requests[operation.operationId];
        expect(request, operation.operationId).toBeDefined();
        const { body, query = '', status } = request as { body?: unknown; query?: string; status: string };
        const id = path.startsWith('/identity/') ? encodeURIComponent(actionId) : silenceId;
        // Path templating: the server URL without its trailing slash, then the path.
        const url = `${base.href.replace(/\/$/, '')}${path
          .replace('{asset_id}', assetId)
          .replace('{id}', id)
          .replace('{key}', encodeURIComponent(ALERT_KEY))
          .replace('{name}', 'hook')}${query}`;
        const res = await api.app.request(url, {
          method: method.toUpperCase(),
          headers: {
            ...bearer(request?.actor ? actor : api.tokens.runbook),
            ...(operation.requestBody ? JSON_TYPE : {}),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(String(res.status), `${method} ${url}`).toBe(status);
        expect(Object.keys(operation.responses)).toContain(status);
        if (operation.operationId === 'createSilence')
          silenceId = ((await res.json()) as { silence: { id: string } }).silence.id;
        if (operation.operationId === 'actOnAccounts') actionId = ((await res.json()) as { id: string }).id;
      }
    }
    expect(silenceId).not.toBe('');
    expect(actionId).not.toBe('');
  });
});

describe('the packed OpenAPI document', () => {
  it('is what openapi.ts builds from the validating schemas today (else: npm run docs)', () => {
    const served = JSON.parse(brotliDecompressSync(Buffer.from(OPENAPI_PACKED, 'base64')).toString('utf8'));
    expect(served, 'lib/api/openapi-packed.ts is stale: run npm run docs').toEqual(openApiDocument());
    expect(Object.keys(served.paths)).toContain('/events/actions');
  });
});
