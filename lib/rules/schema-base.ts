/**
 * The alert config's schema (docs/configuration.md), built for a given shape of its `identity` keys
 * (the top level's and a tenant's): schema.ts builds the config's one strict schema with the
 * identity schema (identity/schema.ts), which everything else uses. A worker checks a config that
 * has no `identity` with `baseConfigSchema`, which takes any value there (config-parse.ts,
 * source.ts), so its start does not carry the identity schema; with none, the two give the same
 * config and the same problems.
 *
 * zod/mini keeps the Lambda bundles small; the API is functional (`z.optional(x)`), the same
 * validation.
 */
import * as z from 'zod/mini';
import { destinationSchema } from '../destinations/kinds.ts';
import { EVENT_FILTER_TYPES } from '../upstream/event-types.ts';
import { parseDuration } from './duration.ts';
import { domainName, matchSchema, nonEmpty, severity } from './match-schema.ts';
import { httpUrl, responseUrlPrefix, secretOr, secretRefSchema } from './schema-parts.ts';
import { checkTimestamp } from './timestamp.ts';

export { type Match, matchSchema } from './match-schema.ts';

export { type SecretRef, secretRefSchema } from './schema-parts.ts';

const duration = z
  .string()
  .check(z.refine((s) => parseDuration(s) !== undefined, 'expected a duration such as PT24H, P7D or 24h'));

/** A timestamp with its time, checked field by field: a date that does not exist is refused. */
const timestamp = z.string().check(
  z.superRefine((s, ctx) => {
    const checked = /T/i.test(s) ? checkTimestamp(s) : undefined;
    if (!checked?.ok)
      ctx.addIssue({
        code: 'custom',
        message: checked ? checked.reason : 'expected an ISO 8601 timestamp such as 2026-12-31T00:00:00Z',
        input: s,
      });
  }),
);

const firstRun = z.enum(['alert', 'baseline']);

/** The shared search body's `filters`, passed to the upstream as is. */
export const eventFiltersSchema = z.strictObject({
  severity: z.optional(z.array(severity)),
  type: z.optional(z.array(z.enum(EVENT_FILTER_TYPES))),
  estimated_created_at: z.optional(
    z.strictObject({
      gt: z.optional(timestamp),
      gte: z.optional(timestamp),
      lt: z.optional(timestamp),
      lte: z.optional(timestamp),
    }),
  ),
  tags: z.optional(z.array(nonEmpty)),
  is_ignored: z.optional(z.boolean()),
  is_remediated: z.optional(z.boolean()),
});

const sourcesSchema = z.strictObject({
  tenantEvents: z.optional(
    z.strictObject({
      enabled: z._default(z.boolean(), true),
      filters: z._default(eventFiltersSchema, {}),
      lookback: z._default(duration, 'PT24H'),
      firstRun: z._default(firstRun, 'alert'),
    }),
  ),
  identifierGroups: z._default(
    z.array(
      z.strictObject({
        id: z.int().check(z.positive()),
        name: z.optional(nonEmpty),
        filters: z._default(eventFiltersSchema, {}),
        lookback: z._default(duration, 'PT24H'),
        firstRun: z._default(firstRun, 'alert'),
      }),
    ),
    [],
  ),
  credentials: z.optional(
    z.strictObject({
      domains: z.array(domainName),
      lookback: z._default(duration, 'P7D'),
      pageSize: z._default(z.int().check(z.minimum(1), z.maximum(10_000)), 100),
      firstRun: z._default(firstRun, 'alert'),
    }),
  ),
});

/** Any name: it is encoded where it goes into a key (state/limits.ts `nameInKey`). */
const destinationName = nonEmpty;

export type { DestinationConfig } from '../destinations/kinds.ts';
export { destinationSchema };

const routeSchema = z.strictObject({
  name: nonEmpty,
  match: z._default(matchSchema, {}),
  /** Empty with `stop`: the items it matches go nowhere (a drop rule). */
  to: z.array(destinationName),
  stop: z._default(z.boolean(), false),
});
export type Route = z.infer<typeof routeSchema>;

const silenceSchema = z.strictObject({
  name: z.optional(nonEmpty),
  match: z._default(matchSchema, {}),
  until: timestamp,
  reason: nonEmpty,
});
export type Silence = z.infer<typeof silenceSchema>;

/** A Slack user id: U or W, then capitals and digits. */
const slackUserId = z
  .string()
  .check(z.regex(/^[UW][A-Z0-9]{2,}$/, 'expected a Slack user id (U or W, then capitals and digits)'));

/**
 * Acting from Slack (docs/actions.md): requests are verified with the app's signing
 * secret, and only these users of this workspace may act or look up. Disabling and enabling an
 * account (section 12) is for `identityAdmins` alone: named one by one, never `"*"`.
 */
const slackActionsFields = z.strictObject({
  /** Only from the secret object: the API, which has no config, reads it there by name. */
  signingSecret: secretRefSchema,
  teamId: z
    .string()
    .check(z.regex(/^[TE][A-Z0-9]{2,}$/, 'expected a Slack workspace id (T or E, then capitals and digits)')),
  allowedUsers: z
    .array(
      z.union([
        z.literal('*'),
        z
          .string()
          .check(
            z.regex(
              /^[UW][A-Z0-9]{2,}$/,
              'expected a Slack user id (U or W, then capitals and digits) or "*"',
            ),
          ),
      ]),
    )
    .check(z.minLength(1)),
  identityAdmins: z.optional(z.array(slackUserId)),
  responseUrlPrefix: z._default(responseUrlPrefix, 'https://hooks.slack.com/'),
});
/** Each identity admin must be allowed to act at all, else naming them would silently do nothing. */
const slackActionsSchema = slackActionsFields.check(
  z.superRefine((d, ctx) => {
    if (d.allowedUsers.includes('*')) return;
    (d.identityAdmins ?? []).forEach((admin, i) => {
      if (!d.allowedUsers.includes(admin))
        ctx.addIssue({
          code: 'custom',
          path: ['identityAdmins', i],
          message: `${admin} is not in allowedUsers: an identity admin must be allowed to act too (add it there)`,
          input: admin,
        });
    });
  }),
);
export type SlackActionsConfig = z.infer<typeof slackActionsSchema>;

/**
 * The config's schema with `identity` for the `identity` key's shape, at the top level and in a
 * tenant: schema.ts's identity schema, or anything (`baseConfigSchema` below).
 */
export function configSchemaWith<I extends z.ZodMiniType>(identity: I) {
  /**
   * One tenant of the organization watched from this deployment (docs/configuration.md): its own
   * sources, its streams and item keys named after its id.
   */
  const tenantSchema = z.strictObject({
    id: z.int().check(z.positive()),
    name: nonEmpty,
    sources: z._default(sourcesSchema, { identifierGroups: [] }),
    /** Who this tenant's leaked logins are (docs/identity.md): the top level's is not inherited. */
    identity: z.optional(identity),
  });
  return z.strictObject({
    $schema: z.optional(z.string()),
    sources: z._default(sourcesSchema, { identifierGroups: [] }),
    /** Several tenants from one deployment (docs/configuration.md). */
    tenants: z.optional(z.array(tenantSchema)),
    destinations: z.record(destinationName, destinationSchema),
    routes: z._default(z.array(routeSchema), []),
    silences: z._default(z.array(silenceSchema), []),
    passwords: z._default(z.enum(['masked', 'hidden', 'clear']), 'masked'),
    digest: z._default(
      z.strictObject({
        threshold: z._default(z.int().check(z.minimum(1)), 5),
        maxItems: z._default(z.int().check(z.minimum(1)), 20),
      }),
      { threshold: 5, maxItems: 20 },
    ),
    /** URLs a monitoring service expects to hear from after each good cycle (docs/configuration.md). */
    heartbeat: z.optional(
      z.strictObject({
        events: z.optional(secretOr(httpUrl)),
        credentials: z.optional(secretOr(httpUrl)),
        style: z._default(z.enum(['healthchecks', 'plain']), 'healthchecks'),
      }),
    ),
    /** Who the top-level sources' leaked logins are (docs/identity.md). */
    identity: z.optional(identity),
    /** Acting on alerts from where they are (docs/actions.md). */
    actions: z.optional(z.strictObject({ slack: z.optional(slackActionsSchema) })),
    /** Where a destination that refuses for good is reported (once). */
    ops: z.optional(z.strictObject({ to: z.array(destinationName) })),
    /** The organization's rate tiers and the global searches kept back (docs/architecture.md). */
    upstream: z._default(
      z.strictObject({
        requestsPerSecond: z._default(z.number().check(z.positive()), 4),
        searchRequestsPerSecond: z._default(z.number().check(z.positive()), 1),
        quotaReserve: z._default(z.int().check(z.minimum(0)), 100),
      }),
      { requestsPerSecond: 4, searchRequestsPerSecond: 1, quotaReserve: 100 },
    ),
  });
}

/** The config's schema but for the `identity` key's shape: it takes any value there. */
export const baseConfigSchema = configSchemaWith(z.unknown());
