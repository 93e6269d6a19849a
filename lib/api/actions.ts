/**
 * `POST /events/actions` (docs/actions.md, scope `events:act`): act on events through the
 * one action module (actions/events.ts), as the calling client. The body is `{"action", "uids"
 * (1 to 100), "reason"?}`; an `Idempotency-Key` header (idempotency.ts) makes a retry of the same
 * request the same action, which answers as the first did and does nothing more. The answer is
 * 200 `{"results": [{"uid", "ok", "error"?}]}` whenever the upstream answered (per uid: it may
 * refuse some); 502, 503 or 504, as for the toggle, when it did not, and then nothing changed.
 * The follow-ups are recorded here and sent by the next delivery pass.
 */
import * as z from 'zod/mini';
import { type ActDeps, actOnEvents, EVENT_ACTION_TYPES, MAX_ACTION_UIDS } from '../actions/events.ts';
import { AlertReader } from '../state/alert-list.ts';
import { mapLimit, type TableIo } from '../state/io.ts';
import { describeIssues, issuesToText } from '../upstream/validate.ts';
import type { Binding } from './auth.ts';
import { ApiError, upstreamFailure } from './errors.ts';
import { sees } from './tenancy.ts';

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

const USAGE = '{"action": "ignore", "uids": ["<event uid>"], "reason": "..."}';

export type EventActionBody = z.infer<typeof eventActionBodySchema>;

/** The body from its text: JSON first, then the exact shape (400 naming what is wrong). */
export function parseEventActionBody(text: string): EventActionBody {
  if (text.trim() === '') throw new ApiError('invalid_request', `the body is empty; send ${USAGE}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', `the body is not valid JSON; send ${USAGE}`);
  }
  const parsed = eventActionBodySchema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      'invalid_request',
      `the body must be ${USAGE}: ${issuesToText(describeIssues(parsed.error.issues, json))}`,
    );
  return parsed.data;
}

/**
 * The action's id for a request that sent an Idempotency-Key: `api:` and the stable id the key
 * and the request make (idempotency.ts, its parts encoded), so no two clients' keys, and no two
 * requests under one key, name one action.
 */
export function actionIdOf(requestId: string): string {
  return `api:${requestId}`;
}

/** Acts once, as `client` (`id`: the action's id, from an Idempotency-Key; else a new one). */
export async function eventActionsRequest(
  act: ActDeps,
  request: { client: string; body: EventActionBody; id?: string },
): Promise<{ results: { uid: string; ok: boolean; error?: string }[] }> {
  const { action, uids, reason } = request.body;
  const outcome = await actOnEvents(act, {
    type: action,
    uids,
    by: request.client,
    ...(reason ? { reason } : {}),
    ...(request.id ? { id: request.id } : {}),
  });
  if (outcome.unanswered)
    throw upstreamFailure(
      outcome.unanswered,
      'nothing was changed; retry (with the same Idempotency-Key, if you sent one)',
    );
  return { results: outcome.results };
}

/**
 * A bound client's uids (docs/api.md): each names an item by its key (`1001:<uid>`) or by its bare
 * uid where that is one item within the client's tenants. An item counts as the client's when the
 * alert index lists it under one of them (the tenant of the stream that recorded it, never a
 * reading of the key); any other uid is `not_found` and the upstream never hears of it. Returns
 * the keys to act on, by the uid the client sent.
 */
export async function screenUids(
  io: TableIo,
  binding: Binding,
  uids: readonly string[],
): Promise<Map<string, string | undefined>> {
  const reader = new AlertReader(io);
  // A bare uid is looked for under each of the client's tenants: a few reads at a time, however
  // many tenants and uids the request names (100 uids for 50 tenants is 5,000 reads).
  const candidates = uids.flatMap((uid) =>
    (/^\d+:/.test(uid)
      ? [uid]
      : [...(binding.topLevel ? [uid] : []), ...[...binding.tenants].map((t) => `${t}:${uid}`)]
    ).map((key) => ({ uid, key })),
  );
  const found = await mapLimit(candidates, READS_AT_ONCE, async ({ uid, key }) => {
    const listed = await reader.entry(key);
    return listed && listed.entry.kind === 'event' && sees(binding, listed.entry.tenant)
      ? { uid, key: listed.entry.key }
      : undefined;
  });
  const screened = new Map<string, string | undefined>();
  for (const uid of uids) {
    const mine = found.filter((f) => f?.uid === uid);
    screened.set(uid, mine.length === 1 ? mine[0]?.key : undefined);
  }
  return screened;
}

/** Index reads a bound client's uids take at once. */
const READS_AT_ONCE = 16;

/** Acts on the uids `screened` let through, and answers `not_found` for the others, in the order sent. */
export async function boundEventActionsRequest(
  act: ActDeps,
  screened: Map<string, string | undefined>,
  request: { client: string; body: EventActionBody; id?: string },
): Promise<{ results: { uid: string; ok: boolean; error?: string }[] }> {
  const keys = request.body.uids.flatMap((uid) => screened.get(uid) ?? []);
  const acted = keys.length
    ? (await eventActionsRequest(act, { ...request, body: { ...request.body, uids: keys } })).results
    : [];
  const byKey = new Map(acted.map((r) => [r.uid, r]));
  return {
    results: request.body.uids.map((uid) => {
      const key = screened.get(uid);
      const result = key === undefined ? undefined : byKey.get(key);
      return result ? { ...result, uid } : { uid, ok: false, error: 'not_found' };
    }),
  };
}
