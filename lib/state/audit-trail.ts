/**
 * The audit trails merged, newest first (`GET /audit`): asset toggles, silence changes, actions on
 * events and accounts (Slack's refusals among them), and API requests refused once their client
 * was known. Each trail is one partition sorted by time (state/audit.ts, state/actions.ts), so a
 * page is one Query of each (4 Queries of at most a page each), merged; the cursor holds where each
 * trail stopped. Toggles made before the toggles' shared partition existed are only in each
 * asset's own trail (`GET /assets/{id}/audit`).
 */
import { AUDIT_PK as ACTIONS_PK, type ActionAuditEntry } from './actions.ts';
import {
  ASSETS_AUDIT_PK,
  type AuditEntry,
  REFUSAL_AUDIT_PK,
  type RefusalAuditEntry,
  SILENCE_AUDIT_PK,
  type SilenceAuditEntry,
} from './audit.ts';
import { queryAll, type TableIo } from './io.ts';
import { marshall, unmarshall } from './marshall.ts';

/** One line of the merged trail (docs/console.md). */
export interface TrailEntry {
  at: string;
  who: string;
  what: string;
  target: string;
  result: string;
}

/** The trails, by a short name the cursor uses. */
export const TRAILS = {
  a: ASSETS_AUDIT_PK,
  s: SILENCE_AUDIT_PK,
  e: ACTIONS_PK,
  r: REFUSAL_AUDIT_PK,
} as const;
export type TrailName = keyof typeof TRAILS;

/** Where each trail stopped: the sort key to read below; `null` when it has nothing older. */
export type TrailPosition = Partial<Record<TrailName, string | null>>;

const NAMED_TARGETS = 10;

function targets(list: readonly string[] = []): string {
  const shown = list.slice(0, NAMED_TARGETS).join(', ');
  return list.length > NAMED_TARGETS ? `${shown} and ${list.length - NAMED_TARGETS} more` : shown;
}

function actionResult(e: ActionAuditEntry): string {
  if (e.refused) return `refused: ${e.refused}`;
  const results = e.results ?? [];
  if (results.length === 0) return 'recorded';
  const failed = results.filter((r) => !r.ok);
  if (failed.length === 0) return 'ok';
  return `${results.length - failed.length} of ${results.length} ok; ${failed[0]?.uid}: ${failed[0]?.error ?? 'failed'}`;
}

/** A stored entry of trail `name` as a line. */
export function trailLine(name: TrailName, item: Record<string, unknown>): TrailEntry {
  if (name === 'a') {
    const e = item as unknown as AuditEntry;
    return {
      at: e.at,
      who: e.client,
      what: e.requestedDisabled ? 'disable asset' : 'enable asset',
      target: `asset ${e.assetId}`,
      result: e.outcome,
    };
  }
  if (name === 's') {
    const e = item as unknown as SilenceAuditEntry;
    return { at: e.at, who: e.client, what: `silence ${e.action}`, target: e.silenceId, result: e.outcome };
  }
  if (name === 'e') {
    const e = item as unknown as ActionAuditEntry;
    return { at: e.at, who: e.by, what: e.type, target: targets(e.uids), result: actionResult(e) };
  }
  const e = item as unknown as RefusalAuditEntry;
  return {
    at: e.at,
    who: e.client,
    what: `${e.method} ${e.path}`,
    target: e.path,
    result: e.scope ? `forbidden: needs ${e.scope}` : (e.code ?? String(e.status)),
  };
}

/**
 * A page of the merged trail, newest first: at most `limit` lines, and where to go on from (none
 * when every trail is read to its end).
 */
export async function readTrail(
  io: TableIo,
  from: TrailPosition,
  limit: number,
  /**
   * Which stored entries the reader may see (a client bound to tenants, api/tenancy.ts): the
   * others are read past, so a page may hold fewer than `limit` and still go on; none is skipped.
   */
  keep?: (row: Record<string, unknown>) => boolean,
): Promise<{ items: TrailEntry[]; next?: TrailPosition }> {
  const names = Object.keys(TRAILS) as TrailName[];
  const read = await Promise.all(
    names.map(async (name) => {
      const below = from[name];
      if (below === null) return { name, rows: [], more: false };
      const rows = await queryAll(
        io,
        {
          KeyConditionExpression: below ? 'pk = :pk AND sk < :below' : 'pk = :pk',
          ExpressionAttributeValues: marshall({ ':pk': TRAILS[name], ...(below ? { ':below': below } : {}) }),
          ScanIndexForward: false,
        },
        limit + 1,
      );
      return { name, rows: rows.map((r) => unmarshall(r)), more: rows.length > limit };
    }),
  );
  const merged = read
    .flatMap(({ name, rows }) => rows.slice(0, limit).map((row) => ({ name, sk: String(row.sk), row })))
    .sort((x, y) => (x.sk < y.sk ? 1 : x.sk > y.sk ? -1 : x.name < y.name ? -1 : 1))
    .slice(0, limit);
  const next: TrailPosition = { ...from };
  for (const { name, sk } of merged) next[name] = sk;
  let open = false;
  for (const { name, rows, more } of read) {
    const taken = merged.filter((m) => m.name === name).length;
    // A trail with rows left over (not taken, or beyond what was read) goes on; else it is done.
    if (more || taken < Math.min(rows.length, limit)) open = true;
    else next[name] = null;
  }
  return {
    items: merged
      .filter(({ row }) => !keep || keep(row))
      .map(({ name, row }) => {
        const { pk: _pk, sk: _sk, ...entry } = row;
        return trailLine(name, entry);
      }),
    ...(open ? { next } : {}),
  };
}
