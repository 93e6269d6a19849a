/**
 * `POST /events/actions` (interface.md section 9, scope `events:act`): act on events through the
 * one action module (actions/events.ts), as the calling client. The body is `{"action", "uids"
 * (1 to 100), "reason"?}`; an `Idempotency-Key` header makes the action's id (per client), so a
 * retry of the same request is the same action: it answers as the first did and does nothing
 * more. The answer is 200 `{"results": [{"uid", "ok", "error"?}]}` whenever the upstream answered
 * (per uid: it may refuse some); 502, 503 or 504, as for the toggle, when it did not, and then
 * nothing changed. The follow-ups are recorded here and sent by the next delivery pass.
 */
import * as z from 'zod/mini';
import { type ActDeps, actOnEvents, EVENT_ACTION_TYPES, MAX_ACTION_UIDS } from '../actions/events.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import { ApiError, upstreamFailure } from './errors.ts';

export const eventActionBodySchema = z
  .strictObject({
    action: z
      .enum(EVENT_ACTION_TYPES as ['ignore', 'remediate', 'unignore', 'unremediate'])
      .register(z.globalRegistry, {
        description: 'What to do: ignore or remediate the events, or undo either.',
      }),
    uids: z
      .array(z.string().check(z.minLength(1)))
      .check(z.minLength(1), z.maxLength(MAX_ACTION_UIDS))
      .register(z.globalRegistry, { description: `The events' uids, 1 to ${MAX_ACTION_UIDS}.` }),
    reason: z.optional(
      z.string().register(z.globalRegistry, {
        description: 'Why: kept in the audit trail and shown in the follow-ups.',
      }),
    ),
  })
  .register(z.globalRegistry, { description: 'An action on events.' });

export const eventActionResultsSchema = z.object({
  results: z.array(z.object({ uid: z.string(), ok: z.boolean(), error: z.optional(z.string()) })),
});

/** What an Idempotency-Key may hold: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const USAGE = '{"action": "ignore", "uids": ["<event uid>"], "reason": "..."}';

export interface EventActionRequest {
  client: string;
  text: string;
  idempotencyKey: string | undefined;
}

/** Validates the request (400 naming what is wrong), then acts once. */
export async function eventActionsRequest(
  act: ActDeps,
  request: EventActionRequest,
): Promise<{ results: { uid: string; ok: boolean; error?: string }[] }> {
  const { idempotencyKey: key, client } = request;
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  if (request.text.trim() === '') throw new ApiError('invalid_request', `the body is empty; send ${USAGE}`);
  let json: unknown;
  try {
    json = JSON.parse(request.text);
  } catch {
    throw new ApiError('invalid_request', `the body is not valid JSON; send ${USAGE}`);
  }
  const parsed = eventActionBodySchema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      'invalid_request',
      `the body must be ${USAGE}: ${issuesToText(describeIssues(parsed.error.issues, json))}`,
    );
  const { action, uids, reason } = parsed.data;
  const outcome = await actOnEvents(act, {
    type: action,
    uids,
    by: client,
    ...(reason ? { reason } : {}),
    // Per client: two clients' keys never name one action.
    ...(key ? { id: `api:${client}:${key}` } : {}),
  });
  if (outcome.unanswered)
    throw upstreamFailure(
      outcome.unanswered,
      'nothing was changed; retry (with the same Idempotency-Key, if you sent one)',
    );
  return { results: outcome.results };
}
