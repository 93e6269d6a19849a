/**
 * The one way this product makes and ends a run-time silence, shared by the HTTP routes
 * (`POST /silences`, `DELETE /silences/{id}`) and `silences add|expire`: the request is checked
 * first (a bad one is refused, naming its path, and touches nothing), then the audit record is
 * written `pending`, then the table changes, then the record gets its outcome, as a toggle's does
 * (toggle.ts): if the first audit write fails, nothing changes, so no silence is made or ended
 * without a trace.
 *
 * @example
 * const silence = await addSilence(deps, { client: 'runbook', requestId, body: { match, until: 'PT4H', reason } });
 */
import type { Logger } from '../log.ts';
import { checkSilenceRequest, SILENCE_ID, type Silence } from '../rules/silences.ts';
import type { SilenceAuditEntry, SilenceAuditStore } from '../state/audit.ts';
import { newSilenceId, type SilenceStore, silenceIdFor } from '../state/silences.ts';
import { issuesToText } from '../upstream/validate.ts';
import { ApiError } from './errors.ts';

export interface SilenceDeps {
  silences: SilenceStore;
  silenceAudit: SilenceAuditStore;
  logger: Logger;
  /** Milliseconds since the epoch. */
  now: () => number;
}

export interface SilenceChange {
  /** The API client's name, or `cli:<user>`: `createdBy` / `expiredBy`, and the audit's `client`. */
  client: string;
  requestId: string;
}

/** The id of a silence from a path or an argument; a malformed one is a 400 that touches nothing. */
export function parseSilenceId(raw: string | undefined): string {
  const id = raw ?? '';
  if (!SILENCE_ID.test(id)) {
    const shown = JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);
    throw new ApiError(
      'invalid_request',
      `id must be a silence id such as s-0mhz3k2p1-4fa21b (see silences list), got ${shown}`,
    );
  }
  return id;
}

async function audited<T>(
  deps: SilenceDeps,
  base: Omit<SilenceAuditEntry, 'outcome' | 'status'>,
  change: () => Promise<{ result: T; outcome: string; status: number }>,
): Promise<T> {
  const log = deps.logger.child({
    requestId: base.requestId,
    client: base.client,
    silenceId: base.silenceId,
  });
  try {
    await deps.silenceAudit.record({ ...base, outcome: 'pending', status: 0 });
  } catch (error) {
    log.error('audit trail unavailable; the silence was not changed', { error });
    throw new ApiError(
      'internal_error',
      'the audit trail could not be written, so the silence was not changed; retry later',
      { cause: error },
    );
  }
  let done: { result: T; outcome: string; status: number };
  try {
    done = await change();
  } catch (error) {
    await deps.silenceAudit
      .record({
        ...base,
        outcome: error instanceof ApiError ? error.code : 'internal_error',
        status: error instanceof ApiError ? error.status : 500,
      })
      .catch(() => undefined);
    throw error instanceof ApiError
      ? error
      : new ApiError('internal_error', 'the silence could not be changed; see the logs and retry', {
          cause: error,
        });
  }
  try {
    await deps.silenceAudit.record({ ...base, outcome: done.outcome, status: done.status });
  } catch (error) {
    log.error('could not record the outcome of a silence change; its audit record stays pending', {
      error,
      outcome: done.outcome,
    });
  }
  log.info(`silence ${base.action}: ${done.outcome}`);
  return done.result;
}

/**
 * Makes a silence from `body` (`{match, until, reason}`); a bad body is a 400 naming each problem.
 * Answers the silence and what `config validate` would warn about it (an empty match holds every
 * alert back), so the API says what the CLI says.
 */
export async function addSilence(
  deps: SilenceDeps,
  request: SilenceChange & {
    body: unknown;
    /**
     * The request's own id and time when it has them (an Idempotency-Key and when its first
     * attempt started, a Slack click and its `action_ts`): the silence is named by the two
     * (state/silences.ts silenceIdFor), so the same request again, after a crash at any point,
     * finds the silence instead of making a second one.
     */
    once?: { id: string; at: number };
  },
): Promise<{ silence: Silence; warnings: string[] }> {
  const now = deps.now();
  const checked = checkSilenceRequest(request.body, now);
  if (!checked.ok) {
    throw new ApiError('invalid_request', `the silence is invalid: ${issuesToText(checked.issues)}`);
  }
  const silence: Silence = {
    id: request.once ? silenceIdFor(request.once.id, request.once.at) : newSilenceId(now),
    ...checked.value,
    createdBy: request.client,
    createdAt: new Date(now).toISOString(),
  };
  return audited(
    deps,
    {
      at: silence.createdAt,
      requestId: request.requestId,
      client: request.client,
      action: 'add',
      silenceId: silence.id,
      silence: { match: silence.match, until: silence.until, reason: silence.reason },
    },
    async () => {
      const made = await deps.silences.create(silence);
      // The same request again: the silence it made the first time.
      const outcome = made === silence ? 'ok' : 'replayed';
      return { result: { silence: made, warnings: checked.warnings }, outcome, status: 201 };
    },
  );
}

/**
 * Ends a silence now. One that had ended already is returned as it is (`already`); an unknown id
 * is a 404. Either way the attempt is in the audit trail.
 */
export async function expireSilence(
  deps: SilenceDeps,
  request: SilenceChange & {
    id: string;
    /** A bound client's rule (api/tenancy.ts): a silence outside its tenants is one it cannot see, a 404. */
    within?: (silence: Silence) => boolean;
  },
): Promise<{ silence: Silence; already: boolean }> {
  const id = parseSilenceId(request.id);
  return audited(
    deps,
    {
      at: new Date(deps.now()).toISOString(),
      requestId: request.requestId,
      client: request.client,
      action: 'expire',
      silenceId: id,
    },
    async () => {
      const within = request.within;
      if (within) {
        const found = await deps.silences.get(id);
        if (!found || !within(found)) throw new ApiError('not_found', `no silence with id ${id}`);
      }
      const expiry = await deps.silences.expire(id, request.client);
      if (expiry.outcome === 'unknown') throw new ApiError('not_found', `no silence with id ${id}`);
      const already = expiry.outcome === 'already';
      return {
        result: { silence: expiry.silence, already },
        outcome: already ? 'already_ended' : 'ok',
        status: 200,
      };
    },
  );
}
