/**
 * The zod schemas of the HTTP API: they validate requests, and openapi.ts turns these same objects
 * into the published document, so the two cannot drift.
 */
import * as z from 'zod/mini';
import { assetSchema } from '../upstream/schemas.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import { ApiError } from './errors.ts';

/** The largest body the API reads, in bytes (interface.md: 16 KiB). */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * `asset_id` as it arrives in the path: decimal digits without a leading zero (so no sign, no
 * fraction, no exponent, no hex), and small enough to stay a safe integer once converted.
 */
export const assetIdParamSchema = z
  .string()
  .check(
    z.regex(/^[1-9][0-9]*$/, 'must be a positive whole number'),
    z.refine((s) => Number.isSafeInteger(Number(s)), 'is too large'),
  )
  .register(z.globalRegistry, {
    description: 'Upstream asset id: a positive integer, at most 2^53 - 1.',
    examples: ['10011'],
  });

/** The toggle body: exactly one key, a real boolean (the string "true" is refused). */
export const toggleBodySchema = z
  .strictObject({
    is_disabled: z.boolean().register(z.globalRegistry, {
      description: 'true disables the asset upstream, false enables it.',
    }),
  })
  .register(z.globalRegistry, { description: 'The state to put the asset in.' });
export type ToggleBody = z.infer<typeof toggleBodySchema>;

/** `?limit=` of the audit listing. */
export const auditLimitSchema = z
  .string()
  .check(
    z.regex(/^[1-9][0-9]{0,3}$/, 'must be a whole number from 1 to 1000'),
    z.refine((s) => Number(s) <= 1000, 'must be at most 1000'),
  )
  .register(z.globalRegistry, { description: 'Most entries to return, newest first; default 100.' });

export const toggleResponseSchema = z.object({ asset: assetSchema });

export const auditEntrySchema = z
  .object({
    at: z.string().register(z.globalRegistry, { description: 'When the attempt was made (ISO 8601).' }),
    requestId: z.string(),
    client: z
      .string()
      .register(z.globalRegistry, { description: 'Name of the API client (never its token).' }),
    assetId: z.number(),
    requestedDisabled: z.boolean(),
    outcome: z.string().register(z.globalRegistry, {
      description:
        '`ok`, the error code the caller got, or `pending` when the attempt started but its outcome was never recorded.',
    }),
    status: z
      .number()
      .register(z.globalRegistry, { description: 'HTTP status the caller got; 0 while pending.' }),
    isDisabled: z.optional(z.boolean()),
  })
  .register(z.globalRegistry, { description: 'One toggle attempt.' });

export const auditListSchema = z.object({ items: z.array(auditEntrySchema) });

export const errorBodySchema = z.object({
  error: z.object({
    code: z.string().register(z.globalRegistry, { description: 'Stable machine-readable code.' }),
    message: z.string().register(z.globalRegistry, { description: 'What was wrong and what to do.' }),
  }),
});

export const healthSchema = z.object({ status: z.literal('ok') });

function invalid(message: string): ApiError {
  return new ApiError('invalid_request', message);
}

/** A short, printable rendering of caller input for an error message. */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

export function parseAssetId(raw: string | undefined): number {
  const value = raw ?? '';
  const parsed = assetIdParamSchema.safeParse(value);
  if (!parsed.success) {
    const why = parsed.error.issues[0]?.message ?? 'is invalid';
    throw invalid(`asset_id ${why}, got ${shown(value)}`);
  }
  return Number(parsed.data);
}

export function parseAuditLimit(raw: string | undefined): number {
  if (raw === undefined) return 100;
  const parsed = auditLimitSchema.safeParse(raw);
  if (!parsed.success)
    throw invalid(`limit ${parsed.error.issues[0]?.message ?? 'is invalid'}, got ${shown(raw)}`);
  return Number(parsed.data);
}

/** The toggle body from its text: JSON first, then the exact shape. */
export function parseToggleBody(text: string): ToggleBody {
  if (text.trim() === '')
    throw invalid('the body is empty; send {"is_disabled": true} or {"is_disabled": false}');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid('the body is not valid JSON; send {"is_disabled": true} or {"is_disabled": false}');
  }
  const parsed = toggleBodySchema.safeParse(json);
  if (!parsed.success) {
    const detail = issuesToText(describeIssues(parsed.error.issues, json));
    throw invalid(`the body must be exactly {"is_disabled": boolean}: ${detail}`);
  }
  return parsed.data;
}
