/**
 * The OpenAPI paths of the console's API (docs/console.md, lib/api/console-api.ts):
 * `GET /alerts`, `GET /alerts/{key}`, `GET /audit`, `GET /whoami`, `POST /destinations/{name}/test` and
 * `POST /deliveries/retry`, with their answers' schemas, for openapi.ts (`npm run docs`); the
 * dry run of `POST /silences` is described there, on its path.
 */
import * as z from 'zod/mini';
import {
  DELIVERY_STATES,
  MAX_ENTRIES,
  MAX_QUERIES,
  MAX_RECORD_KEYS,
  PAGE_ITEMS,
} from '../state/alert-list.ts';
import { MAX_REQUEUE } from '../state/records/requeue.ts';
import { SEVERITIES } from '../upstream/event-types.ts';
import { AUDIT_PAGE } from './alerts.ts';
import { SCOPES } from './auth.ts';
import { DRY_RUN_DAYS, DRY_RUN_MAX, dryRunBodySchema, retryRequestSchema } from './console-acts.ts';
import {
  errors,
  IDEMPOTENCY_KEY_PARAMETER,
  json,
  jsonBody,
  READ_ERRORS,
  WRITE_ERRORS,
} from './openapi-parts.ts';

const described = <T extends z.core.$ZodType>(schema: T, description: string): T => {
  z.globalRegistry.add(schema, { description });
  return schema;
};

const tenantSchema = z.object({ id: z.number(), name: z.string() });

const whoAmISchema = z.object({
  name: described(z.string(), 'The API client (its name in apiClients).'),
  grants: described(
    z.array(
      z.object({
        scopes: z.array(z.string()),
        tenants: z.optional(
          described(z.array(z.number()), 'The `tenants` entries (ids) whose data the grant is bound to.'),
        ),
        topLevel: z.optional(described(z.literal(true), 'Bound to the top-level sources’ data too.')),
      }),
    ),
    'What the token may do, and on which tenants’ data (none named: all of it). A client is one grant.',
  ),
  dryRun: z.optional(
    described(
      z.literal(true),
      'Present under `start --dry-run`: every route that would act outside answers 409 `dry_run`.',
    ),
  ),
});

const deliverySchema = described(
  z.object({
    id: described(
      z.string(),
      'The delivery record’s id (`<destination>~<kind>~<key>`): what `POST /deliveries/retry` takes.',
    ),
    destination: z.string(),
    status: described(z.enum(DELIVERY_STATES), '`retrying` is pending after a failed attempt.'),
    attempts: z.number(),
    lastError: z.optional(z.string()),
    sentAt: z.optional(z.string()),
  }),
  'One destination’s delivery of the item, as it stands now.',
);

const identitySchema = described(
  z.looseObject({ provider: z.string(), verdict: z.string() }),
  'The credential’s identity verdict (`_identity`), as looked up when it was recorded.',
);

const alertSchema = z.object({
  key: z.string(),
  kind: z.enum(['event', 'credential']),
  severity: z.optional(described(z.enum(SEVERITIES), 'Events only: the effective severity.')),
  title: described(z.string(), 'An event’s type and whom it concerns; a credential’s login.'),
  tenant: z.optional(tenantSchema),
  matchedAt: described(z.string(), 'An event’s `matched_at`; a credential’s `imported_at`.'),
  identity: z.optional(identitySchema),
  deliveries: z.array(deliverySchema),
});

export const alertListSchema = z.object({
  items: z.array(alertSchema),
  cursor: z.optional(
    described(z.string(), 'Opaque; pass it back as `cursor` for the next page. Absent: nothing older.'),
  ),
});

const trailSchema = z.object({
  at: z.string(),
  who: described(
    z.string(),
    'An API client, `slack:<user>`, `cli:<user>`, or `poll:<stream>` for the recording.',
  ),
  what: z.string(),
  target: z.string(),
  result: z.string(),
});

export const alertDetailSchema = z.object({
  item: described(
    z.looseObject({}),
    'The item as the password policy left it (and `_trimmed`, `_identity` where set).',
  ),
  key: z.string(),
  kind: z.enum(['event', 'credential']),
  tenant: z.optional(tenantSchema),
  identity: z.optional(identitySchema),
  deliveries: z.array(deliverySchema),
  actions: z.array(
    z.object({ id: z.string(), type: z.string(), by: z.string(), at: z.string(), result: z.string() }),
  ),
  audit: z.array(trailSchema),
});

export const auditTrailSchema = z.object({ items: z.array(trailSchema), cursor: z.optional(z.string()) });
export const dryRunAnswerSchema = z.object({
  wouldHold: z.number(),
  of: described(
    z.number(),
    `How many recent alerts were looked at: the last ${DRY_RUN_DAYS} days, at most ${DRY_RUN_MAX}.`,
  ),
});
export const testAnswerSchema = z.object({
  result: z.enum(['sent', 'refused', 'failed']),
  detail: z.optional(
    described(
      z.string(),
      'The destination’s answer, and its follow-on steps (a PagerDuty resolve, a Slack edit).',
    ),
  ),
});
export const retryAnswerSchema = z.object({ requeued: z.number(), skipped: z.number() });
export { dryRunBodySchema };

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

export function consolePaths(): Record<string, unknown> {
  return {
    '/alerts': {
      get: {
        operationId: 'listAlerts',
        summary: 'The alerts, newest first, with each destination’s delivery state',
        description: `Newest recorded first, at most ${PAGE_ITEMS} a page. A page reads at most ${MAX_QUERIES} Queries of the alert index (${MAX_ENTRIES} entries) and ${MAX_RECORD_KEYS} delivery records, whatever the filters: with narrow filters it may hold fewer than ${PAGE_ITEMS}, or none, and still a cursor. An item is listed for 90 days after its records were created; items recorded before the index existed, and baselines, are not listed.`,
        security: [{ bearer: ['read'] }],
        'x-scopes': ['read'],
        parameters: [
          query('kind', 'event or credential', { type: 'string', enum: ['event', 'credential'] }),
          query('severity', 'Events of this effective severity', { type: 'string', enum: [...SEVERITIES] }),
          query('tenant', 'A `tenants` entry, by id or name'),
          query('destination', 'Items with a delivery to this destination'),
          query('state', 'Items with at least one delivery in this state', {
            type: 'string',
            enum: [...DELIVERY_STATES],
          }),
          query('q', 'Text in the title (or login) or key, without regard to case'),
          query('cursor', 'The `cursor` of the previous page'),
        ],
        responses: { '200': json('A page of alerts', alertListSchema), ...errors(...READ_ERRORS) },
      },
    },
    '/alerts/{key}': {
      get: {
        operationId: 'getAlert',
        summary: 'One alert: the item, its deliveries, what was done to it, its trail',
        description:
          'The item is kept with the index even once its records are packed or dropped it. `actions` are the actions taken on the event (or on the credential’s account); `audit` adds their refusals and the recording itself.',
        security: [{ bearer: ['read'] }],
        'x-scopes': ['read'],
        parameters: [
          {
            name: 'key',
            in: 'path',
            required: true,
            description: 'The item key, percent-encoded as one segment.',
            schema: { type: 'string' },
          },
        ],
        responses: { '200': json('The alert', alertDetailSchema), ...errors(...READ_ERRORS, 'not_found') },
      },
    },
    '/audit': {
      get: {
        operationId: 'getAuditTrail',
        summary: 'The audit trails merged, newest first',
        description: `Asset toggles, silence changes, actions on events and accounts (and Slack's refusals), and API requests refused once their client was known; at most ${AUDIT_PAGE} a page.`,
        security: [{ bearer: ['read'] }],
        'x-scopes': ['read'],
        parameters: [query('cursor', 'The `cursor` of the previous page')],
        responses: { '200': json('A page of the trail', auditTrailSchema), ...errors(...READ_ERRORS) },
      },
    },
    '/whoami': {
      get: {
        operationId: 'getWhoAmI',
        summary: 'Who a token is: its API client and its grants (scopes, and the tenants they hold on)',
        description:
          'Any valid token may ask: the console reads it once after signing in, to show only what the token may do.',
        // Any one scope will do: every token may learn what it is.
        security: SCOPES.map((scope) => ({ bearer: [scope] })),
        'x-scopes': [...SCOPES],
        responses: {
          '200': json('The client and its grants', whoAmISchema),
          ...errors('unauthorized', 'method_not_allowed', 'internal_error'),
        },
      },
    },
    '/destinations/{name}/test': {
      post: {
        operationId: 'testDestination',
        summary: 'Send a test message to a destination now',
        description:
          'As `destinations test` sends it (a PagerDuty test is triggered then resolved). At most one a minute per destination, for every process on the table: a second is 429 `rate_limited` with `Retry-After`. `refused` is a permanent refusal (or a secret missing from the secret object), `failed` one worth retrying.',
        security: [{ bearer: ['destinations:write'] }],
        'x-scopes': ['destinations:write'],
        parameters: [
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
          IDEMPOTENCY_KEY_PARAMETER,
        ],
        requestBody: {
          required: false,
          description: 'None, or `{}`.',
          content: { 'application/json': { schema: { type: 'object', additionalProperties: false } } },
        },
        responses: {
          '200': json('What the destination answered', testAnswerSchema),
          ...errors(...WRITE_ERRORS, 'not_found', 'rate_limited'),
        },
      },
    },
    '/deliveries/retry': {
      post: {
        operationId: 'retryDeliveries',
        summary: 'Re-queue dead deliveries',
        description: `By ids, or the oldest dead of a destination; at most ${MAX_REQUEUE} a request (call again for the next ones). A delivery that is not dead is left alone and counted in \`skipped\`.`,
        security: [{ bearer: ['destinations:write'] }],
        'x-scopes': ['destinations:write'],
        parameters: [IDEMPOTENCY_KEY_PARAMETER],
        requestBody: jsonBody(retryRequestSchema),
        responses: {
          '200': json('What was re-queued', retryAnswerSchema),
          ...errors(...WRITE_ERRORS),
        },
      },
    },
  };
}
