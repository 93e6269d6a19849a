/**
 * The OpenAPI paths of acting on leaked logins' accounts (docs/identity.md): `POST
 * /identity/actions` and `GET /identity/actions/{id}`, for openapi.ts.
 */
import {
  accountActionBodySchema,
  accountActionHandedSchema,
  accountActionIdSchema,
  accountActionOutcomeSchema,
  accountActionResultsSchema,
} from './identity-actions.ts';
import {
  errors,
  IDEMPOTENCY_KEY_PARAMETER,
  json,
  jsonBody,
  READ_ERRORS,
  schemaOf,
  WRITE_ERRORS,
} from './openapi-parts.ts';

export function identityPaths(): Record<string, unknown> {
  return {
    '/identity/actions': {
      post: {
        operationId: 'actOnAccounts',
        summary:
          'Revoke sessions, require a password change, confirm compromised, disable or enable the accounts of leaked logins, once',
        description:
          'Only on logins with a stored verdict in the tenant (logins looked up because they leaked): any other is a 400 naming it, and nothing is done. `disable` and `enable` need the scope identity:disable, the others identity:act; neither is held by a client given as a bare digest. Where this service has the identity providers’ secrets (serve, npm start) it acts at once and answers 200 with each login’s result, a refusal naming the permission or role the provider says is missing; on AWS it records the action, hands it to a worker and answers 202 with its id (`GET /identity/actions/{id}` then says how it went). The same Idempotency-Key again (same client, same body) is the same action: answered as the first was, nothing done again. Every action is in the audit trail, and where the logins’ credentials were alerted hears of it.',
        security: [{ bearer: ['identity:act'] }, { bearer: ['identity:disable'] }],
        'x-scopes': ['identity:act', 'identity:disable'],
        parameters: [IDEMPOTENCY_KEY_PARAMETER],
        requestBody: jsonBody(accountActionBodySchema),
        responses: {
          '200': json('What each login’s provider answered (taken here)', accountActionResultsSchema),
          '202': json(
            'Recorded and handed to a worker (on AWS), or a provider has not answered yet',
            accountActionHandedSchema,
          ),
          ...errors(...WRITE_ERRORS),
        },
      },
    },
    '/identity/actions/{id}': {
      get: {
        operationId: 'getAccountAction',
        summary: 'How an action on accounts went: each login’s result, or that it is still under way',
        security: [{ bearer: ['read'] }],
        'x-scopes': ['read'],
        parameters: [
          { name: 'id', in: 'path', required: true, schema: schemaOf(accountActionIdSchema, 'input') },
        ],
        responses: {
          '200': json('The action and each login’s result so far', accountActionOutcomeSchema),
          ...errors(...READ_ERRORS, 'not_found'),
        },
      },
    },
  };
}
