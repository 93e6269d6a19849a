/**
 * The zod schemas of the HTTP API: they validate requests, and openapi.ts turns these same objects
 * into the published document, so the two cannot drift.
 */
import * as z from 'zod/mini';
import { matchSchema } from '../rules/match-schema.ts';
import { MAX_REASON_CHARS, SILENCE_ID } from '../rules/silences.ts';
import { assetSchema } from '../upstream/schemas.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import { ApiError } from './errors.ts';

/** The largest body the API reads, in bytes (docs/api.md: 16 KiB). */
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

const isoTime = (description: string) => z.string().register(z.globalRegistry, { description });

/** The body of `POST /silences`, as documented (rules/silences.ts checks it, `until` included). */
export const silenceBodySchema = z
  .strictObject({
    match: matchSchema.register(z.globalRegistry, {
      description:
        'The route `match` shape of the config (kind, sources, severity, types, tags, identifiers, domains); not empty.',
    }),
    until: z.string().register(z.globalRegistry, {
      description:
        'When it ends: a timestamp with its zone (2026-12-31T18:00:00Z) or an ISO 8601 duration from now (PT4H); in the future, at most 366 days away.',
      examples: ['PT4H', '2026-12-31T18:00:00Z'],
    }),
    reason: z.string().check(z.minLength(1), z.maxLength(MAX_REASON_CHARS)).register(z.globalRegistry, {
      description: 'Why: shown wherever the silence is.',
    }),
  })
  .register(z.globalRegistry, { description: 'A silence to make.' });

export const silenceIdParamSchema = z
  .string()
  .check(z.regex(SILENCE_ID, 'must be a silence id'))
  .register(z.globalRegistry, {
    description: 'A silence id, as `POST /silences` answered it.',
    examples: ['s-0mhz3k2p1-4fa21b'],
  });

/** `?all=` of the silence listing. */
export const allQuerySchema = z
  .enum(['true', 'false'])
  .register(z.globalRegistry, { description: 'true lists expired silences too; default false.' });

export const silenceSchema = z
  .object({
    id: z.string(),
    match: matchSchema,
    until: isoTime('When it ends by itself (UTC).'),
    reason: z.string(),
    createdBy: z
      .string()
      .register(z.globalRegistry, { description: 'The API client that made it, or cli:<user>.' }),
    createdAt: isoTime('When it was made.'),
    expiredAt: z.optional(isoTime('When someone ended it before `until`.')),
    expiredBy: z.optional(z.string().register(z.globalRegistry, { description: 'Who ended it.' })),
  })
  .register(z.globalRegistry, {
    description: 'A silence: matching alerts are recorded as silenced, not sent.',
  });

export const silenceListSchema = z.object({ items: z.array(silenceSchema) });
export const silenceResponseSchema = z.object({ silence: silenceSchema });
export const silenceCreatedSchema = z.object({
  silence: silenceSchema,
  warnings: z.array(z.string()).register(z.globalRegistry, {
    description:
      'What config validate would warn about this silence (an empty match holds back every alert); empty when nothing.',
  }),
});

export const statusSchema = z
  .object({
    streams: z.array(
      z.object({
        stream: z.string(),
        tenant: z.nullable(
          z.object({ id: z.number(), name: z.string() }).register(z.globalRegistry, {
            description: 'The tenants entry the stream polls for; null for the top-level sources.',
          }),
        ),
        lastPolledAt: z.nullable(isoTime('When its last poll ended; null: never polled.')),
        lagSeconds: z.nullable(
          z.number().register(z.globalRegistry, {
            description:
              'The PollLagSeconds metric at its last poll that saw items: how old the newest item was.',
          }),
        ),
        lastResult: z.nullable(
          z.string().register(z.globalRegistry, {
            description: 'How its last poll ended: done, budget, failed, ...',
          }),
        ),
      }),
    ),
    destinations: z.array(
      z.object({
        destination: z.string(),
        pending: z.int(),
        pendingMore: z.optional(
          z
            .literal(true)
            .register(z.globalRegistry, { description: 'More are pending than counted (one page).' }),
        ),
        dead: z.int(),
        deadMore: z.optional(z.literal(true)),
        refusing: z
          .boolean()
          .register(z.globalRegistry, { description: 'It refused for good and has accepted nothing since.' }),
      }),
    ),
    silences: z
      .int()
      .register(z.globalRegistry, { description: 'Silences active now (run-time and config).' }),
    quota: z.nullable(
      z.object({
        remaining: z.number(),
        at: isoTime('When the upstream reported it.'),
      }),
    ),
    identityProviders: z.optional(
      z
        .array(
          z.object({
            tenant: z.nullable(z.object({ id: z.number(), name: z.string() })),
            provider: z.string(),
            type: z.string().register(z.globalRegistry, { description: 'entra or okta.' }),
            lastLookupAt: z.nullable(isoTime('When a cycle last looked logins up in it; null: never.')),
            refusing: z.boolean().register(z.globalRegistry, {
              description: 'It refuses our credentials: its logins are unknown until it accepts them.',
            }),
            refusedAt: z.optional(isoTime('Since when it refuses.')),
            refusedMessage: z.optional(
              z.string().register(z.globalRegistry, { description: 'Its answer: status and error code.' }),
            ),
          }),
        )
        .register(z.globalRegistry, {
          description:
            "Each identity provider of the config (the top level's, then each tenant's); absent without any.",
        }),
    ),
  })
  .register(z.globalRegistry, {
    description: 'Streams, destinations, identity providers, silences and quota at a glance.',
  });

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

export function parseAll(raw: string | undefined): boolean {
  if (raw === undefined) return false;
  if (!allQuerySchema.safeParse(raw).success) throw invalid(`all must be true or false, got ${shown(raw)}`);
  return raw === 'true';
}

/** A JSON body from its text; `usage` says what to send instead. */
export function parseJson(text: string, usage: string): unknown {
  if (text.trim() === '') throw invalid(`the body is empty; send ${usage}`);
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(`the body is not valid JSON; send ${usage}`);
  }
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
