/**
 * The types the delivery pass (pass.ts) and inline delivery (inline.ts) share: what delivery is
 * given, and what it reports. Here rather than in either of the two, so neither imports the other.
 */

import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { DeliveryAlert } from '../model.ts';
import type { TenantRef } from '../poll/ids.ts';
import type { Notice, Rendered, RenderOptions } from '../render/types.ts';
import type { SilenceSource } from '../rules/silences.ts';
import type { DestinationStateStore } from '../state/destinations.ts';
import type { DeliveryQueue } from '../state/records/queue.ts';
import type { ThreadStore } from '../state/threads.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { HttpPost } from './post.ts';
import type { Payload } from './senders.ts';

export interface DeliverDeps {
  /** The pending deliveries and their outcomes. */
  deliveries: DeliveryQueue;
  destinationState: DestinationStateStore;
  destinations: Map<string, ResolvedDestination>;
  /** Renders the due alerts of one destination into messages (lib/render). */
  render(destination: ResolvedDestination, alerts: DeliveryAlert[], now: Date): Promise<Rendered<Payload>[]>;
  renderNotice(destination: ResolvedDestination, notice: Notice, now: Date): Promise<Payload>;
  /** What the renderers are told for `destination` (follow-ups render with it: follow-up.ts). */
  renderOptions(destination: ResolvedDestination, now: Date): RenderOptions;
  /** Destinations that hear about a destination refusing for good. */
  opsDestinations: string[];
  /** The POST every send makes (post.ts). */
  post: HttpPost;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  owner: string;
  /** Where the console destination writes. */
  write(text: string): void;
  random?: () => number;
  sendTimeoutMs?: number;
  /** Test hook: called after a message was accepted and before it is recorded as sent. */
  checkpoint?(step: 'accepted', deliveryIds: string[]): void | Promise<void>;
  /** The `tenants` entry a record's stream belongs to, with its name (none for the top level). */
  tenantOf?: (source: string) => TenantRef | undefined;
  /** The silences (config and run-time), read once at the start of each pass (hold.ts). */
  silences?: SilenceSource;
  /** Digests posted to a Slack app as threads, while they are being posted (thread.ts). */
  threads: ThreadStore;
  /**
   * Finishes the actions on events a crash left open, so their follow-ups go in this pass
   * (actions/events.ts), and the account actions that are due; absent where nothing acts. No wait
   * for a provider's rate ends after `deadline` (the pass's).
   */
  finishActions?(deadline?: number): Promise<number>;
  /** Test hook: after Slack accepted a message of a thread, before it is written down. */
  threadCheckpoint?(step: 'parent-posted' | 'reply-posted'): void | Promise<void>;
}

export interface DeliveryPassOptions {
  /**
   * ms since the epoch: the last moment a send may start. A send started by then keeps its full
   * timeout, so the pass may end up to one send timeout (plus bookkeeping) after it.
   */
  deadline: number;
  /**
   * The operator asked the run to stop (Ctrl-C): the deadline has come. A send in flight keeps its
   * timeout and is recorded; no other starts.
   */
  stop?: AbortSignal;
  /** Only these destinations (default all). */
  only?: string[];
  /** Due records read and rendered together (DEFAULT_CHUNK_SIZE); a digest covers at most one chunk. */
  chunkSize?: number;
}

export interface DestinationResult {
  destination: string;
  /**
   * `budget`: stopped at the deadline with deliveries left; `paused`: rate limited (now or by an
   * earlier run), nothing more is sent to it before `pausedUntil`.
   */
  status: 'done' | 'skipped' | 'budget' | 'paused' | 'lease_lost' | 'failed';
  messages: number;
  sent: number;
  retrying: number;
  dead: number;
  /** Due deliveries a silence held back (recorded silenced, not sent). */
  silenced?: number;
  /** Due deliveries this pass left for the next (known when it stopped early). */
  left?: number;
  /** There may be more left than `left`: the pass had not read them all. */
  leftMore?: boolean;
  pausedUntil?: string;
  error?: string;
  /** Delivery passes this result adds up, when more than one (`npm start`'s workers share a few). */
  passes?: number;
}

export interface DeliverySummary {
  destinations: DestinationResult[];
  sent: number;
  retrying: number;
  dead: number;
  /** Due deliveries left for the next pass by destinations that stopped early. */
  left: number;
}
