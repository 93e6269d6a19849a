/**
 * zod schemas for every resource of the upstream spec (docs/architecture.md, the upstream). Those a
 * poll reads (events, credentials, their pages' envelope, the token exchange) are schemas-polled.ts's,
 * re-exported here: a worker's start loads that module alone, and this one with the first call of
 * another endpoint (other-endpoints.ts).
 *
 * Rules applied throughout:
 * - Objects are loose: a field the spec does not list is kept as is, never rejected.
 * - A field's type and nullability are the spec's. "string or null" is nullable; everything else
 *   is not.
 * - A field is required when this product cannot work without it (keys, timestamps used for
 *   paging and lookback, severity, the password field it must mask). The spec's other fields are
 *   optional, but typed when present: a real service omits descriptive fields more often than it
 *   sends them with the wrong type, and an alert must not be lost over a missing description.
 * - Timestamps are ISO 8601 strings that parse as dates; "timestamp with offset" also requires
 *   the offset (`Z` or `±hh:mm`).
 */
import * as z from 'zod/mini';
import { isoTimestamp, isoTimestampWithOffset, stringList } from './schemas-polled.ts';

// What a poll reads is defined in schemas-polled.ts, so a worker's start holds only that.
export {
  type Credential,
  credentialSchema,
  type EventItem,
  eventItemSchema,
  type GlobalSource,
  generatedTokenSchema,
  globalSourceSchema,
  nextPageEnvelopeSchema,
  severitySchema,
} from './schemas-polled.ts';

const jsonObject = z.record(z.string(), z.unknown());

// --- Token information (endpoint 1) --------------------------------------------------------------

export const tokenInfoSchema = z.looseObject({
  tenant_id: z.number(),
  api_key_id: z.number(),
  organization_id: z.number(),
  user_id: z.number(),
  user_email: z.string(),
  scopes: stringList,
});
export type TokenInfo = z.infer<typeof tokenInfoSchema>;

// --- Legacy identity endpoints (2, 5, 7, 8) ------------------------------------------------------

export const legacySourceSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.optional(z.string()),
  description_fr: z.optional(z.string()),
  hash_description: z.optional(z.string()),
  hash_type: z.optional(z.string()),
  breached_at: z.optional(isoTimestamp),
  leaked_at: z.optional(isoTimestamp),
  is_alerts_enabled: z.optional(z.boolean()),
  related_urls: z.optional(stringList),
  url: z.optional(z.nullable(z.string())),
});
export type LegacySource = z.infer<typeof legacySourceSchema>;

const passwordRecordFields = {
  id: z.int(),
  credential_hash: z.optional(z.string()),
  domain: z.optional(z.nullable(z.string())),
  hash: z.string(),
  hash_type: z.optional(z.string()),
  extra: z.optional(jsonObject),
  imported_at: isoTimestampWithOffset,
  source_id: z.optional(z.string()),
  source_params: z.optional(z.unknown()),
};

export const legacyPasswordRecordSchema = z.looseObject({
  ...passwordRecordFields,
  source: z.optional(legacySourceSchema),
});
export type LegacyPasswordRecord = z.infer<typeof legacyPasswordRecordSchema>;

export const identitySchema = z.looseObject({
  name: z.string(),
  links: z.optional(jsonObject),
  passwords: z.array(legacyPasswordRecordSchema),
});
export type Identity = z.infer<typeof identitySchema>;

// --- v2 credential list (endpoint 6) -------------------------------------------------------------

export const v2CredentialSchema = z.looseObject({
  ...passwordRecordFields,
  identity_name: z.string(),
  source: z.optional(z.null()),
});
export type V2Credential = z.infer<typeof v2CredentialSchema>;

// --- Assets (endpoint 10) ------------------------------------------------------------------------

export const assetSchema = z.looseObject({
  id: z.number(),
  name: z.optional(z.string()),
  type: z.optional(z.string()),
  data: z.optional(jsonObject),
  search_types: z.optional(stringList),
  experimental_search_types: z.optional(stringList),
  count: z.optional(z.number()),
  data_updated_at: z.optional(isoTimestamp),
  feed_id: z.optional(z.number()),
  fetching_progress: z.optional(z.number()),
  is_disabled: z.boolean(),
  risks: z.optional(z.array(z.number())),
  source: z.optional(z.string()),
  tenant_id: z.optional(z.number()),
  urn: z.optional(z.string()),
  v3_refs: z.optional(z.looseObject({ asset_uuid: z.optional(z.string()) })),
});
export type Asset = z.infer<typeof assetSchema>;

export const assetResponseSchema = z.looseObject({ asset: assetSchema });

// --- Legacy global search (endpoint 11) ----------------------------------------------------------

export const legacySearchItemSchema = jsonObject;
export type LegacySearchItem = z.infer<typeof legacySearchItemSchema>;

/** Page envelope; `links.next` and `search_after` are absent on the last page. */
export const legacySearchEnvelopeSchema = z.looseObject({
  items: z.array(z.unknown()),
  links: z.optional(z.looseObject({ next: z.optional(z.nullable(z.string())) })),
  nb_hits: z.optional(z.int()),
  search_after: z.optional(z.nullable(z.string())),
});

export const identityArraySchema = z.array(z.unknown());
export const identitiesByAccountSchema = z.record(z.string(), z.unknown());
