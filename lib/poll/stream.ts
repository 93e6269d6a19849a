/**
 * One stream's poll: take its lease, read where its walk stands (walk.ts), page with
 * `order: "asc"`, and for each page decide each item's destinations and write the delivery records
 * (page.ts), then advance the cursor (fenced by the lease).
 *
 * Pages flow through a short pipeline: the upstream is asked for the next page as soon as one
 * arrives, and up to PIPELINE_DEPTH pages are written at once (a credential page's identity
 * lookups first), so DynamoDB time (and inline webhook sends, and lookups) hide behind upstream
 * latency and use both sides' time. The cursor still moves in
 * page order, each step only once its page's records exist (a step is saved together with the
 * next when that page's records are already written, up to PIPELINE_DEPTH pages in one step);
 * memory holds at most that many pages.
 *
 * What a crash at any point costs: before a page's records are written, nothing (the page is read
 * again); between records and cursor, nothing (the records exist, the re-read is deduped). A
 * failure stops the fetching, lets the pages in flight finish (so nothing is left writing behind
 * it) and moves the cursor no further; what ended it is read by failure.ts, loaded then.
 *
 * Longer than 300 lines: the lease, the pipeline and how a walk ends share their state, and read
 * best in one file.
 */
import type { InlineDelivery } from '../deliver/inline.ts';
import { describeError } from '../errors.ts';
import { lazily } from '../lazy.ts';
import type { Logger } from '../log.ts';
import { countForStream } from '../metrics.ts';
import { keepAlive, LeaseLostError, LeaseRenewalError } from '../state/lease.ts';
import type { StreamLease } from '../state/streams.ts';
import { RequestLimitError, UpstreamError } from '../upstream/errors.ts';
import { isEndOfFeed } from '../upstream/paging.ts';
import type { StreamFailure } from './failure.ts';
import { processPage, wouldSend } from './page.ts';
import type { StreamPage, StreamSpec } from './streams.ts';
import { type PageCounts, type PollBudget, type PollDeps, type StreamResult, zeroCounts } from './types.ts';
import { type Walk, WalkState, walkFields } from './walk.ts';

/** What a stream stopped by the operator (PollBudget `stop`) says of it, beside its status `budget`. */
const STOPPED = { code: 'stopped', message: 'stopped on request; resumes from its cursor' } as const;

/** What a stream's end by an error makes of its result (failure.ts), loaded with the first such end. */
const failures = lazily("a stream's failures (poll/failure.ts)", () => import('./failure.ts'));

/** The failure `cause` is for `stream`; a failure to load that code is the stream's failure. */
async function failureOf(cause: unknown, stream: string): Promise<StreamFailure> {
  try {
    return (await failures()).statusOf(cause, stream);
  } catch (error) {
    const message = `${describeError(cause)} (and ${describeError(error)})`;
    return { status: 'failed', error: { code: 'load', message }, level: 'error', log: message, fields: {} };
  }
}

/** Pages being written at once (besides the one being fetched). */
export const PIPELINE_DEPTH = 4;

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

interface Slot {
  page: StreamPage;
  /** Whether this page is the last one for now. */
  end: boolean;
  work: Promise<PageCounts>;
  /** Set once `work` has succeeded. */
  done?: boolean;
}

/**
 * Whether the stream was tried: it goes to the back of the order whether or not it read a page,
 * unless it read none because the shared rate had no turn for it (it sent nothing) or the cycle
 * ended while its first request was on its way (it was not slow, only last): those keep their place.
 */
function tried(result: StreamResult, budget: PollBudget): boolean {
  if (result.pages > 0) return true;
  if (result.nextTurnAt !== undefined) return false;
  return result.status !== 'budget' || budget.ownShare === true;
}

/** Polls one stream; with `inline`, its new webhook deliveries are sent as pages are written. */
export async function pollStream(
  deps: PollDeps,
  spec: StreamSpec,
  budget: PollBudget,
  inline?: InlineDelivery,
): Promise<StreamResult> {
  const { clock } = deps;
  const log = deps.logger.child({ stream: spec.id });
  const result: StreamResult = { stream: spec.id, status: 'done', pages: 0, ...zeroCounts() };
  const lease = await deps.streams.acquire(spec.id, deps.owner, budget.notPolledSince);
  if (!lease) {
    log.info('stream is leased by another run, or was polled by one since this cycle began; skipping it');
    return { ...result, status: 'skipped' };
  }
  const alive = keepAlive(deps.streams.leases, lease, undefined, clock);
  const state = new WalkState(spec, lease.state, clock.now(), log);
  let released = false;
  // Measured when the lease is released, so the metric and `status` hold the same value.
  let lag: number | undefined;
  const measure = () => (lag = state.lagSeconds(clock.now()));
  try {
    await walkPages({ deps, spec, budget, inline, lease, state, result, log, signal: alive.signal });
    await deps.streams.release(lease, result.status, tried(result, budget), measure());
    released = true;
  } catch (thrown) {
    // Work aborted by the lease's keeper fails with what the keeper found, not with the abort.
    const reason = alive.signal.reason;
    const cause = reason instanceof LeaseRenewalError || reason instanceof LeaseLostError ? reason : thrown;
    const failure = await failureOf(cause, spec.id);
    result.status = failure.status;
    result.error = failure.error;
    if (cause instanceof UpstreamError && cause.noTurn)
      result.nextTurnAt = clock.now() + (cause.retryAfterMs ?? 0);
    // A failure every cycle meets again (statusOf `once`) is said once a run.
    const said = failure.once !== undefined && deps.reported?.has(failure.once);
    if (failure.once) deps.reported?.add(failure.once);
    log[said ? 'debug' : failure.level](failure.log, failure.fields);
  } finally {
    alive.stop();
    if (!released && result.status !== 'lease_lost') {
      await deps.streams
        .release(lease, result.status, tried(result, budget), measure())
        .catch((error: unknown) => log.warn('could not release the lease', { error }));
    }
  }
  if (lag === undefined) measure();
  if (lag !== undefined) {
    deps.metrics.gauge('PollLagSeconds', lag, 'Seconds', { stream: spec.id });
    result.lagSeconds = lag;
  }
  countForStream(deps.metrics, 'ItemsFetched', result.items, spec.id);
  countForStream(deps.metrics, 'NewItems', result.newItems, spec.id);
  return result;
}

interface WalkContext {
  deps: PollDeps;
  spec: StreamSpec;
  budget: PollBudget;
  inline?: InlineDelivery;
  lease: StreamLease;
  state: WalkState;
  result: StreamResult;
  log: Logger;
  signal: AbortSignal;
}

/**
 * The page pipeline, read top to bottom: fetch a page (the first may prove the saved cursor
 * refused), ask for the next at once, start writing this one; and, in page order, fold each
 * written page into the walk and save the cursor.
 */
async function walkPages(context: WalkContext): Promise<void> {
  const { deps, spec, budget, lease, state, result, log } = context;
  const { clock } = deps;
  const reserve = budget.reserveMs ?? 5_000;
  // Depth 0 turns the pipeline off (the bench measures what it is worth): one page at a time,
  // the next asked for only once this one is written and its cursor saved.
  const prefetch = (deps.pipelineDepth ?? PIPELINE_DEPTH) > 0;
  const depth = Math.max(1, deps.pipelineDepth ?? PIPELINE_DEPTH);
  let deferred: string | undefined;
  const fetchPage = (cursor: string | undefined) => {
    const promise = spec.page(cursor, state.walk.since, {
      deadline: budget.deadline,
      signal: context.signal,
    });
    promise.catch(() => {}); // awaited later; keep an early rejection from being reported as unhandled
    return promise;
  };
  const window: Slot[] = [];
  const inFlight = new Set<string>();
  const claims = spec.feedTime ? deps.records.claimWindow(spec.kind) : undefined;
  let cursorTrusted = state.from !== undefined;
  let fetching: Promise<StreamPage> | undefined = fetchPage(state.from);
  let fetchFrom = state.from;
  let fetchError: unknown;
  let started = Promise.resolve();
  try {
    while (fetching || window.length) {
      if (fetching && window.length < depth) {
        let page: StreamPage;
        try {
          page = await fetching;
        } catch (error) {
          const restarted =
            cursorTrusted && refusedRequest(error, spec) ? await restartIfRefused(context, error) : undefined;
          cursorTrusted = false;
          if (!restarted) {
            // Finish the pages already in flight, then report it.
            fetching = undefined;
            fetchError = error;
            continue;
          }
          page = restarted;
          fetchFrom = undefined;
        }
        cursorTrusted = false;
        await deps.checkpoint?.('page-fetched', spec.id);
        const end = isEndOfFeed(page.next, fetchFrom);
        // Ask for the next page first, so its latency overlaps the work on the pages in flight.
        if (!end && clock.now() <= budget.deadline - reserve && !budget.stop?.aborted) {
          fetchFrom = page.next as string;
          fetching = prefetch ? fetchPage(fetchFrom) : undefined;
          if (!prefetch) deferred = fetchFrom;
        } else {
          fetching = undefined;
          if (!end) {
            result.status = 'budget';
            if (budget.stop?.aborted) result.error = { ...STOPPED };
            log.info(
              `${budget.stop?.aborted ? 'stop requested' : 'time budget spent'}; the next run resumes from the saved cursor`,
              { pages: result.pages + window.length + 1 },
            );
          }
        }
        const walk = { ...state.walk };
        // The page's lookups run beside the next pages' fetches and lookups; its records start
        // once the page before has started its own, so pages take their places in order.
        const looked = withVerdicts(context, page, walk);
        looked.catch(() => {});
        const ready = started.then(() => looked);
        const work = ready.then((withIdentity) =>
          processPage(deps, withIdentity, {
            spec,
            lease,
            walk,
            inFlight,
            inline: context.inline,
            claims,
            deadline: budget.deadline,
            signal: context.signal,
          }),
        );
        started = ready.then(
          () => {},
          () => {},
        );
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
      for (const key of Object.keys(counts) as (keyof PageCounts)[]) result[key] += counts[key];
      await deps.checkpoint?.('records-written', spec.id);
      state.pageWritten(slot.page, counts, slot.end);
      result.pages += 1;
      // When the next page's records are already written, its cursor step covers this one too:
      // fewer writes, and a crash re-reads at most PIPELINE_DEPTH pages more (all deduped).
      if (!slot.end && window[0]?.done && state.pendingPages < depth) continue;
      await state.save(deps, lease, slot.end);
      await deps.checkpoint?.('cursor-advanced', spec.id);
      if (deferred !== undefined) {
        if (clock.now() <= budget.deadline - reserve && !budget.stop?.aborted) fetching = fetchPage(deferred);
        else {
          result.status = 'budget';
          if (budget.stop?.aborted) result.error = { ...STOPPED };
        }
        deferred = undefined;
      }
    }
    if (fetchError) throw fetchError;
  } finally {
    // Never leave a page writing (or sending) behind a failure.
    await Promise.allSettled(window.map((slot) => slot.work));
  }
}

/**
 * A credential page's items with each login's verdict (identity configured), before anything
 * routes them: the page's records, and so the cursor past it, wait for its lookups.
 */
async function withVerdicts(context: WalkContext, page: StreamPage, walk: Walk): Promise<StreamPage> {
  const step = context.deps.identityCycle;
  if (!step || context.spec.kind !== 'credential' || !page.items.length) return page;
  const items = await step.verdicts(context.spec, page.items, {
    baselining: walk.baselining,
    deadline: context.budget.deadline,
    signal: context.signal,
    wouldSend: (item) => wouldSend(context.deps, context.spec, item),
  });
  return { ...page, items };
}

/**
 * A 400 to a request with a saved cursor: the same request without the cursor tells whether the
 * cursor (expired, from another instance) is what was refused. Only then is it dropped, the walk
 * restarted from the stream's position (walk.ts), and that request's page returned; anything else
 * keeps the cursor for the next run (undefined).
 */
async function restartIfRefused(context: WalkContext, refusal: unknown): Promise<StreamPage | undefined> {
  const { deps, spec, state, lease, log, budget } = context;
  const restart = state.restarted(deps.clock.now());
  let page: StreamPage;
  try {
    page = await spec.page(undefined, restart.since, { deadline: budget.deadline, signal: context.signal });
  } catch {
    return undefined;
  }
  log.warn('the upstream refused the saved cursor; walking again from the stream position', {
    ...walkFields(restart),
    refusal: refusal instanceof Error ? refusal.message : String(refusal),
  });
  state.restart(restart);
  await deps.streams.advance(lease, state.advance({ clearCursor: true }));
  return page;
}
