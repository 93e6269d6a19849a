/**
 * One stream's poll: take its lease, read its cursor, page with `order: "asc"`, and for each page
 * decide each item's destinations and write the delivery records (page.ts), then advance the
 * cursor (fenced by the lease).
 *
 * Pages flow through a short pipeline: the upstream is asked for the next page as soon as one
 * arrives, and up to PIPELINE_DEPTH pages are written at once, so DynamoDB time (and inline
 * webhook sends) hide behind upstream latency and use both sides' time. The cursor still moves in
 * page order, each step only once its page's records exist (a step is saved together with the
 * next when that page's records are already written, up to PIPELINE_DEPTH pages in one step);
 * memory holds at most that many pages.
 *
 * What a crash at any point costs: before a page's records are written, nothing (the page is read
 * again); between records and cursor, nothing (the records exist, the re-read is deduped). A
 * failure stops the fetching, lets the pages in flight finish (so nothing is left writing behind
 * it) and moves the cursor no further.
 */
import type { Clock } from '../clock.ts';
import type { InlineDelivery } from '../deliver/inline.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Alert } from '../model.ts';
import type { Decision } from '../rules/match.ts';
import { keepAlive, LeaseLostError, LeaseRenewalError } from '../state/lease.ts';
import type { QuarantineStore } from '../state/quarantine.ts';
import type { DeliveryRecords } from '../state/records/index.ts';
import type { CursorAdvance, StreamStore } from '../state/streams.ts';
import { RequestLimitError, UpstreamError } from '../upstream/errors.ts';
import { isEndOfFeed } from '../upstream/paging.ts';
import { type PageCounts, processPage, zeroCounts } from './page.ts';
import type { StreamPage, StreamSpec } from './streams.ts';
import { restartWalk, resumeWalk, type Walk } from './walk.ts';

/** Pages being written at once (besides the one being fetched). */
export const PIPELINE_DEPTH = 4;

export interface PollDeps {
  streams: StreamStore;
  records: DeliveryRecords;
  quarantine: QuarantineStore;
  /** The routing rules (lib/rules/match.ts). */
  route(alert: Alert, now: Date): Decision;
  /** The password policy, applied to every item before anything else sees it (lib/rules/passwords.ts). */
  applyPasswordPolicy<T extends Alert>(alert: T): T;
  /** The same policy for an item that broke the spec, whose shape is unknown (before quarantine). */
  maskRawItem(raw: unknown): unknown;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this run in leases. */
  owner: string;
  /** Test hook: called at each step boundary, so a test can stop the cycle there. */
  checkpoint?(step: PollStep, stream: string): void | Promise<void>;
}

export type PollStep = 'page-fetched' | 'records-written' | 'cursor-advanced';

export type StreamStatus =
  | 'done'
  | 'budget'
  | 'skipped'
  | 'rate_limited'
  | 'lease_lost'
  | 'failed'
  | 'unauthorized';

export interface StreamResult {
  stream: string;
  status: StreamStatus;
  pages: number;
  items: number;
  /** Items that got at least one new delivery record. */
  newItems: number;
  /** Records created as pending (to be sent). */
  queued: number;
  /** Records created already sent (delivered inline while polling). */
  sent: number;
  silenced: number;
  baseline: number;
  unrouted: number;
  quarantined: number;
  error?: { code: string; message: string };
}

export interface PollBudget {
  /** ms since the epoch: no upstream request or wait goes past it. */
  deadline: number;
  /** Stop starting pages this long before the deadline, to leave time to write and deliver. */
  reserveMs?: number;
  /**
   * The last moment the cycle's delivery pass may start a send (default `deadline`): a send in
   * flight keeps its full timeout, so a Lambda gives the moment that leaves room for one.
   */
  sendsStartBy?: number;
}

function emptyResult(stream: string, status: StreamStatus): StreamResult {
  return { stream, status, pages: 0, ...zeroCounts() };
}

function addCounts(result: StreamResult, counts: PageCounts): void {
  for (const key of Object.keys(counts) as (keyof PageCounts)[]) result[key] += counts[key];
}

interface Slot {
  page: StreamPage;
  /** Whether this page is the last one for now. */
  end: boolean;
  work: Promise<PageCounts>;
  /** Set once `work` has succeeded. */
  done?: boolean;
}

/** A 400 answered to the stream's own search (not the token exchange's, not a limit checked locally). */
function refusedRequest(error: unknown, spec: StreamSpec): boolean {
  return (
    error instanceof UpstreamError &&
    error.code === 'bad_request' &&
    error.status === 400 &&
    error.endpoint === spec.endpoint &&
    !(error instanceof RequestLimitError)
  );
}

function walkFields(walk: Walk) {
  return walk.alertFrom ? { alertFrom: walk.alertFrom } : { since: walk.since };
}

/** Polls one stream; with `inline`, its new webhook deliveries are sent as pages are written. */
export async function pollStream(
  deps: PollDeps,
  spec: StreamSpec,
  budget: PollBudget,
  inline?: InlineDelivery,
): Promise<StreamResult> {
  const { clock, logger } = deps;
  const log = logger.child({ stream: spec.id });
  const lease = await deps.streams.acquire(spec.id, deps.owner);
  if (!lease) {
    log.info('stream is leased by another run; skipping it');
    return emptyResult(spec.id, 'skipped');
  }
  const result = emptyResult(spec.id, 'done');
  const alive = keepAlive(deps.streams.leases, lease, undefined, clock);
  const state = lease.state;
  const resumed = resumeWalk(state, spec, clock.now());
  let walk = resumed.walk;
  let from = walk.from;
  if (resumed.started === 'changed')
    log.info('stream request changed; walking again from the stream position', walkFields(walk));
  let cursorTrusted = from !== undefined;
  // The stream's position (poll/walk.ts), and the newest item this run saw (poll lag).
  let newest: string | undefined = state.newestItemAt;
  let seenNewest: string | undefined;
  const reserve = budget.reserveMs ?? 5_000;
  const options = () => ({ deadline: budget.deadline, signal: alive.signal });
  const advance = (extra: Partial<CursorAdvance> = {}): CursorAdvance => ({
    next: from,
    fingerprint: spec.fingerprint,
    since: walk.since,
    alertFrom: walk.alertFrom,
    catchingUp: walk.catchingUp,
    baselining: walk.baselining,
    ...(newest ? { newestItemAt: newest } : {}),
    ...extra,
  });

  const fetchPage = (cursor: string | undefined) => {
    const promise = spec.page(cursor, walk.since, options());
    promise.catch(() => {}); // awaited later; keep an early rejection from being reported as unhandled
    return promise;
  };

  const window: Slot[] = [];
  const inFlight = new Set<string>();
  const claims = spec.feedTime ? deps.records.claimWindow(spec.kind) : undefined;
  // What pages processed since the cursor was last saved add to the stream's counters.
  let unsaved = { pages: 0, items: 0, newItems: 0, quarantined: 0 };
  let dirty = false;
  let released = false;
  try {
    try {
      let fetching: Promise<StreamPage> | undefined = fetchPage(from);
      let fetchFrom = from;
      let fetchError: unknown;
      while (fetching || window.length) {
        if (fetching && window.length < PIPELINE_DEPTH) {
          let page: StreamPage;
          try {
            page = await fetching;
          } catch (error) {
            if (!(cursorTrusted && refusedRequest(error, spec))) {
              // Finish the pages already in flight, then report it.
              fetching = undefined;
              fetchError = error;
              continue;
            }
            // A 400 to a request with a saved cursor: the same request without the cursor tells
            // whether the cursor (expired, from another instance) is what was refused. Only then
            // is it dropped; anything else keeps it for the next run.
            cursorTrusted = false;
            const restart = restartWalk(state, spec, clock.now());
            try {
              page = await spec.page(undefined, restart.since, options());
            } catch {
              fetching = undefined;
              fetchError = error;
              continue;
            }
            log.warn('the upstream refused the saved cursor; walking again from the stream position', {
              ...walkFields(restart),
              refusal: error instanceof Error ? error.message : String(error),
            });
            walk = restart;
            from = undefined;
            fetchFrom = undefined;
            await deps.streams.advance(lease, advance({ clearCursor: true }));
          }
          cursorTrusted = false;
          await deps.checkpoint?.('page-fetched', spec.id);
          const end = isEndOfFeed(page.next, fetchFrom);
          // Ask for the next page first, so its latency overlaps the work on the pages in flight.
          if (!end && clock.now() <= budget.deadline - reserve) {
            fetchFrom = page.next as string;
            fetching = fetchPage(fetchFrom);
          } else {
            fetching = undefined;
            if (!end) {
              result.status = 'budget';
              log.info('time budget spent; the next run resumes from the saved cursor', {
                pages: result.pages + window.length + 1,
              });
            }
          }
          const work = processPage(deps, page, {
            spec,
            lease,
            walk: { ...walk },
            inFlight,
            inline,
            claims,
            deadline: budget.deadline,
            signal: alive.signal,
          });
          const slot: Slot = { page, end, work };
          work.then(
            () => {
              slot.done = true;
            },
            () => {}, // awaited in order below
          );
          window.push(slot);
          continue;
        }
        const slot = window.shift() as Slot;
        const counts = await slot.work;
        const { page, end } = slot;
        addCounts(result, counts);
        for (const item of page.items) {
          const t = spec.itemTime(item);
          if (!newest || Date.parse(t) > Date.parse(newest)) newest = t;
          if (!seenNewest || Date.parse(t) > Date.parse(seenNewest)) seenNewest = t;
        }
        await deps.checkpoint?.('records-written', spec.id);

        const moved = page.next !== null && page.next !== from;
        if (moved) from = page.next as string;
        if (end && (walk.catchingUp || walk.baselining))
          walk = { ...walk, catchingUp: false, baselining: false };
        result.pages += 1;
        unsaved.pages += 1;
        unsaved.items += page.items.length;
        unsaved.newItems += counts.newItems;
        unsaved.quarantined += page.invalid.length;
        if (moved || page.items.length || page.invalid.length) dirty = true;
        // When the next page's records are already written, its cursor step covers this one too:
        // fewer writes, and a crash re-reads at most PIPELINE_DEPTH pages more (all deduped).
        if (!end && window[0]?.done && unsaved.pages < PIPELINE_DEPTH) continue;
        if (dirty || end) {
          await deps.streams.advance(lease, { ...advance(), counters: unsaved });
          unsaved = { pages: 0, items: 0, newItems: 0, quarantined: 0 };
          dirty = false;
        }
        await deps.checkpoint?.('cursor-advanced', spec.id);
      }
      if (fetchError) throw fetchError;
    } finally {
      // Never leave a page writing (or sending) behind a failure.
      await Promise.allSettled(window.map((slot) => slot.work));
    }
    await deps.streams.release(lease);
    released = true;
  } catch (thrown) {
    // Work aborted by a failed renewal fails with that failure, not with the abort.
    const error = alive.signal.reason instanceof LeaseRenewalError ? alive.signal.reason : thrown;
    if (error instanceof LeaseLostError || alive.signal.reason instanceof LeaseLostError) {
      result.status = 'lease_lost';
      result.error = { code: 'lease_lost', message: 'the stream lease was lost; another run took over' };
      log.warn(result.error.message);
    } else if (error instanceof UpstreamError && error.code === 'rate_limited') {
      result.status = 'rate_limited';
      result.error = { code: error.code, message: error.message };
      log.warn(
        'rate limited by the upstream beyond the time budget; stopping cleanly, the next run resumes',
        {
          retryAfterMs: error.retryAfterMs,
        },
      );
    } else if (error instanceof UpstreamError && error.code === 'unauthorized') {
      result.status = 'unauthorized';
      result.error = { code: error.code, message: error.message };
      log.error('the upstream rejected the credentials; fix EXPOSURE_API_TOKEN / EXPOSURE_API_KEY', {
        code: error.code,
      });
    } else {
      result.status = 'failed';
      const code =
        error instanceof UpstreamError ? error.code : ((error as { code?: string })?.code ?? 'error');
      result.error = { code, message: describeError(error) };
      log.error('stream poll failed; the next run resumes from the saved cursor', { code, error });
    }
  } finally {
    alive.stop();
    if (!released && result.status !== 'lease_lost') {
      await deps.streams
        .release(lease)
        .catch((error: unknown) => log.warn('could not release the lease', { error }));
    }
  }
  if (seenNewest)
    deps.metrics.gauge(
      'PollLagSeconds',
      Math.max(0, (clock.now() - Date.parse(seenNewest)) / 1000),
      'Seconds',
      {
        stream: spec.id,
      },
    );
  deps.metrics.count('ItemsFetched', result.items, { stream: spec.id });
  deps.metrics.count('NewItems', result.newItems, { stream: spec.id });
  return result;
}
