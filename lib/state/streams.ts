/**
 * A stream's saved position: the last `next`, the fingerprint of the request it belongs to, the
 * walk's bounds (poll/walk.ts), the newest item it handled, when it was saved, and counters. It lives on the same
 * item as the stream's lease, so taking the lease reads it, and saving it is fenced by it.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../clock.ts';
import { SKEW_SLACK_MS } from './clock-sync.ts';
import { batchGet, type TableIo } from './io.ts';
import { type Lease, LeaseStore } from './lease.ts';
import { marshall, unmarshall } from './marshall.ts';

export interface StreamCursor {
  next: string;
  /** Fingerprint of the request (filters, order, lookback setting) this cursor belongs to. */
  fingerprint: string;
  /** The time bound (`gte`) the request was first made with; resent unchanged with the cursor. */
  since: string;
  savedAt: string;
}

export interface StreamCounters {
  pages: number;
  items: number;
  newItems: number;
  quarantined: number;
}

export interface StreamState {
  cursor?: StreamCursor;
  /** The fingerprint and bound of the current walk, even before a first `next` was saved. */
  fingerprint?: string;
  since?: string;
  counters: StreamCounters;
  /**
   * The stream's position: the newest `matched_at` (events) or `imported_at` (credentials) it
   * handled. Poll lag counts from it, and a restarted walk starts an hour before it (poll/walk.ts).
   */
  newestItemAt?: string;
  /** Events: while catching up, items matched before this are treated as seen (poll/walk.ts). */
  alertFrom?: string;
  /** The walk started without a cursor and has not reached the end of the feed yet. */
  catchingUp: boolean;
  /** A first run with `firstRun: "baseline"` is still walking the lookback window. */
  baselining: boolean;
}

export interface StreamLease extends Lease {
  state: StreamState;
}

export function streamKey(streamId: string) {
  return { pk: `stream#${streamId}`, sk: 'state' };
}

function readState(item: Record<string, unknown>): StreamState {
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const next = str(item.cursorNext);
  const fingerprint = str(item.fingerprint);
  const since = str(item.since);
  return {
    ...(next && fingerprint && since
      ? { cursor: { next, fingerprint, since, savedAt: str(item.savedAt) ?? '' } }
      : {}),
    ...(fingerprint ? { fingerprint } : {}),
    ...(since ? { since } : {}),
    counters: {
      pages: num(item.pages),
      items: num(item.items),
      newItems: num(item.newItems),
      quarantined: num(item.quarantined),
    },
    ...(str(item.newestItemAt) ? { newestItemAt: str(item.newestItemAt) } : {}),
    ...(str(item.alertFrom) ? { alertFrom: str(item.alertFrom) } : {}),
    catchingUp: item.catchingUp === true,
    baselining: item.baselining === true,
  };
}

export interface CursorAdvance {
  next?: string;
  fingerprint: string;
  since: string;
  counters?: Partial<StreamCounters>;
  newestItemAt?: string;
  /** Drop the saved cursor (the upstream refused it). */
  clearCursor?: boolean;
  alertFrom?: string;
  catchingUp?: boolean;
  baselining?: boolean;
}

export class StreamStore {
  readonly leases: LeaseStore;

  private readonly io: TableIo;

  constructor(
    client: DynamoDBClient,
    tableName: string,
    private readonly clock: Clock,
    leaseTtlMs?: number,
  ) {
    this.leases = new LeaseStore(client, tableName, clock, leaseTtlMs);
    this.io = { client, tableName, clock };
  }

  /**
   * Takes the stream's lease and reads its state; undefined when another run holds it, or, with
   * `notPolledSince`, when another run polled it since then (runs started together share a sweep:
   * a stream another has just polled is not polled again). A `lastPolledAt` in the future beyond
   * SKEW_SLACK_MS was written on a wrong clock: it does not stop this run.
   */
  async acquire(streamId: string, owner: string, notPolledSince?: string): Promise<StreamLease | undefined> {
    const { pk, sk } = streamKey(streamId);
    const lease = await this.leases.acquire(
      pk,
      sk,
      owner,
      notPolledSince
        ? {
            condition:
              'attribute_not_exists(lastPolledAt) OR lastPolledAt <= :since OR lastPolledAt > :future',
            values: {
              ':since': notPolledSince,
              ':future': new Date(this.clock.now() + SKEW_SLACK_MS).toISOString(),
            },
          }
        : undefined,
    );
    return lease ? { ...lease, state: readState(lease.item) } : undefined;
  }

  private toUpdate(advance: CursorAdvance) {
    return {
      set: {
        ...(advance.next && !advance.clearCursor ? { cursorNext: advance.next } : {}),
        fingerprint: advance.fingerprint,
        since: advance.since,
        savedAt: new Date(this.clock.now()).toISOString(),
        newestItemAt: advance.newestItemAt,
        alertFrom: advance.alertFrom,
        catchingUp: advance.catchingUp,
        baselining: advance.baselining,
      },
      add: {
        pages: advance.counters?.pages ?? 0,
        items: advance.counters?.items ?? 0,
        newItems: advance.counters?.newItems ?? 0,
        quarantined: advance.counters?.quarantined ?? 0,
      },
      remove: advance.clearCursor ? ['cursorNext'] : [],
    };
  }

  /** Saves the position, fenced by the lease and renewing it. Throws LeaseLostError when it is gone. */
  advance(lease: StreamLease, advance: CursorAdvance): Promise<void> {
    return this.leases.update(lease, this.toUpdate(advance));
  }

  /**
   * Frees the lease, noting in the same request how the poll went and, when it was `tried`, that
   * it was polled now: cycles visit the least recently polled first, so a stream that was tried
   * goes to the back of the order whether or not it read a page (one whose request outlasts its
   * share cannot keep its place at the front and starve the others). A stream the shared rate had
   * no turn for sent nothing: it keeps its place, and comes first next time.
   * `lagSeconds`, when the poll saw items, is kept for `status`.
   */
  release(lease: StreamLease, lastResult: string, tried = true, lagSeconds?: number): Promise<boolean> {
    return this.leases.release(lease, {
      set: {
        lastResult,
        ...(tried ? { lastPolledAt: new Date(this.clock.now()).toISOString() } : {}),
        // The PollLagSeconds value of this poll, for `status` (state/status.ts).
        lagSeconds,
      },
    });
  }

  /** When each stream was last polled and how it went (one BatchGet per 100 streams, no lease). */
  async lastPolled(streamIds: readonly string[]): Promise<Map<string, { at?: string; result?: string }>> {
    const found = new Map<string, { at?: string; result?: string }>();
    const items = await batchGet(
      this.io,
      streamIds.map((id) => marshall(streamKey(id))),
      { projection: 'pk, lastPolledAt, lastResult' },
    );
    for (const stored of items) {
      const { pk, lastPolledAt, lastResult } = unmarshall(stored);
      found.set(String(pk).slice('stream#'.length), {
        ...(typeof lastPolledAt === 'string' ? { at: lastPolledAt } : {}),
        ...(typeof lastResult === 'string' ? { result: lastResult } : {}),
      });
    }
    return found;
  }
}
