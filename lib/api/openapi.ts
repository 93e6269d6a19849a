/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the zod schemas that validate requests
 * (schemas.ts), never written by hand, so the document cannot promise what the code refuses.
 *
 * Generated at build time, not in the function: `npm run docs` writes it, gzipped, to
 * openapi-packed.ts, which the API unpacks on the first request for it (turning zod schemas into
 * JSON Schema takes 20 KB of code, and the document itself 26 KB, that the API's bundle need not
 * carry; packed, it is 6 KB). A test fails when the packed document is not what this builds.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import * as z from 'zod/mini';
import { eventActionBodySchema, eventActionResultsSchema } from './actions.ts';
import { STATUS_OF } from './errors.ts';
import { lookupAnswerSchema } from './lookup.ts';
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

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.core.$ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  // `unrepresentable: 'any'`: refinements (the safe-integer bound, timestamp parsing) cannot be
  // expressed in JSON Schema; the document states the rest and the descriptions say the bounds.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

function errors(...codes: (keyof typeof STATUS_OF)[]): Record<string, unknown> {
  const out: Record<string, { description: string; content: unknown; headers?: unknown }> = {};
  for (const code of codes) {
    const status = String(STATUS_OF[code]);
    const existing = out[status];
    if (existing) {
      existing.description += ` or \`${code}\``;
      continue;
    }
    out[status] = { description: `\`${code}\``, content: { 'application/json': { schema: ERROR_REF } } };
    if (code === 'unauthorized')
      out[status].headers = {
        'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer challenge' },
      };
    if (code === 'upstream_rate_limited')
      out[status].headers = {
        'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' },
      };
    if (code === 'method_not_allowed')
      out[status].headers = {
        Allow: { schema: { type: 'string' }, description: 'Methods the path accepts' },
      };
  }
  return out;
}

function json(description: string, schema: z.core.$ZodType): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: schemaOf(schema) } } };
}

/** The document, built afresh from the schemas. */
export function openApiDocument(): Record<string, unknown> {
  const assetIdParameter = {
    name: 'asset_id',
    in: 'path',
    required: true,
    schema: schemaOf(assetIdParamSchema, 'input'),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'exposure-alerts API',
      version: '1',
      description:
        'Toggle monitored assets upstream (endpoint 10) and read who did; silence alerts at run time; act on events (ignore, remediate); see the status of streams, destinations, silences and quota. Every answer is JSON; every error is `{"error": {"code", "message"}}`.',
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
            "A client of the secret object's apiClients. Each operation names the scope it needs (security, and x-scopes); a client given as a bare digest has every scope, one given as {digest, scopes} only those. Scopes: assets:write, silences:write, events:act, lookup, read.",
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
          parameters: [assetIdParameter],
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes.`,
            content: { 'application/json': { schema: schemaOf(toggleBodySchema, 'input') } },
          },
          responses: {
            '200': json('The asset as the upstream reports it after the toggle', toggleResponseSchema),
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'not_found',
              'method_not_allowed',
              'payload_too_large',
              'unsupported_media_type',
              'internal_error',
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
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'not_found',
              'method_not_allowed',
              'internal_error',
            ),
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
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'not_found',
              'method_not_allowed',
              'internal_error',
            ),
          },
        },
        post: {
          operationId: 'createSilence',
          summary: 'Silence matching alerts from the next poll cycle and delivery pass on',
          description:
            'Matching alerts are recorded as silenced and not sent, deliveries waiting for a retry included. `createdBy` is the API client. The change is in the audit trail.',
          security: [{ bearer: ['silences:write'] }],
          'x-scopes': ['silences:write'],
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes. A bad \`match\` is a 400 naming its path (\`match.severity.gte\`).`,
            content: { 'application/json': { schema: schemaOf(silenceBodySchema, 'input') } },
          },
          responses: {
            '201': json('The silence made, and any warnings about it', silenceCreatedSchema),
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'not_found',
              'method_not_allowed',
              'payload_too_large',
              'unsupported_media_type',
              'internal_error',
            ),
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
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'not_found',
              'method_not_allowed',
              'internal_error',
            ),
          },
        },
      },
      '/events/actions': {
        post: {
          operationId: 'actOnEvents',
          summary:
            'Ignore or remediate events upstream (or undo either), once, and follow up where they were alerted',
          description:
            'Each uid is answered as the upstream answered it. The same Idempotency-Key again (from the same client) is the same action: answered as the first was, nothing done again. When the upstream did not answer, nothing changed (502, 503 or 504). Every action is in the audit trail; the destinations that were sent an event hear of what changed from the next delivery pass.',
          security: [{ bearer: ['events:act'] }],
          'x-scopes': ['events:act'],
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Makes a retry the same action: 1 to 255 visible ASCII characters.',
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
          ],
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes.`,
            content: { 'application/json': { schema: schemaOf(eventActionBodySchema, 'input') } },
          },
          responses: {
            '200': json('What the upstream said of each uid', eventActionResultsSchema),
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'method_not_allowed',
              'payload_too_large',
              'unsupported_media_type',
              'internal_error',
              'upstream_error',
              'upstream_auth_failed',
              'upstream_rate_limited',
              'upstream_timeout',
            ),
          },
        },
      },
      '/lookup': {
        get: {
          operationId: 'lookup',
          summary: 'What the leak store knows of accounts, a domain, or a name pattern',
          description:
            'Exactly one kind: `account` (repeatable, up to 100), `domain`, or `keyword` (a `*` may lead or trail). The identities found, each with its leaks newest first, the password per the password policy; at most 20 identities, `more` counting the rest. One upstream page.',
          security: [{ bearer: ['lookup'] }],
          'x-scopes': ['lookup'],
          parameters: [
            {
              name: 'account',
              in: 'query',
              required: false,
              schema: { type: 'array', items: { type: 'string' } },
              explode: true,
            },
            { name: 'domain', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'keyword', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: {
            '200': json('The identities found', lookupAnswerSchema),
            ...errors(
              'invalid_request',
              'unauthorized',
              'forbidden',
              'method_not_allowed',
              'internal_error',
              'upstream_error',
              'upstream_auth_failed',
              'upstream_rate_limited',
              'upstream_timeout',
            ),
          },
        },
      },
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
  };
}

/** The module that carries the document into the API: gzipped JSON, as base64. */
export function packedModule(): string {
  const packed = gzipSync(JSON.stringify(openApiDocument()), { level: 9 }).toString('base64');
  return `/** Generated by \`npm run docs\` from openapi.ts: the OpenAPI document, gzipped JSON, base64. */\nexport const OPENAPI_GZIP =\n  '${packed}';\n`;
}

/** `tsx lib/api/openapi.ts <file>` (npm run docs): writes the packed document. */
if (import.meta.url === `file://${process.argv[1]}` && process.argv[2]) {
  writeFileSync(process.argv[2], packedModule());
}
