/**
 * The upstream's side of an action on events (actions/events.ts): each key asked with its own
 * tenant's token and the upstream's own uid, and how a failure is kept and read again. An action
 * the upstream did not answer keeps how it failed in its record, so the calls that waited on it
 * answer as it did.
 */
import { splitKey } from '../poll/ids.ts';
import type { ActionRecord, EventActionType } from '../state/actions.ts';
import type { EventActionBatch } from '../upstream/client.ts';
import { UpstreamError, type UpstreamErrorCode } from '../upstream/errors.ts';

export type ActingUpstream = {
  eventActions(type: EventActionType, uids: readonly string[]): Promise<EventActionBatch[]>;
};

/**
 * A `tenants` entry's client (its own token: docs/configuration.md), and the configured
 * tenants' ids, which tell a key `1002:<uid>` from a top-level uid.
 */
export interface ActingTenants {
  ids(): Promise<readonly number[]>;
  upstreamFor(tenant: number): ActingUpstream;
}

/**
 * Asks the upstream, each key with its own tenant's token and the upstream's own uid (a key of a
 * `tenants` entry is `<tenant>:<uid>`); the answers speak of keys again.
 */
export async function actUpstream(
  deps: { upstream: ActingUpstream; tenants?: ActingTenants },
  type: EventActionType,
  keys: readonly string[],
): Promise<EventActionBatch[]> {
  const ids = (await deps.tenants?.ids()) ?? [];
  if (!ids.length || !deps.tenants) return deps.upstream.eventActions(type, keys);
  const groups = new Map<number | undefined, { key: string; uid: string }[]>();
  for (const key of keys) {
    const { tenant, uid } = splitKey(key, ids);
    const list = groups.get(tenant) ?? [];
    list.push({ key, uid });
    groups.set(tenant, list);
  }
  const out: EventActionBatch[] = [];
  for (const [tenant, list] of groups) {
    const client = tenant === undefined ? deps.upstream : deps.tenants.upstreamFor(tenant);
    const keyOf = new Map(list.map((e) => [e.uid, e.key]));
    const batches = await client.eventActions(
      type,
      list.map((e) => e.uid),
    );
    out.push(...batches.map((b) => ({ ...b, uids: b.uids.map((uid) => keyOf.get(uid) ?? uid) })));
  }
  return out;
}

/** The upstream did not answer (it may: retry), or refused our own credentials. */
export function noAnswer(error: UpstreamError): boolean {
  return error.retryable || error.code === 'unauthorized' || error.code === 'forbidden';
}

export function errorText(error: unknown): string {
  return error instanceof UpstreamError ? `${error.code}: ${error.message}` : String(error);
}

/** How the upstream failed, as a record keeps it. */
export function toldOf(error: UpstreamError): NonNullable<ActionRecord['unanswered']> {
  return {
    code: error.code,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  };
}

/** The failure a record kept, as the error the doors map to their answers (502, 503, 504; exit 3). */
export function upstreamErrorOf(told: ActionRecord['unanswered'] | UpstreamError): UpstreamError {
  if (told instanceof UpstreamError) return told;
  return new UpstreamError(
    (told?.code ?? 'upstream_unavailable') as UpstreamErrorCode,
    told?.message ?? 'the upstream did not answer',
    { status: told?.status, retryAfterMs: told?.retryAfterMs },
  );
}
