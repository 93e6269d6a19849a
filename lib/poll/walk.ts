/**
 * Where a stream's walk starts, and what it alerts on (docs/configuration.md).
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
 *
 * WalkState, at the end, holds where a walk stands while a stream's poll runs (stream.ts).
 */
import type { Logger } from '../log.ts';
import { RECORD_RETENTION_DAYS } from '../model.ts';
import type { CursorAdvance, StreamLease, StreamState } from '../state/streams.ts';
import type { StreamPage, StreamSpec } from './streams.ts';
import type { PageCounts, PollDeps } from './types.ts';

/** How far before the stream's position a restarted walk alerts again (docs/configuration.md). */
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

/** A walk's bound, for a log line. */
export function walkFields(walk: Walk) {
  return walk.alertFrom ? { alertFrom: walk.alertFrom } : { since: walk.since };
}

type Counters = { pages: number; items: number; newItems: number; quarantined: number };

/**
 * Where the stream's walk stands while it runs: the walk and its cursor, the newest item handled
 * (the stream's position) and seen this run (poll lag), and what the next cursor save adds to the
 * stream's counters.
 */
export class WalkState {
  walk: Walk;
  from?: string;
  /** The stream's position (walk.ts): the newest item it handled, ever. */
  newest?: string;
  /** The newest item this run saw past its walk's catching up, for the lag metric. */
  seenNewest?: string;

  /**
   * The poll lag at `now`: how old the newest item this run saw is, once its walk follows the feed
   * (none when it saw no such item). A walk catching up (a first walk over its lookback, a restart
   * re-reading the hour before its position) reads old items on purpose: their age says nothing of
   * how far behind the poller is, and would show a healthy first walk of credentials as 45 h late.
   * The `PollLagSeconds` metric, and what `status` shows (the stream's release stores it).
   */
  lagSeconds(now: number): number | undefined {
    return this.seenNewest ? Math.max(0, (now - Date.parse(this.seenNewest)) / 1000) : undefined;
  }
  private unsaved: Counters = { pages: 0, items: 0, newItems: 0, quarantined: 0 };
  private dirty = false;

  constructor(
    private readonly spec: StreamSpec,
    private readonly saved: StreamState,
    now: number,
    log: Logger,
  ) {
    const resumed = resumeWalk(saved, spec, now);
    this.walk = resumed.walk;
    this.from = resumed.walk.from;
    this.newest = saved.newestItemAt;
    if (resumed.started === 'changed')
      log.info('stream request changed; walking again from the stream position', walkFields(this.walk));
  }

  /** The walk after the upstream refused the cursor: a restart from the stream's position. */
  restarted(now: number): Walk {
    return restartWalk(this.saved, this.spec, now);
  }

  restart(walk: Walk): void {
    this.walk = walk;
    this.from = undefined;
  }

  /** The cursor save that stands for everything folded in so far. */
  advance(extra: Partial<CursorAdvance> = {}): CursorAdvance {
    return {
      next: this.from,
      fingerprint: this.spec.fingerprint,
      since: this.walk.since,
      alertFrom: this.walk.alertFrom,
      catchingUp: this.walk.catchingUp,
      baselining: this.walk.baselining,
      ...(this.newest ? { newestItemAt: this.newest } : {}),
      ...extra,
    };
  }

  /** Folds in a page whose records are written. */
  pageWritten(page: StreamPage, counts: PageCounts, end: boolean): void {
    // Each time parsed once (a page holds up to thousands), the two bests once a page.
    let newestMs = this.newest ? Date.parse(this.newest) : Number.NaN;
    let seenMs = this.seenNewest ? Date.parse(this.seenNewest) : Number.NaN;
    const following = !this.walk.catchingUp && !this.walk.baselining;
    for (const item of page.items) {
      const t = this.spec.itemTime(item);
      const ms = Date.parse(t);
      if (!this.newest || ms > newestMs) {
        this.newest = t;
        newestMs = ms;
      }
      if (following && (!this.seenNewest || ms > seenMs)) {
        this.seenNewest = t;
        seenMs = ms;
      }
    }
    const moved = page.next !== null && page.next !== this.from;
    if (moved) this.from = page.next as string;
    // The end of the feed ends a catching-up walk: from here on every match is alerted.
    if (end && (this.walk.catchingUp || this.walk.baselining))
      this.walk = { ...this.walk, catchingUp: false, baselining: false };
    this.unsaved.pages += 1;
    this.unsaved.items += page.items.length;
    this.unsaved.newItems += counts.newItems;
    this.unsaved.quarantined += page.invalid.length;
    if (moved || page.items.length || page.invalid.length) this.dirty = true;
  }

  /** Pages folded in since the last save. */
  get pendingPages(): number {
    return this.unsaved.pages;
  }

  /** Saves the cursor step when it changed anything (always at the end of the feed). */
  async save(deps: PollDeps, lease: StreamLease, end: boolean): Promise<void> {
    if (!this.dirty && !end) return;
    await deps.streams.advance(lease, { ...this.advance(), counters: this.unsaved });
    this.unsaved = { pages: 0, items: 0, newItems: 0, quarantined: 0 };
    this.dirty = false;
  }
}
