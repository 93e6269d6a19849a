/**
 * The `identity` key of the config (docs/identity.md), at the top level and in a `tenants`
 * entry (never inherited). Only the shape lives here, in the config schema's bundle; the lookup
 * code loads only when some `identity` is configured (lib/identity/index.ts).
 */
import * as z from 'zod/mini';
import { domainName, nonEmpty } from '../rules/match-schema.ts';
import { httpUrl, secretRefSchema } from '../rules/schema-parts.ts';

/** A provider's name: it goes into table keys and Slack values, so a short plain word. */
const providerName = z
  .string()
  .check(
    z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, 'expected a name of letters, digits, _ . - (at most 40)'),
  );

const baseUrl = httpUrl.check(
  z.refine(
    (s) => !s.endsWith('/') && !/[?#]/.test(s),
    'expected a base URL without a trailing /, query or fragment',
  ),
);

const domains = z.array(domainName).check(z.minLength(1));

/**
 * The provider's share of the deployment's rate: requests a second to its directory (Graph's users,
 * Okta's users), every run together (lib/identity/lanes.ts).
 */
const requestsPerSecond = z._default(z.number().check(z.positive()), 5);

const entraSchema = z.strictObject({
  type: z.literal('entra'),
  /** The directory (tenant) id: a GUID, or a verified domain such as acme.onmicrosoft.com. */
  tenantId: z.string().check(z.regex(/^[A-Za-z0-9.-]{1,100}$/, 'expected a directory id (a GUID) or domain')),
  clientId: nonEmpty,
  /** Only from the secret object. */
  clientSecret: secretRefSchema,
  domains,
  requestsPerSecond,
  graphUrl: z._default(baseUrl, 'https://graph.microsoft.com'),
  loginUrl: z._default(baseUrl, 'https://login.microsoftonline.com'),
});

const oktaSchema = z.strictObject({
  type: z.literal('okta'),
  orgUrl: baseUrl,
  /** An API token (`SSWS`), only from the secret object. */
  token: secretRefSchema,
  domains,
  requestsPerSecond,
  /** The org has Okta's user-risk API (feature-gated): `confirmCompromised` may use it. */
  userRisk: z._default(z.boolean(), false),
});

export const providerSchema = z.discriminatedUnion('type', [entraSchema, oktaSchema]);
export type ProviderConfig = z.infer<typeof providerSchema>;
export type EntraConfig = z.infer<typeof entraSchema>;
export type OktaConfig = z.infer<typeof oktaSchema>;

export const identitySchema = z.strictObject({
  providers: z.record(providerName, providerSchema),
  /** Actions taken by themselves on a first `at_risk` verdict (issue 37 builds them). */
  auto: z.optional(
    z.strictObject({
      atRisk: z.array(z.string()),
      maxPerHour: z._default(z.int().check(z.minimum(1)), 20),
      exclude: z.optional(z.array(nonEmpty)),
    }),
  ),
});
export type IdentityConfig = z.infer<typeof identitySchema>;
