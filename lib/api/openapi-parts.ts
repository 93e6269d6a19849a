/**
 * The pieces the OpenAPI document (openapi.ts, openapi-act.ts) is built of: a zod schema as JSON
 * Schema, a JSON response, and the error responses of a set of codes. Used at `npm run docs`
 * only, never by the API at run time.
 */
import * as z from 'zod/mini';
import { STATUS_OF } from './errors.ts';

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

export function json(description: string, schema: z.core.$ZodType): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: schemaOf(schema) } } };
}
