/**
 * The shapes of `POST /identity/actions` and `GET /identity/actions/{id}` (docs/api.md):
 * the request body, checked with each problem named by its field, and the answers. The
 * routes (identity-routes.ts) load this module with the first account action, and openapi.ts
 * publishes these same schemas, so the document cannot promise what the code refuses.
 */
import * as z from 'zod/mini';
import { accountActionProblem, MAX_ACTION_LOGINS } from '../identity/act.ts';
import { ACCOUNT_ACTIONS, type AccountAction } from '../identity/words.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import { ApiError } from './errors.ts';

/** A login as providers know it; longer is no address (RFC 5321's path limit is 256). */
const MAX_LOGIN_CHARS = 320;
/** The longest reason kept (the action module keeps 500 characters). */
export const MAX_ACCOUNT_REASON_CHARS = 500;

export const accountActionBodySchema = z
  .strictObject({
    action: z.enum(ACCOUNT_ACTIONS).register(z.globalRegistry, {
      description:
        'What to do to each account: `revokeSessions`, `requirePasswordChange`, `confirmCompromised` (scope identity:act), `disable` or `enable` (scope identity:disable).',
    }),
    logins: z
      .array(z.string().check(z.minLength(1), z.maxLength(MAX_LOGIN_CHARS)))
      .check(z.minLength(1), z.maxLength(MAX_ACTION_LOGINS))
      .register(z.globalRegistry, {
        description: `The leaked logins whose accounts to act on, 1 to ${MAX_ACTION_LOGINS}: each must have a stored verdict in the tenant (a login we looked up because it leaked), or nothing is done.`,
      }),
    tenant: z.optional(
      z.union([z.int(), z.string().check(z.minLength(1), z.maxLength(100))]).register(z.globalRegistry, {
        description:
          "With `tenants`: the tenant whose logins these are, by id (or name); absent for the top-level sources'.",
      }),
    ),
    reason: z.optional(
      z
        .string()
        .check(z.maxLength(MAX_ACCOUNT_REASON_CHARS))
        .register(z.globalRegistry, {
          description: `Why, at most ${MAX_ACCOUNT_REASON_CHARS} characters: kept in the audit trail, shown in the follow-ups, and given to the provider where it keeps one (Okta's user risk).`,
        }),
    ),
  })
  .register(z.globalRegistry, { description: 'An action on the accounts of leaked logins.' });

export type AccountActionBody = z.infer<typeof accountActionBodySchema>;

const loginResultSchema = z.object({
  login: z.string(),
  ok: z.boolean(),
  error: z.optional(
    z.string().register(z.globalRegistry, {
      description:
        'Why not: the provider’s refusal naming the permission or role it lacks, its failure, `under way` while no answer came yet, or `outcome unknown` (a person must check the account).',
    }),
  ),
});

export const accountActionResultsSchema = z.object({
  id: z.string().register(z.globalRegistry, {
    description: 'The action’s id: `GET /identity/actions/{id}` gives its outcome again.',
  }),
  results: z.array(loginResultSchema),
});

export const accountActionHandedSchema = z.object({
  id: z.string().register(z.globalRegistry, {
    description: 'The action’s id: `GET /identity/actions/{id}` gives its outcome once a worker took it.',
  }),
});

export const accountActionOutcomeSchema = z.object({
  id: z.string(),
  action: z.enum(ACCOUNT_ACTIONS),
  open: z.boolean().register(z.globalRegistry, {
    description: 'Still under way (a worker has yet to take it, or a provider has yet to answer).',
  }),
  at: z.string().register(z.globalRegistry, { description: 'When it was asked for (ISO 8601).' }),
  results: z.array(loginResultSchema),
});

/** An action's id as it arrives in the path: printable, at most 700 characters. */
export const accountActionIdSchema = z
  .string()
  .check(z.regex(/^[\x21-\x7e]{1,700}$/, 'must be 1 to 700 visible ASCII characters'))
  .register(z.globalRegistry, {
    description: 'The id `POST /identity/actions` answered, percent-encoded as one path segment.',
  });

const USAGE = '{"action": "revokeSessions", "logins": ["<login>"], "tenant"?: <id>, "reason"?: "..."}';

/** The body's JSON (400 when it is empty or not JSON). */
export function accountActionJson(text: string): unknown {
  if (text.trim() === '') throw new ApiError('invalid_request', `the body is empty; send ${USAGE}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', `the body is not valid JSON; send ${USAGE}`);
  }
}

/** The action a body asks for, when it names one (the scope it needs is checked before the rest). */
export function requestedAction(json: unknown): AccountAction | undefined {
  const action = (json as { action?: unknown } | null)?.action;
  return (ACCOUNT_ACTIONS as readonly unknown[]).includes(action) ? (action as AccountAction) : undefined;
}

/** The body, checked: 400 naming the field that is wrong (`logins[2]: ...`). */
export function accountActionBody(json: unknown): AccountActionBody {
  const parsed = accountActionBodySchema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      'invalid_request',
      `the body must be ${USAGE}: ${issuesToText(describeIssues(parsed.error.issues, json))}`,
    );
  // What the action module refuses beyond the shape (a login of spaces).
  const problem = accountActionProblem(parsed.data);
  if (problem) throw new ApiError('invalid_request', `logins: ${problem}`);
  return parsed.data;
}

/** A login's result as the API answers it: `{login, ok, error?}`. */
export function apiResult(r: { login: string; ok: boolean; error?: string }) {
  return { login: r.login, ok: r.ok, ...(r.error ? { error: r.error } : {}) };
}
