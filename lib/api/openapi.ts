/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas that validate requests
 * (schemas.ts), never written by hand, so the document cannot promise what the code refuses.
 *
 * Generated at build time, not in the function: `npm run docs` writes it, compressed, to
 * openapi-packed.ts, which the API unpacks on the first request for it (turning zod schemas into
 * JSON Schema takes 20 KB of code, and the document itself 26 KB, that the API's bundle need not
 * carry; packed with brotli, it is under 5 KB). A test fails when the packed document is not what this builds.
 */
import { writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { actPaths } from './openapi-act.ts';
import { consolePaths, dryRunAnswerSchema, dryRunBodySchema } from './openapi-console.ts';
import { identityPaths } from './openapi-identity.ts';
import {
  errors,
  IDEMPOTENCY_KEY_PARAMETER,
  json,
  jsonBody,
  READ_ERRORS,
  schemaOf,
  WRITE_ERRORS,
  withDryRunRefusals,
} from './openapi-parts.ts';
import {
  allQuerySchema,
  assetIdParamSchema,
  auditLimitSchema,
  auditListSchema,
  errorBodySchema,
  healthSchema,
  MAX_BODY_BYTES,
  silenceBodySchema,
  silenceCreatedSchema,
  silenceIdParamSchema,
  silenceListSchema,
  silenceResponseSchema,
  statusSchema,
  toggleBodySchema,
  toggleResponseSchema,
} from './schemas.ts';

/** The document, built afresh from the schemas. */
export function openApiDocument(): Record<string, unknown> {
  const assetIdParameter = {
    name: 'asset_id',
    in: 'path',
    required: true,
    schema: schemaOf(assetIdParamSchema, 'input'),
  };
  return withDryRunRefusals({
    openapi: '3.1.0',
    info: {
      title: 'exposure-alerts API',
      version: '1',
      description:
        'Toggle monitored assets upstream (endpoint 10) and read who did; silence alerts at run time; act on events (ignore, remediate) and on leaked logins’ accounts; see the status of streams, destinations, silences and quota. Every answer is JSON; every error is `{"error": {"code", "message"}}`.',
    },
    // Relative: OpenAPI resolves "/" against the URL the document was fetched from, and this very
    // app serves it (GET /openapi.json) at the root of wherever it runs: a Lambda Function URL
    // (https://<id>.lambda-url.<region>.on.aws), or `serve` / `npm start` on any --host and PORT.
    // An absolute URL would be wrong for all but one of those. "/" is also what OpenAPI assumes
    // when `servers` is absent; it is spelt out so tools need not know that default.
    servers: [
      {
        url: '/',
        description:
          'The server that served this document: a Lambda Function URL, or `serve` / `npm start` locally (http://127.0.0.1:8787 by default).',
      },
    ],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A client of the secret object's apiClients. Each operation names the scope it needs (security, and x-scopes; where it lists two, either will do, as its description says); a client given as {digest, scopes} has those, one given as a bare digest the first five: assets:write, silences:write, events:act, lookup, read. destinations:write, identity:act and identity:disable are granted only by name.",
        },
      },
      schemas: { Error: schemaOf(errorBodySchema) },
    },
    paths: {
      '/health': {
        get: {
          operationId: 'getHealth',
          summary: 'Liveness',
          security: [],
          responses: { '200': json('The API is up', healthSchema) },
        },
      },
      '/assets/{asset_id}/toggle': {
        post: {
          operationId: 'toggleAsset',
          summary: 'Enable or disable a monitored asset',
          security: [{ bearer: ['assets:write'] }],
          'x-scopes': ['assets:write'],
          parameters: [
            assetIdParameter,
            {
              name: 'tenant',
              in: 'query',
              required: false,
              description:
                'With tenants: the id or name of the tenant whose asset it is (sent with its own token). A client bound to tenants names one of its own; with one, it is the default.',
              schema: { type: 'string' },
            },
            IDEMPOTENCY_KEY_PARAMETER,
          ],
          requestBody: jsonBody(toggleBodySchema),
          responses: {
            '200': json('The asset as the upstream reports it after the toggle', toggleResponseSchema),
            ...errors(
              ...WRITE_ERRORS,
              'not_found',
              'upstream_error',
              'upstream_auth_failed',
              'upstream_rate_limited',
              'upstream_timeout',
            ),
          },
        },
      },
      '/assets/{asset_id}/audit': {
        get: {
          operationId: 'listAssetAudit',
          summary: 'Toggle attempts on an asset, newest first',
          security: [{ bearer: ['read'] }],
          'x-scopes': ['read'],
          parameters: [
            assetIdParameter,
            { name: 'limit', in: 'query', required: false, schema: schemaOf(auditLimitSchema, 'input') },
          ],
          responses: {
            '200': json('Who toggled the asset, when, to what, with what result', auditListSchema),
            ...errors(...READ_ERRORS, 'not_found'),
          },
        },
      },
      '/silences': {
        get: {
          operationId: 'listSilences',
          summary: 'Active silences, newest first (every one with all=true)',
          security: [{ bearer: ['read'] }],
          'x-scopes': ['read'],
          parameters: [
            { name: 'all', in: 'query', required: false, schema: schemaOf(allQuerySchema, 'input') },
          ],
          responses: {
            '200': json('The silences', silenceListSchema),
            ...errors(...READ_ERRORS, 'not_found'),
          },
        },
        post: {
          operationId: 'createSilence',
          summary:
            'Silence matching alerts from the next poll cycle and delivery pass on (or count what it would hold)',
          description:
            'Matching alerts are recorded as silenced and not sent, deliveries waiting for a retry included. `createdBy` is the API client. The change is in the audit trail. With `dryRun=true` nothing is made: the answer is how many of the recent alerts (the last 7 days of the alert index, at most 2,000) the match would have held, and a `read` client may ask; `until` and `reason` may then be left out.',
          security: [{ bearer: ['silences:write'] }, { bearer: ['read'] }],
          'x-scopes': ['silences:write', 'read (dryRun only)'],
          parameters: [
            IDEMPOTENCY_KEY_PARAMETER,
            {
              name: 'dryRun',
              in: 'query',
              required: false,
              description: 'true: count, make nothing.',
              schema: { type: 'string', enum: ['true', 'false'] },
            },
          ],
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes. A bad \`match\` is a 400 naming its path (\`match.severity.gte\`).`,
            content: {
              'application/json': {
                schema: {
                  anyOf: [schemaOf(silenceBodySchema, 'input'), schemaOf(dryRunBodySchema, 'input')],
                },
              },
            },
          },
          responses: {
            '200': json('dryRun=true: how many of the recent alerts it would have held', dryRunAnswerSchema),
            '201': json('The silence made, and any warnings about it', silenceCreatedSchema),
            ...errors(...WRITE_ERRORS, 'not_found'),
          },
        },
      },
      '/silences/{id}': {
        delete: {
          operationId: 'expireSilence',
          summary: 'End a silence now; it is kept, marked, for the record',
          description:
            'Answers the silence with `expiredAt` and `expiredBy`. One that had ended already is answered as it is. What it held back is not sent. The change is in the audit trail.',
          security: [{ bearer: ['silences:write'] }],
          'x-scopes': ['silences:write'],
          parameters: [
            { name: 'id', in: 'path', required: true, schema: schemaOf(silenceIdParamSchema, 'input') },
          ],
          responses: {
            '200': json('The silence, ended', silenceResponseSchema),
            ...errors(...READ_ERRORS, 'not_found'),
          },
        },
      },
      ...actPaths(),
      ...identityPaths(),
      ...consolePaths(),
      '/status': {
        get: {
          operationId: 'getStatus',
          summary: 'Streams, destinations, silences and quota at a glance',
          description:
            'Read from the table in a few requests: a count stops at one page and says so (`pendingMore`, `deadMore`).',
          security: [{ bearer: ['read'] }],
          'x-scopes': ['read'],
          responses: {
            '200': json('The status', statusSchema),
            ...errors('unauthorized', 'forbidden', 'not_found', 'method_not_allowed', 'internal_error'),
          },
        },
      },
    },
  });
}

/** The module that carries the document into the API: gzipped JSON, as base64. */
export function packedModule(): string {
  const packed = brotliCompressSync(JSON.stringify(openApiDocument()), {
    params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY },
  }).toString('base64');
  return `/** Generated by \`npm run docs\` from openapi.ts: the OpenAPI document, brotli-compressed JSON, base64. */\nexport const OPENAPI_PACKED =\n  '${packed}';\n`;
}

/** `tsx lib/api/openapi.ts <file>` (npm run docs): writes the packed document. */
if (import.meta.url === `file://${process.argv[1]}` && process.argv[2]) {
  writeFileSync(process.argv[2], packedModule());
}
