/**
 * What was done to one event or one login, for an alert's detail: a small item per target of every
 * action in the audit trail (`acted#action#<uid>` for an event, `acted#idaction#<login>` for an
 * account), written beside the trail's own entry (state/actions.ts `audit`), under the same sort
 * key, so writing it twice (a resumed action) leaves one. The trail itself is one partition of
 * every action, newest first: finding one event's actions there would mean reading all of them.
 */
import type { ActionAuditEntry } from './action-record.ts';
import { queryAll, type StoredItem, type TableIo } from './io.ts';
import { fitKey, PARTITION_KEY_BYTES } from './limits.ts';
import { marshall, unmarshall } from './marshall.ts';

/** One action on one target, as an alert's detail lists it. */
export interface ActedEntry {
  id: string;
  type: string;
  by: string;
  at: string;
  /** `ok`, the upstream's or provider's error, `refused: <why>`, or `recorded` (no answer kept). */
  result: string;
  /** An account action's scope: a tenant's id, or `top`. */
  scope?: number | string;
  refused?: boolean;
}

/** Targets of one action named in a pointer, at most: an action names at most 100. */
const MAX_TARGETS = 100;

export function actedPk(prefix: string, target: string): string {
  // Logins compare without case, as the identity store keeps them.
  return fitKey(
    `acted#${prefix}#${prefix === 'idaction' ? target.toLowerCase() : target}`,
    PARTITION_KEY_BYTES,
  );
}

function resultOf(entry: ActionAuditEntry, target: string): string {
  if (entry.refused) return `refused: ${entry.refused}`;
  const found = entry.results?.find((r) => r.uid === target);
  if (!found) return 'recorded';
  return found.ok ? 'ok' : (found.error ?? 'failed');
}

/** The pointers of an audit entry of kind `prefix` (`action`, `idaction`). */
export function actedPointers(prefix: string, entry: ActionAuditEntry): StoredItem[] {
  const scope = (entry as { scope?: number | string }).scope;
  return [...new Set(entry.uids ?? [])].slice(0, MAX_TARGETS).map((target) =>
    marshall({
      pk: actedPk(prefix, target),
      sk: `${entry.at}#${entry.id}`,
      id: entry.id,
      type: entry.type,
      by: entry.by,
      at: entry.at,
      result: resultOf(entry, target),
      ...(scope === undefined ? {} : { scope }),
      ...(entry.refused ? { refused: true } : {}),
    }),
  );
}

/** What was done to `target`, newest first, at most `limit`. */
export async function actedOn(
  io: TableIo,
  prefix: string,
  target: string,
  limit = 50,
): Promise<ActedEntry[]> {
  const stored = await queryAll(
    io,
    {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: marshall({ ':pk': actedPk(prefix, target) }),
      ScanIndexForward: false,
    },
    limit,
  );
  return stored.map((s) => {
    const { pk: _pk, sk: _sk, ...entry } = unmarshall(s);
    return entry as unknown as ActedEntry;
  });
}
