/**
 * One page of a stream, from items to delivery records: the password policy, the routing decision
 * for each item, quarantine for items that broke the spec, then the records (state/records, which
 * dedupes: see its module comment). An exclusive stream whose lease has comfortably long to run
 * has its new webhook deliveries handed back and sends them inline (deliver/inline.ts).
 */
import type { InlineDelivery } from '../deliver/inline.ts';
import { countForStream } from '../metrics.ts';
import type { Alert } from '../model.ts';
import { silencedNote } from '../rules/silences.ts';
import { fitItem } from '../state/limits.ts';
import {
  type ClaimWindow,
  type DeliveryRecord,
  deliveryId,
  itemPosition,
  type NewDelivery,
} from '../state/records/index.ts';
import type { StreamLease } from '../state/streams.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';
import { issuesToText } from '../upstream/validate.ts';
import { itemKey } from './ids.ts';
import type { StreamPage, StreamSpec } from './streams.ts';
import { type PageCounts, type PollDeps, zeroCounts } from './types.ts';
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
  /** The stream's claims this cycle, when its items have positions (state/records/packs.ts). */
  claims?: ClaimWindow;
  /** Inline sends stop before this (ms since the epoch). */
  deadline: number;
  signal?: AbortSignal;
}

function toAlert(spec: StreamSpec, item: EventItem | Credential): Alert {
  const tenantOf = spec.tenant ? { tenant: spec.tenant } : {};
  return spec.kind === 'event'
    ? {
        kind: 'event',
        key: itemKey((item as EventItem).metadata.uid, spec.tenant?.id),
        source: spec.id,
        ...tenantOf,
        item: item as EventItem,
      }
    : {
        kind: 'credential',
        key: itemKey(String((item as Credential).id), spec.tenant?.id),
        source: spec.id,
        ...tenantOf,
        item: item as Credential,
      };
}

/**
 * Whether `item` would be sent if routed now: routed somewhere and not silenced (the identity
 * step asks, to take automatic responses only for alerts that go out).
 */
export function wouldSend(deps: PollDeps, spec: StreamSpec, item: EventItem | Credential): boolean {
  const decision = deps.route(deps.applyPasswordPolicy(toAlert(spec, item)), new Date(deps.clock.now()));
  return decision.destinations.size > 0 && !decision.silenced;
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
        ...(status === 'silenced' && decision.silenced ? { note: silencedNote(decision.silenced) } : {}),
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
  countForStream(deps.metrics, 'QuarantinedItems', page.invalid.length, spec.id);
}

/** Waits for every task, then fails with the first failure: nothing is left running behind a throw. */
async function settleAll(tasks: Promise<unknown>[]): Promise<void> {
  const outcomes = await Promise.allSettled(tasks);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Sends what recordPage handed back for inline delivery, destination by destination, and records it. */
async function sendInline(
  deps: PollDeps,
  inline: InlineDelivery,
  records: DeliveryRecord[],
  context: PageContext,
): Promise<void> {
  const byDestination = new Map<string, DeliveryRecord[]>();
  for (const record of records) {
    const list = byDestination.get(record.destination) ?? [];
    list.push(record);
    byDestination.set(record.destination, list);
  }
  const insert = (batch: DeliveryRecord[]) => deps.records.insert(batch);
  await settleAll(
    [...byDestination].map(([destination, batch]) =>
      inline.deliver(destination, batch, insert, { deadline: context.deadline, signal: context.signal }),
    ),
  );
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
  // Batch creation (and inline sending) leans on the lease: only while it has comfortably long left.
  const exclusive = spec.exclusive && lease.expiresAt - deps.clock.now() > LEASE_SAFE_MS;
  const inline = exclusive ? context.inline : undefined;
  // Called before the first await: the page takes its place among the stream's pages now.
  const recording = deps.records.recordPage(records, {
    exclusive,
    claims: context.claims,
    ...(inline ? { inline: (record: DeliveryRecord) => inline.accepts(record.destination) } : {}),
  });
  recording.catch(() => {}); // awaited below, after the quarantine
  let created: DeliveryRecord[];
  try {
    if (page.invalid.length) await quarantine(deps, spec, page);
    const recorded = await recording;
    if (inline && recorded.sendInline.length) await sendInline(deps, inline, recorded.sendInline, context);
    created = recorded.created;
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
