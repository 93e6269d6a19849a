/**
 * Where a stream's walk starts, and what it alerts on (interface.md section 3).
 *
 * A walk is one pass through a stream's feed with one request: it resumes from the saved cursor
 * while the request stays the same, and starts without a cursor otherwise. What each bound
 * excludes, for good:
 *
 * - **Events carry no time bound.** A cursor is only valid for the exact request it came from, so
 *   a lower bound on `estimated_created_at` would be frozen with it and hide every later match of
 *   older content (a 2019 paste matched today). The feed (`order: "asc"`) returns what the
 *   upstream matches after what it already returned, so the walk reads the tenant's whole feed
 *   once, then follows it. Excluded: nothing.
 * - **A first walk alerts on what was matched within the lookback.** An event matched
 *   (`metadata.matched_at`) before `alertFrom` (the walk's start minus `lookback`) is treated as
 *   seen: passed over, with no record and no send. Excluded: items matched before the stream
 *   existed minus its lookback, which is what `lookback` means. `firstRun: "baseline"` records
 *   everything the first walk finds as baseline instead.
 * - **Credentials are bounded by `imported_at.gte = since`**, the time the store received them,
 *   which only grows: a credential imported later always sorts after the bound. Excluded: what was
 *   imported before the first walk's lookback.
 * - **A walk that restarts** (the upstream refused the cursor, or the request changed) starts from
 *   the stream's position P, the newest `matched_at` / `imported_at` it handled: it alerts on what
 *   was matched from `P - 1 h` on (events: `alertFrom`; credentials: `since`). What it re-reads
 *   there was handled recently, so its delivery records (kept 90 days) absorb the overlap. It never
 *   restarts from now minus the lookback, which would skip what was matched during downtime.
 *   Excluded: items matched more than an hour before P that the stream never saw, which the old
 *   cursor had already walked past.
 * - **What a walk treated as baseline stays baseline**: a restart never alerts below the previous
 *   walk's `alertFrom`, and a first `baseline` walk that restarts keeps baselining to its end.
 * - **A position older than the record retention**: the records of what sits just below P may
 *   be gone, so a restart alerts only on what was matched after P. Excluded: items matched within
 *   the hour before P that the stream never saw, after it saw nothing new for 89 days.
 */
import { RECORD_RETENTION_DAYS } from '../model.ts';
import type { StreamState } from '../state/streams.ts';

/** How far before the stream's position a restarted walk alerts again (interface.md section 3). */
export const RESTART_OVERLAP_MS = 3_600_000;
/** A position older than this may have lost the records a restart would re-read. */
export const POSITION_FRESH_MS = (RECORD_RETENTION_DAYS - 1) * 86_400_000;

export interface Walk {
  /** Cursor to resume from; undefined reads the feed from its start (or from `since`). */
  from?: string;
  /** Credentials: the `imported_at.gte` of this walk's requests. Events: where the walk began (not sent). */
  since: string;
  /** Events, while catching up: an item matched before this is treated as seen, not sent. */
  alertFrom?: string;
  /** The walk has not yet reached the end of the feed since it started without a cursor. */
  catchingUp: boolean;
  /** A first run with `firstRun: "baseline"`: records what it finds as baseline, sends nothing. */
  baselining: boolean;
}

export interface WalkSpec {
  kind: 'event' | 'credential';
  fingerprint: string;
  lookbackMs: number;
  firstRun: 'alert' | 'baseline';
}

/** No bound before the epoch: a lookback of a million years is valid config, and means "all of it". */
const iso = (ms: number) => new Date(Math.max(0, ms)).toISOString();
const later = (a: string | undefined, b: string) =>
  a !== undefined && Date.parse(a) > Date.parse(b) ? a : b;

/** The walk to continue: the saved one while the request is unchanged, else a fresh start. */
export function resumeWalk(
  state: StreamState,
  spec: WalkSpec,
  now: number,
): { walk: Walk; started?: 'first' | 'changed' } {
  if (state.fingerprint === spec.fingerprint && state.since) {
    return {
      walk: {
        ...(state.cursor?.next ? { from: state.cursor.next } : {}),
        since: state.since,
        ...(state.alertFrom ? { alertFrom: state.alertFrom } : {}),
        catchingUp: state.catchingUp,
        baselining: state.baselining,
      },
    };
  }
  return {
    walk: restartWalk(state, spec, now),
    started: state.fingerprint === undefined ? 'first' : 'changed',
  };
}

/** A walk without a cursor: a stream's first, or a restart from its position (see above). */
export function restartWalk(state: StreamState, spec: WalkSpec, now: number): Walk {
  const baselining = state.fingerprint === undefined ? spec.firstRun === 'baseline' : state.baselining;
  const position = state.newestItemAt ? Date.parse(state.newestItemAt) : Number.NaN;
  if (Number.isNaN(position)) {
    // Nothing handled yet: a first walk over the lookback window.
    const start = iso(now - spec.lookbackMs);
    return {
      since: start,
      ...(spec.kind === 'event' ? { alertFrom: later(state.alertFrom, start) } : {}),
      catchingUp: true,
      baselining,
    };
  }
  const from = now - position > POSITION_FRESH_MS ? iso(position + 1) : iso(position - RESTART_OVERLAP_MS);
  return {
    since: from,
    ...(spec.kind === 'event' ? { alertFrom: later(state.alertFrom, from) } : {}),
    catchingUp: true,
    baselining,
  };
}

/** Whether an item is passed over as seen: an event matched before the catching-up walk's bound. */
export function passedOver(walk: Walk, itemTime: string): boolean {
  return walk.catchingUp && walk.alertFrom !== undefined && Date.parse(itemTime) < Date.parse(walk.alertFrom);
}
