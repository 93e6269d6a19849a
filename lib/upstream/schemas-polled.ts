/**
 * The upstream's resources that a poll reads (schemas.ts has every resource of the spec, and
 * re-exports these): events (endpoints 3 and 4), credentials of the global search (endpoint 9), the
 * `{items, next}` envelope of their pages, and the token exchange's answer. The other endpoints'
 * schemas load with them (other-endpoints.ts), so a worker's start holds only these. The rules of
 * schemas.ts's header apply here too.
 */
import * as z from 'zod/mini';
import { SEVERITIES } from './event-types.ts';

export const isoTimestamp = z
  .string()
  .check(z.refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp'));

const OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;
export const isoTimestampWithOffset = z
  .string()
  .check(
    z.refine(
      (s) => OFFSET.test(s) && !Number.isNaN(Date.parse(s)),
      'expected an ISO 8601 timestamp with an offset',
    ),
  );

export const stringList = z.array(z.string());

export const severitySchema = z.enum(SEVERITIES);

/** Response of `POST /tokens/generate`, the token exchange. */
export const generatedTokenSchema = z.looseObject({
  token: z.string().check(z.minLength(1)),
  refresh_token_exp: z.optional(z.unknown()),
});

// --- Global credential search (endpoint 9) -------------------------------------------------------

export const globalSourceSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description_en: z.optional(z.string()),
  description_fr: z.optional(z.string()),
  breached_at: z.optional(z.nullable(isoTimestamp)),
  leaked_at: z.optional(z.nullable(isoTimestamp)),
  is_alert_enabled: z.optional(z.boolean()),
});
export type GlobalSource = z.infer<typeof globalSourceSchema>;

export const credentialSchema = z.looseObject({
  id: z.int(),
  identity_name: z.string(),
  domain: z.string(),
  hash: z.string(),
  hash_type: z.optional(z.nullable(z.string())),
  imported_at: isoTimestampWithOffset,
  known_password_id: z.optional(z.unknown()),
  source_id: z.string(),
  source: z.optional(globalSourceSchema),
  // Documented by the real service, absent from the spec's table.
  credential_hash: z.optional(z.string()),
  event_uid: z.optional(z.nullable(z.string())),
});
export type Credential = z.infer<typeof credentialSchema>;

// --- Events (endpoints 3 and 4) ------------------------------------------------------------------

/** `type/origin/id`, where the id part may itself contain `/`. */
const eventUid = z.string().check(z.regex(/^[^/]+\/[^/]+\/.+$/, 'expected a uid of the form type/origin/id'));

export const eventItemSchema = z.looseObject({
  metadata: z.looseObject({
    estimated_created_at: isoTimestamp,
    matched_at: isoTimestamp,
    type: z.string().check(z.minLength(1)),
    uid: eventUid,
    severity: severitySchema,
    flare_url: z.optional(z.string()),
  }),
  tenant_metadata: z.optional(
    z.looseObject({
      severity: z.optional(
        z.looseObject({
          original: z.optional(z.nullable(severitySchema)),
          override: z.optional(z.nullable(severitySchema)),
        }),
      ),
      tags: z.optional(stringList),
      notes: z.optional(z.nullable(z.string())),
    }),
  ),
  identifiers: z.optional(z.array(z.looseObject({ id: z.number(), name: z.string() }))),
  highlights: z.optional(z.record(z.string(), stringList)),
});
export type EventItem = z.infer<typeof eventItemSchema>;

// --- Envelopes -----------------------------------------------------------------------------------

/** `{items, next}`: items are validated one by one afterwards, so one bad item cannot sink its page. */
export const nextPageEnvelopeSchema = z.looseObject({
  items: z.array(z.unknown()),
  next: z.optional(z.nullable(z.union([z.string(), z.number()]))),
});
