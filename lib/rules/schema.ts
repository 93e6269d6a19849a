/**
 * The alert config (interface.md section 3) as one strict zod schema: an unknown key anywhere is
 * an error naming its path, and `config schema` prints the JSON Schema generated from this same
 * schema. Cross-references (route targets, sources, duplicate names) are checked in the same pass
 * (config-checks.ts, run by config.ts).
 *
 * zod/mini keeps the Lambda bundles small; the API is functional (`z.optional(x)`), the same
 * validation.
 */
import * as z from 'zod/mini';
import { EVENT_FILTER_TYPES } from '../upstream/event-types.ts';
import { parseDuration } from './duration.ts';
import { domainName, matchSchema, nonEmpty, severity } from './match-schema.ts';
import {
  jiraDestination,
  sentinelDestination,
  servicenowDestination,
  splunkDestination,
} from './schema-destinations.ts';
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

/**
 * One tenant of the organization watched from this deployment (interface.md section 10): its own
 * sources, its streams and item keys named after its id.
 */
const tenantSchema = z.strictObject({
  id: z.int().check(z.positive()),
  name: nonEmpty,
  sources: z._default(sourcesSchema, { identifierGroups: [] }),
});
export type TenantConfig = z.infer<typeof tenantSchema>;

/** Any name: it is encoded where it goes into a key (state/limits.ts `nameInKey`). */
const destinationName = nonEmpty;

const emailAddress = z
  .string()
  .check(z.regex(/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/, 'expected an e-mail address'));

/**
 * A Slack channel: its id (C…, G… or D…, shown in its details), or its name (`#soc`). Either is
 * posted to; `chat.update` takes only ids, which every answer gives, so the answer's is kept.
 */
const slackChannel = z
  .string()
  .check(
    z.regex(
      /^([CGD][A-Z0-9]{6,}|#[a-z0-9][a-z0-9._-]{0,79})$/,
      'expected a Slack channel id such as C0123ABCD (its details show it) or a name such as #soc',
    ),
  );

/**
 * Slack in one of two forms: an incoming webhook (`url`), or an app's bot token posting to a channel
 * (`token` and `channel`), which can also edit what it posted and reply in its threads.
 */
const slackDestination = z
  .strictObject({
    type: z.literal('slack'),
    url: z.optional(secretOr(httpUrl)),
    token: z.optional(secretOr(nonEmpty)),
    channel: z.optional(slackChannel),
    apiUrl: z.optional(httpUrl),
  })
  .check(
    z.superRefine((d, ctx) => {
      const app = d.token !== undefined || d.channel !== undefined || d.apiUrl !== undefined;
      if (d.url !== undefined && app)
        ctx.addIssue({
          code: 'custom',
          path: ['url'],
          message: 'give url (an incoming webhook) or token and channel (a Slack app), not both',
          input: d,
        });
      else if (d.url === undefined && (d.token === undefined || d.channel === undefined))
        ctx.addIssue({
          code: 'custom',
          path: [d.token === undefined ? 'token' : 'channel'],
          message: 'expected url (an incoming webhook), or token and channel (a Slack app)',
          input: d,
        });
    }),
  );

const emailDestination = z.strictObject({
  type: z.literal('email'),
  provider: z.enum(['generic', 'sendgrid', 'postmark']),
  /** Required for `generic`; defaults to the provider's API for the others. */
  url: z.optional(secretOr(httpUrl)),
  /** Bearer token (generic, sendgrid) or server token (postmark). */
  apiKey: z.optional(secretOr(nonEmpty)),
  from: emailAddress,
  to: z.array(emailAddress).check(z.minLength(1)),
  /** Postmark message stream; default `outbound`. */
  messageStream: z.optional(nonEmpty),
});

const webhookDestination = z.strictObject({
  type: z.literal('webhook'),
  url: secretOr(httpUrl),
  signingSecret: z.optional(secretOr(nonEmpty)),
  headers: z.optional(
    z.record(z.string().check(z.regex(/^[A-Za-z0-9-]+$/, 'expected a header name')), secretOr(z.string())),
  ),
  /** Also POST a body of kind `action` when someone acts on an item it was sent (default false). */
  followUps: z.optional(z.boolean()),
});

/** A Teams Workflows webhook: its URL carries a signature (`sig=`), so it is a secret in practice. */
const teamsDestination = z.strictObject({
  type: z.literal('teams'),
  url: secretOr(httpUrl),
});

/** A Discord webhook: its URL holds the webhook's token, so it is a secret. */
const discordDestination = z.strictObject({
  type: z.literal('discord'),
  url: secretOr(httpUrl),
});

/** PagerDuty Events API v2; `url` is overridable so tests and the emulator world can stand in for it. */
const pagerdutyDestination = z.strictObject({
  type: z.literal('pagerduty'),
  routingKey: secretOr(nonEmpty),
  url: z.optional(httpUrl),
  /** The PagerDuty severity of a leaked credential (events map theirs, interface.md section 4). */
  credentialSeverity: z._default(z.enum(['critical', 'error', 'warning', 'info']), 'error'),
});

const consoleDestination = z.strictObject({ type: z.literal('console') });

export const destinationSchema = z.discriminatedUnion('type', [
  slackDestination,
  emailDestination,
  webhookDestination,
  teamsDestination,
  discordDestination,
  pagerdutyDestination,
  jiraDestination,
  servicenowDestination,
  splunkDestination,
  sentinelDestination,
  consoleDestination,
]);
export type DestinationConfig = z.infer<typeof destinationSchema>;

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

/**
 * Acting from Slack (interface.md section 9): requests are verified with the app's signing
 * secret, and only these users of this workspace may act or look up.
 */
const slackActionsSchema = z.strictObject({
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
  responseUrlPrefix: z._default(responseUrlPrefix, 'https://hooks.slack.com/'),
});
export type SlackActionsConfig = z.infer<typeof slackActionsSchema>;

export const configSchema = z.strictObject({
  $schema: z.optional(z.string()),
  sources: z._default(sourcesSchema, { identifierGroups: [] }),
  /** Several tenants from one deployment (interface.md section 10). */
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
  /** URLs a monitoring service expects to hear from after each good cycle (interface.md section 11). */
  heartbeat: z.optional(
    z.strictObject({
      events: z.optional(secretOr(httpUrl)),
      credentials: z.optional(secretOr(httpUrl)),
      style: z._default(z.enum(['healthchecks', 'plain']), 'healthchecks'),
    }),
  ),
  /** Acting on alerts from where they are (interface.md section 9). */
  actions: z.optional(z.strictObject({ slack: z.optional(slackActionsSchema) })),
  /** Where a destination that refuses for good is reported (once). */
  ops: z.optional(z.strictObject({ to: z.array(destinationName) })),
  /** The organization's rate tiers and the global searches kept back (interface.md section 7). */
  upstream: z._default(
    z.strictObject({
      requestsPerSecond: z._default(z.number().check(z.positive()), 4),
      searchRequestsPerSecond: z._default(z.number().check(z.positive()), 1),
      quotaReserve: z._default(z.int().check(z.minimum(0)), 100),
    }),
    { requestsPerSecond: 4, searchRequestsPerSecond: 1, quotaReserve: 100 },
  ),
});
export type AlertsConfig = z.infer<typeof configSchema>;
export type PasswordPolicy = AlertsConfig['passwords'];

/** The JSON Schema of the config, generated from the zod schema above. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
