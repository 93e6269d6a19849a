/**
 * `Idempotency-Key` on the POSTs that act (toggle, silences, event actions), one piece every such
 * route shares. A key is the client's own, per route, kept 24 hours (state/idempotency.ts):
 *
 * - the same key with the same request (its path, and its JSON body compared parsed, so key
 *   order and whitespace do not matter) answers as the first did, and nothing more is done;
 * - with another request, 422 `idempotency_key_reused`, nothing done, and the refusal audited;
 * - while the first is still running, a repeat waits up to 5 seconds for its answer, then 409
 *   `idempotency_key_in_progress`;
 * - only a success is kept: a request that failed (an upstream that did not answer, a bad
 *   silence) frees its key, so the same key tries again;
 * - under `start --dry-run`, a route that acts outside is refused (409 `dry_run`, dry-run.ts) once
 *   the key is checked and before it is claimed.
 *
 * The route's work gets a stable id made of the client, the key and the request (each part
 * encoded, so no client name can make it another client's), and when the key's first attempt
 * started: the same request again, even one taking over from a process that died or from an
 * attempt whose write's answer was lost, is the same action, and what it makes can be named by
 * the two (a silence's id) so that it is made once.
 *
 * @example
 * return answerOnce(c, deps, 'POST /silences', body, async () => ({ status: 201, body: made }));
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { Logger } from '../log.ts';
import type { RefusalAuditStore } from '../state/audit.ts';
import type { IdempotencyScope, IdempotencyStore } from '../state/idempotency.ts';
import type { Vars } from './context.ts';
import { type DryRunFlag, refuseInDryRun } from './dry-run.ts';
import { ApiError } from './errors.ts';

/** How long a repeat waits for the first request's answer. */
export const IN_PROGRESS_WAIT_MS = 5_000;
const POLL_MS = 200;

/** What an Idempotency-Key may hold: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyDeps extends DryRunFlag {
  /** Where keys are kept; without it, a key only names the work (tests without a table). */
  idempotency?: IdempotencyStore;
  refusals?: RefusalAuditStore;
  logger: Logger;
  now: () => number;
  /** Waits between looks at a running request's record; default a real wait. */
  sleep?: (ms: number) => Promise<void>;
}

export interface Answer {
  status: number;
  body: unknown;
}

/** JSON with every object's keys in order: two bodies that parse the same write the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The request as its key remembers it: the path (ids in it, decoded) and the parsed body. */
export function fingerprintOf(path: string, body: unknown): string {
  return createHash('sha256').update(canonical({ path, body })).digest('hex');
}

/**
 * What a route's work is given: the stable id of this client's key and request (undefined when no
 * key was sent), and when the key's first attempt started (ms; now without a key or a table).
 */
export type Work = (id: string | undefined, startedAt: number) => Promise<Answer>;

/** Runs `work` once per Idempotency-Key (see the module comment) and answers as JSON. */
export async function answerOnce(
  c: Context<Vars>,
  deps: IdempotencyDeps,
  route: string,
  body: unknown,
  work: Work,
): Promise<Response> {
  const answer = await once(c, deps, route, body, work);
  return c.json(answer.body as object, answer.status as 200);
}

async function once(
  c: Context<Vars>,
  deps: IdempotencyDeps,
  route: string,
  body: unknown,
  work: Work,
): Promise<Answer> {
  const key = c.req.header('idempotency-key');
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key))
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  // Every check of the request is behind it: a dry run refuses here, before any key is claimed.
  refuseInDryRun(deps, route);
  if (key === undefined) return work(undefined, deps.now());
  const client = c.get('client') as string;
  const fingerprint = fingerprintOf(c.req.path, body);
  const id = `${encodeURIComponent(client)}:${encodeURIComponent(key)}:${fingerprint.slice(0, 16)}`;
  const store = deps.idempotency;
  if (!store) return work(id, deps.now());
  const scope: IdempotencyScope = { client, route, key };
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = deps.now() + IN_PROGRESS_WAIT_MS;
  for (;;) {
    const claimed = await store.claim(scope, fingerprint);
    if ('token' in claimed) return run(deps, scope, claimed.token, () => work(id, claimed.startedAt));
    const first = claimed.existing;
    if (first.fingerprint !== fingerprint) {
      await deps.refusals
        ?.record({
          at: new Date(deps.now()).toISOString(),
          requestId: c.get('requestId'),
          client,
          method: c.req.method,
          path: c.req.path.slice(0, 200),
          code: 'idempotency_key_reused',
          status: 422,
        })
        .catch((error: unknown) => deps.logger.error('could not audit a refused request', { error }));
      throw new ApiError(
        'idempotency_key_reused',
        `this Idempotency-Key was sent to ${route} before with another request, and nothing was done; use a new key for a new request`,
      );
    }
    if (first.state === 'done' && first.answer)
      return { status: first.answer.status, body: JSON.parse(first.answer.body) };
    if (deps.now() >= deadline)
      throw new ApiError(
        'idempotency_key_in_progress',
        'the first request with this Idempotency-Key is still running; retry in a few seconds',
      );
    await sleep(POLL_MS);
  }
}

/** Does the work under the claim: its success kept for repeats, its failure freeing the key. */
async function run(
  deps: IdempotencyDeps,
  scope: IdempotencyScope,
  token: string,
  work: () => Promise<Answer>,
): Promise<Answer> {
  const store = deps.idempotency as IdempotencyStore;
  const free = () =>
    store.release(scope, token).catch((error: unknown) =>
      deps.logger.error('could not free an Idempotency-Key; it is free again once its lease ends', {
        error,
      }),
    );
  let answer: Answer;
  try {
    answer = await work();
  } catch (error) {
    await free();
    throw error;
  }
  if (answer.status >= 300) await free();
  else
    await store
      .complete(scope, token, { status: answer.status, body: JSON.stringify(answer.body) })
      .catch((error: unknown) =>
        deps.logger.error('could not keep the answer of an Idempotency-Key; a repeat may do it again', {
          error,
        }),
      );
  return answer;
}
