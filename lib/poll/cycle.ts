/**
 * One stream's poll: take its lease, read its cursor, page with `order: "asc"`, and for each page
 * decide each item's destinations, write the delivery records, then advance the cursor (fenced by
 * the lease). The next page is fetched while the current one is written, so DynamoDB time hides
 * behind upstream latency; only one page is held besides the one in flight.
 *
 * What a crash at any point costs: before the records are written, nothing (the page is read
 * again); between records and cursor, nothing (the records exist, the re-read is deduped).
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Alert } from '../model.ts';
import type { DeliveryStore, NewDelivery } from '../state/deliveries.ts';
import { keepAlive, LeaseLostError } from '../state/lease.ts';
import type { QuarantineStore } from '../state/quarantine.ts';
import type { CursorAdvance, StreamLease, StreamStore } from '../state/streams.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { isEndOfFeed } from '../upstream/paging.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';
import { issuesToText } from '../upstream/validate.ts';
import type { StreamPage, StreamSpec } from './streams.ts';

export interface RoutingDecision {
  /** Destination name -> names of the routes that chose it. */
  destinations: Map<string, string[]>;
  silenced?: { reason: string; name?: string };
}

export interface PollDeps {
  streams: StreamStore;
  deliveries: DeliveryStore;
  quarantine: QuarantineStore;
  /** The routing rules (lib/rules). */
  route(alert: Alert, now: Date): RoutingDecision;
  /** The password policy, applied to every item before anything else sees it (lib/render/mask). */
  protect<T extends Alert>(alert: T): T;
  protectRaw(raw: unknown): unknown;
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
}

function emptyResult(stream: string, status: StreamStatus): StreamResult {
  return {
    stream,
    status,
    pages: 0,
    items: 0,
    newItems: 0,
    queued: 0,
    silenced: 0,
    baseline: 0,
    unrouted: 0,
    quarantined: 0,
  };
}

function toAlert(spec: StreamSpec, item: EventItem | Credential): Alert {
  return spec.kind === 'event'
    ? { kind: 'event', key: (item as EventItem).metadata.uid, source: spec.id, item: item as EventItem }
    : { kind: 'credential', key: String((item as Credential).id), source: spec.id, item: item as Credential };
}

export async function pollStream(
  deps: PollDeps,
  spec: StreamSpec,
  budget: PollBudget,
): Promise<StreamResult> {
  const { clock, logger } = deps;
  const log = logger.child({ stream: spec.id });
  const lease = await deps.streams.acquire(spec.id, deps.owner);
  if (!lease) {
    log.info('stream is leased by another run; skipping it');
    return emptyResult(spec.id, 'skipped');
  }
  const result = emptyResult(spec.id, 'done');
  const alive = keepAlive(deps.streams.leases, lease);
  const state = lease.state;
  let since: string;
  let from: string | undefined;
  let baselining: boolean;
  if (state.fingerprint === spec.fingerprint && state.since) {
    since = state.since;
    from = state.cursor?.next;
    baselining = state.baselining;
  } else {
    // No walk yet, or the request changed: start again from the lookback window (dedupe absorbs overlap).
    since = new Date(clock.now() - spec.lookbackMs).toISOString();
    from = undefined;
    baselining = state.fingerprint === undefined && spec.firstRun === 'baseline';
    if (state.fingerprint !== undefined)
      log.info('stream request changed; starting again from the lookback window', { since });
  }
  let cursorTrusted = from !== undefined;
  let newest: string | undefined;
  const reserve = budget.reserveMs ?? 5_000;
  const options = () => ({ deadline: budget.deadline, signal: alive.signal });
  const advance = (extra: Partial<CursorAdvance> = {}): CursorAdvance => ({
    next: from,
    fingerprint: spec.fingerprint,
    since,
    baselining,
    ...(newest ? { newestItemAt: newest } : {}),
    ...extra,
  });

  const fetchPage = (cursor: string | undefined) => {
    const promise = spec.fetch(cursor, since, options());
    promise.catch(() => {}); // awaited later; keep an early rejection from being reported as unhandled
    return promise;
  };

  let released = false;
  try {
    let inFlight: Promise<StreamPage> | undefined = fetchPage(from);
    while (inFlight) {
      let page: StreamPage;
      try {
        page = await inFlight;
      } catch (error) {
        if (cursorTrusted && error instanceof UpstreamError && error.code === 'bad_request') {
          // The upstream no longer honours the saved cursor (expired, or from another instance).
          log.warn('the upstream refused the saved cursor; starting again from the lookback window', {
            code: error.code,
          });
          since = new Date(clock.now() - spec.lookbackMs).toISOString();
          from = undefined;
          cursorTrusted = false;
          await deps.streams.advance(lease, advance({ clearCursor: true }));
          inFlight = fetchPage(undefined);
          continue;
        }
        throw error;
      }
      cursorTrusted = false;
      await deps.checkpoint?.('page-fetched', spec.id);
      const end = isEndOfFeed(page.next, from);
      const outOfTime = clock.now() > budget.deadline - reserve;
      // Ask for the next page now, so its latency overlaps this page's writes.
      inFlight = !end && !outOfTime ? fetchPage(page.next as string) : undefined;

      const pageNew = await processPage(deps, spec, lease, page, baselining, result);
      for (const item of page.items) {
        const t = spec.itemTime(item);
        if (!newest || t > newest) newest = t;
      }
      await deps.checkpoint?.('records-written', spec.id);

      const moved = page.next !== null && page.next !== from;
      if (moved) from = page.next as string;
      if (end && baselining) baselining = false;
      result.pages += 1;
      if (moved || page.items.length || page.invalid.length || end) {
        await deps.streams.advance(lease, {
          ...advance(),
          counters: {
            pages: 1,
            items: page.items.length,
            newItems: pageNew,
            quarantined: page.invalid.length,
          },
        });
      }
      await deps.checkpoint?.('cursor-advanced', spec.id);
      if (!end && outOfTime) {
        result.status = 'budget';
        log.info('time budget spent; the next run resumes from the saved cursor', { pages: result.pages });
      }
    }
    await deps.streams.release(lease);
    released = true;
  } catch (error) {
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
      result.error = { code, message: (error as Error)?.message ?? String(error) };
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
  if (newest)
    deps.metrics.gauge('PollLagSeconds', Math.max(0, (clock.now() - Date.parse(newest)) / 1000), 'Seconds', {
      stream: spec.id,
    });
  deps.metrics.count('ItemsFetched', result.items, { stream: spec.id });
  deps.metrics.count('NewItems', result.newItems, { stream: spec.id });
  return result;
}

async function processPage(
  deps: PollDeps,
  spec: StreamSpec,
  lease: StreamLease,
  page: StreamPage,
  baselining: boolean,
  result: StreamResult,
): Promise<number> {
  const now = new Date(deps.clock.now());
  const records: NewDelivery[] = [];
  for (const item of page.items) {
    const alert = deps.protect(toAlert(spec, item));
    const decision = deps.route(alert, now);
    if (decision.destinations.size === 0) result.unrouted += 1;
    const status = baselining ? 'baseline' : decision.silenced ? 'silenced' : 'pending';
    for (const [destination, routes] of decision.destinations) {
      records.push({
        destination,
        kind: alert.kind,
        key: alert.key,
        source: spec.id,
        routes,
        item: alert.item,
        status,
        ...(status === 'silenced' && decision.silenced
          ? { note: `silenced: ${decision.silenced.reason}` }
          : {}),
      });
    }
  }
  result.items += page.items.length;
  if (page.invalid.length) {
    await deps.quarantine.record(
      spec.id,
      page.invalid.map((bad) => ({
        key: bad.key,
        issues: issuesToText(bad.issues),
        raw: deps.protectRaw(bad.raw),
      })),
    );
    for (const bad of page.invalid) {
      deps.logger.warn('item quarantined: it breaks the upstream spec', {
        stream: spec.id,
        key: bad.key,
        issues: issuesToText(bad.issues),
      });
    }
    deps.metrics.count('QuarantinedItems', page.invalid.length, { stream: spec.id });
    result.quarantined += page.invalid.length;
  }
  if (records.length === 0) return 0;
  // Batch creation leans on the lease: use it only while the lease has comfortably long to run.
  const leaseSafe = lease.expiresAt - deps.clock.now() > 15_000;
  const { created } = await deps.deliveries.create(records, { exclusive: spec.exclusive && leaseSafe });
  const newKeys = new Set(created.map((r) => r.key));
  result.newItems += newKeys.size;
  for (const record of created) {
    if (record.status === 'pending') result.queued += 1;
    else if (record.status === 'silenced') result.silenced += 1;
    else if (record.status === 'baseline') result.baseline += 1;
  }
  return newKeys.size;
}
