/**
 * One page of a stream, from items to delivery records: the password policy, the routing decision
 * for each item, quarantine for items that broke the spec, then the records. An exclusive stream
 * whose lease has comfortably long to run reads which records exist (one BatchGet per 100, none
 * for credentials above the claim mark), sends new webhook deliveries inline (inline.ts) and
 * batch-writes every new record (final credential records as packs, state/packs.ts); any other
 * stream creates each record with a conditional put.
 */
import type { InlineDelivery } from '../deliver/inline.ts';
import type { Alert } from '../model.ts';
import { type DeliveryRecord, deliveryId, type NewDelivery } from '../state/deliveries.ts';
import { fitItem } from '../state/limits.ts';
import { type ClaimWindow, itemPosition } from '../state/packs.ts';
import type { StreamLease } from '../state/streams.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';
import { issuesToText } from '../upstream/validate.ts';
import type { PollDeps, StreamResult } from './cycle.ts';
import type { StreamPage, StreamSpec } from './streams.ts';
import { passedOver, type Walk } from './walk.ts';

/** Batch creation leans on the lease: it is used only while the lease has this long left at least. */
export const LEASE_SAFE_MS = 15_000;

export interface PageContext {
  spec: StreamSpec;
  lease: StreamLease;
  /** The walk as it stood when the page was fetched: what it alerts on (poll/walk.ts). */
  walk: Walk;
  /**
   * Ids of the records that pages still in flight are creating (shared by a stream's pages). An id
   * an earlier page holds is left to it, so an item on two pages in flight is not sent twice.
   */
  inFlight: Set<string>;
  inline?: InlineDelivery;
  /** The stream's claims this cycle, when its items have positions (state/packs.ts). */
  claims?: ClaimWindow;
  /** Inline sends stop before this (ms since the epoch). */
  deadline: number;
  signal?: AbortSignal;
}

/** What a page added; the caller folds it into the stream's result once the page is done. */
export type PageCounts = Pick<
  StreamResult,
  'items' | 'newItems' | 'queued' | 'sent' | 'silenced' | 'baseline' | 'unrouted' | 'quarantined'
>;

/** Every count at zero: a page's before its work, and a stream's before its first page. */
export function zeroCounts(): PageCounts {
  return { items: 0, newItems: 0, queued: 0, sent: 0, silenced: 0, baseline: 0, unrouted: 0, quarantined: 0 };
}

function toAlert(spec: StreamSpec, item: EventItem | Credential): Alert {
  return spec.kind === 'event'
    ? { kind: 'event', key: (item as EventItem).metadata.uid, source: spec.id, item: item as EventItem }
    : { kind: 'credential', key: String((item as Credential).id), source: spec.id, item: item as Credential };
}

/** Routing decisions for a page's items, as the delivery records they call for. */
export function recordsFor(
  deps: PollDeps,
  spec: StreamSpec,
  page: StreamPage,
  walk: Walk,
  counts: PageCounts,
): NewDelivery[] {
  const now = new Date(deps.clock.now());
  const records: NewDelivery[] = [];
  const baselining = walk.baselining;
  for (const item of page.items) {
    if (!baselining && passedOver(walk, spec.itemTime(item))) {
      // Matched before what this walk alerts on: seen, without a record (poll/walk.ts).
      counts.baseline += 1;
      continue;
    }
    // An item too large for a record is cut to fit, its cuts named in `_trimmed`: it still alerts.
    const alert = deps.applyPasswordPolicy(toAlert(spec, fitItem(item)));
    const decision = deps.route(alert, now);
    if (decision.destinations.size === 0) counts.unrouted += 1;
    const status = baselining ? 'baseline' : decision.silenced ? 'silenced' : 'pending';
    const position = spec.feedTime ? itemPosition(spec.feedTime(item), alert.key) : undefined;
    for (const [destination, routes] of decision.destinations) {
      records.push({
        position,
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
  return records;
}

async function quarantine(deps: PollDeps, spec: StreamSpec, page: StreamPage): Promise<void> {
  await deps.quarantine.record(
    spec.id,
    page.invalid.map((bad) => ({
      key: bad.key,
      issues: issuesToText(bad.issues),
      raw: deps.maskRawItem(bad.raw),
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
}

/** Waits for every task, then fails with the first failure: nothing is left running behind a throw. */
async function settleAll(tasks: Promise<unknown>[]): Promise<void> {
  const outcomes = await Promise.allSettled(tasks);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Creates an exclusive stream's new records, sending webhook deliveries inline when allowed. */
async function createExclusive(
  deps: PollDeps,
  records: NewDelivery[],
  context: PageContext,
  startedBefore: string | undefined,
): Promise<DeliveryRecord[]> {
  const { absent } = await deps.deliveries.prepare(records, {
    exclusive: true,
    window: context.claims,
    startedBefore,
  });
  const inline = context.inline;
  const later: DeliveryRecord[] = [];
  const now = new Map<string, DeliveryRecord[]>();
  for (const record of absent) {
    if (inline && record.status === 'pending' && inline.accepts(record.destination)) {
      const list = now.get(record.destination) ?? [];
      list.push(record);
      now.set(record.destination, list);
    } else {
      later.push(record);
    }
  }
  const create = (batch: DeliveryRecord[]) => deps.deliveries.insert(batch);
  await settleAll([
    create(later),
    ...[...now].map(([destination, batch]) =>
      (inline as NonNullable<typeof inline>).deliver(destination, batch, create, {
        deadline: context.deadline,
        signal: context.signal,
      }),
    ),
  ]);
  return absent;
}

/** Handles one page: quarantine, then its new records (created, and sent inline where allowed). */
export async function processPage(
  deps: PollDeps,
  page: StreamPage,
  context: PageContext,
): Promise<PageCounts> {
  const { spec, lease } = context;
  const counts: PageCounts = { ...zeroCounts(), items: page.items.length, quarantined: page.invalid.length };
  // Claimed before the first await, so a later page in flight sees these ids as taken.
  const claimed: string[] = [];
  const records = recordsFor(deps, spec, page, context.walk, counts).filter((r) => {
    const id = deliveryId(r.destination, r.kind, r.key);
    if (context.inFlight.has(id)) return false;
    claimed.push(id);
    return true;
  });
  for (const id of claimed) context.inFlight.add(id);
  // In page order, before the first await: later pages check what this one may write.
  let top: string | undefined;
  for (const r of records)
    if (r.position !== undefined && (top === undefined || r.position > top)) top = r.position;
  const startedBefore = top !== undefined ? context.claims?.start(top) : undefined;
  let created: DeliveryRecord[];
  try {
    if (page.invalid.length) await quarantine(deps, spec, page);
    if (records.length === 0) return counts;
    const leaseSafe = lease.expiresAt - deps.clock.now() > LEASE_SAFE_MS;
    created =
      spec.exclusive && leaseSafe
        ? await createExclusive(deps, records, context, startedBefore)
        : (await deps.deliveries.create(records)).created;
  } finally {
    for (const id of claimed) context.inFlight.delete(id);
  }
  counts.newItems = new Set(created.map((r) => r.key)).size;
  for (const record of created) {
    if (record.status === 'pending') counts.queued += 1;
    else if (record.status === 'sent') counts.sent += 1;
    else if (record.status === 'silenced') counts.silenced += 1;
    else if (record.status === 'baseline') counts.baseline += 1;
  }
  return counts;
}
