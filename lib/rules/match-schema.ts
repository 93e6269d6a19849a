/**
 * The route `match` shape of the config (docs/configuration.md), on its own: routes, config
 * silences and run-time silences (silences.ts, the HTTP API) all take it. Apart from the rest of
 * the config schema (schema.ts) so the API, which checks a silence's match and has no config,
 * bundles only this (zod schemas are built at load, so a bundler keeps every one a module makes).
 */
import * as z from 'zod/mini';
import { VERDICTS } from '../identity/words.ts';
import {
  EVENT_FILTER_TYPES,
  EVENT_TYPES,
  LEGACY_SEARCH_TYPES,
  SEVERITIES,
  TYPE_FAMILIES,
} from '../upstream/event-types.ts';

export const nonEmpty = z.string().check(z.minLength(1));

export const severity = z.enum(SEVERITIES);
const knownTypes = new Set<string>([
  ...EVENT_TYPES,
  ...EVENT_FILTER_TYPES,
  ...LEGACY_SEARCH_TYPES,
  ...Object.keys(TYPE_FAMILIES),
]);
const eventType = z
  .string()
  .check(z.refine((s) => knownTypes.has(s), 'expected an event type or family from the spec'));

export const domainName = z
  .string()
  .check(
    z.regex(
      /^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/i,
      'expected a domain name such as example.com',
    ),
  );

/** A stream: the top level's (`tenant`, `group:12`), or a tenant's (`tenant:1001`, `group:1001:12`). */
export const SOURCE_REF = /^(tenant(:\d+)?|group:(\d+:)?\d+|credentials:.+)$/;
const sourceRef = z
  .string()
  .check(
    z.regex(
      SOURCE_REF,
      "expected tenant, group:<id> or credentials:<domain> (a tenant's: tenant:<tenant>, group:<tenant>:<id>, credentials:<tenant>:<domain>)",
    ),
  );

export const matchSchema = z.strictObject({
  kind: z.optional(z.enum(['event', 'credential'])),
  sources: z.optional(z.array(sourceRef)),
  severity: z.optional(
    z.union([z.strictObject({ gte: severity }), z.strictObject({ in: z.array(severity) })]),
  ),
  types: z.optional(z.array(eventType)),
  tags: z.optional(
    z.strictObject({
      any: z.optional(z.array(nonEmpty)),
      all: z.optional(z.array(nonEmpty)),
      none: z.optional(z.array(nonEmpty)),
    }),
  ),
  identifiers: z.optional(z.array(z.union([z.int(), nonEmpty]))),
  domains: z.optional(z.array(domainName)),
  /** Items of these `tenants` entries, by id or name. */
  tenants: z.optional(z.array(z.union([z.int(), nonEmpty]))),
  /** `true`: only items of the top-level sources; `false`: only items of `tenants` entries. */
  topLevel: z.optional(z.boolean()),
  /** Credentials whose login's verdict is one of these (docs/identity.md); none without one. */
  identity: z.optional(z.array(z.enum(VERDICTS))),
});
export type Match = z.infer<typeof matchSchema>;
