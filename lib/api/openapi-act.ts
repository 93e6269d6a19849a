/**
 * The OpenAPI paths of acting on an alert (docs/actions.md): `POST /events/actions` and
 * `GET /lookup`, for openapi.ts.
 */
import { eventActionBodySchema, eventActionResultsSchema } from './actions.ts';
import { lookupAnswerSchema } from './lookup.ts';
import {
  errors,
  IDEMPOTENCY_KEY_PARAMETER,
  json,
  jsonBody,
  READ_ERRORS,
  WRITE_ERRORS,
} from './openapi-parts.ts';

export function actPaths(): Record<string, unknown> {
  return {
    '/events/actions': {
      post: {
        operationId: 'actOnEvents',
        summary:
          'Ignore or remediate events upstream (or undo either), once, and follow up where they were alerted',
        description:
          'Each uid is answered as the upstream answered it. The same Idempotency-Key again (from the same client, with the same body) is the same action: answered as the first was, nothing done again. When the upstream did not answer, nothing changed (502, 503 or 504). Every action is in the audit trail; the destinations that were sent an event hear of what changed from the next delivery pass.',
        security: [{ bearer: ['events:act'] }],
        'x-scopes': ['events:act'],
        parameters: [IDEMPOTENCY_KEY_PARAMETER],
        requestBody: jsonBody(eventActionBodySchema),
        responses: {
          '200': json('What the upstream said of each uid', eventActionResultsSchema),
          ...errors(
            ...WRITE_ERRORS,
            'upstream_error',
            'upstream_auth_failed',
            'upstream_rate_limited',
            'upstream_timeout',
          ),
        },
      },
    },
    '/lookup': {
      get: {
        operationId: 'lookup',
        summary: 'What the leak store knows of accounts, a domain, or a name pattern',
        description:
          'Exactly one kind: `account` (repeatable, up to 100), `domain`, or `keyword` (a `*` may lead or trail). The identities found, each with its leaks newest first, the password per the password policy; at most 20 identities, `more` counting the rest. One upstream page.',
        security: [{ bearer: ['lookup'] }],
        'x-scopes': ['lookup'],
        parameters: [
          {
            name: 'account',
            in: 'query',
            required: false,
            schema: { type: 'array', items: { type: 'string' } },
            explode: true,
          },
          { name: 'domain', in: 'query', required: false, schema: { type: 'string' } },
          { name: 'keyword', in: 'query', required: false, schema: { type: 'string' } },
          {
            name: 'tenant',
            in: 'query',
            required: false,
            description: 'With tenants: the id or name of the tenant to look up as (its own token).',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': json('The identities found', lookupAnswerSchema),
          ...errors(
            ...READ_ERRORS,
            'upstream_error',
            'upstream_auth_failed',
            'upstream_rate_limited',
            'upstream_timeout',
          ),
        },
      },
    },
  };
}
