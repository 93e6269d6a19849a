/**
 * The pieces the OpenAPI document (openapi.ts, openapi-act.ts) is built of: a zod schema as JSON
 * Schema, a JSON response, and the error responses of a set of codes. Used at `npm run docs`
 * only, never by the API at run time.
 */
import * as z from 'zod/mini';
import { ACTS_OUTSIDE } from './dry-run.ts';
import { STATUS_OF } from './errors.ts';
import { MAX_BODY_BYTES } from './schemas.ts';

type JsonSchema = Record<string, unknown>;

export function schemaOf(schema: z.core.$ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  // `unrepresentable: 'any'`: refinements (the safe-integer bound, timestamp parsing) cannot be
  // expressed in JSON Schema; the document states the rest and the descriptions say the bounds.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

export function errors(...codes: (keyof typeof STATUS_OF)[]): Record<string, unknown> {
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
    if (code === 'upstream_rate_limited' || code === 'rate_limited')
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

export function json(description: string, schema: z.core.$ZodType): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: schemaOf(schema) } } };
}

/** A required JSON request body of `schema`, within the API's body bound. */
export function jsonBody(schema: z.core.$ZodType): Record<string, unknown> {
  return {
    required: true,
    description: `At most ${MAX_BODY_BYTES} bytes.`,
    content: { 'application/json': { schema: schemaOf(schema, 'input') } },
  };
}

/** The `Idempotency-Key` header every POST that acts takes (idempotency.ts). */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry the same request: 1 to 255 visible ASCII characters, kept 24 hours per client and route. The same key with the same request (path and JSON body, compared parsed) answers as the first did and does nothing more; with another request, 422 `idempotency_key_reused` and nothing done; while the first still runs, a repeat waits up to 5 seconds, then 409 `idempotency_key_in_progress`. A request that failed frees its key.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
} as const;

/** What every bearer route may answer besides its success. */
export const READ_ERRORS = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'method_not_allowed',
  'internal_error',
] as const;

/** What a changing route (a body, an Idempotency-Key) may answer besides READ_ERRORS. */
export const WRITE_ERRORS = [
  ...READ_ERRORS,
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_progress',
  'idempotency_key_reused',
] as const;

/**
 * The document with 409 `dry_run` on every operation that acts outside (dry-run.ts's one list,
 * the one the API refuses by), beside any other 409 it answers.
 */
export function withDryRunRefusals<D extends { paths: Record<string, Record<string, unknown>> }>(doc: D): D {
  for (const route of ACTS_OUTSIDE) {
    const [method = '', path = ''] = route.split(' ');
    const operation = doc.paths[path]?.[method.toLowerCase()] as
      | { responses: Record<string, { description: string }> }
      | undefined;
    if (!operation) throw new Error(`dry-run.ts names ${route}, which the document does not have`);
    const refusal = errors('dry_run')['409'] as { description: string };
    const existing = operation.responses['409'];
    if (existing) existing.description += ` or \`dry_run\` (under \`start --dry-run\`)`;
    else operation.responses['409'] = { ...refusal, description: '`dry_run` (under `start --dry-run`)' };
  }
  return doc;
}
