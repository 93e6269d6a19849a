/**
 * What the poll modules share: the world a stream's poll takes (PollDeps), its budget, and what it
 * reports. Kept apart so cycle.ts, stream.ts and page.ts import these, never each other in a circle.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Alert } from '../model.ts';
import type { Decision } from '../rules/match.ts';
import type { SilenceSource } from '../rules/silences.ts';
import type { QuarantineStore } from '../state/quarantine.ts';
import type { DeliveryRecords } from '../state/records/index.ts';
import type { StreamStore } from '../state/streams.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';

/**
 * The identity step of one cycle (lib/identity/lookup.ts): a credential page's items with their
 * verdicts, before they are routed. Declared here so the poll modules never load lib/identity.
 */
export interface IdentityStep {
  verdicts(
    stream: { tenant?: { id: number; name: string }; exclusive: boolean },
    items: readonly (EventItem | Credential)[],
    options: {
      baselining: boolean;
      deadline: number;
      signal?: AbortSignal;
      /** Whether an item with its verdict would be sent: only those get an automatic response. */
      wouldSend?(item: Credential): boolean;
    },
  ): Promise<(EventItem | Credential)[]>;
  /** At the cycle's end: notes each provider asked (for `status`). */
  finish(): Promise<void>;
  /** After the cycle's delivery pass: takes the automatic responses it decided (`identity.auto`). */
  respond(): Promise<void>;
}

export interface PollDeps {
  streams: StreamStore;
  records: DeliveryRecords;
  quarantine: QuarantineStore;
  /** The routing rules (lib/rules/match.ts). */
  route(alert: Alert, now: Date): Decision;
  /**
   * The run-time silences: a cycle reads the active ones once, at its start, and routes with them
   * on top of `route` (rules/silences.ts withSilences).
   */
  silences?: SilenceSource;
  /**
   * Identity lookups of this run, when the config has `identity` (docs/identity.md): a cycle takes its
   * step from it.
   */
  identity?: { cycle(): IdentityStep };
  /** The cycle's identity step (cycle.ts sets it from `identity`). */
  identityCycle?: IdentityStep;
  /** The password policy, applied to every item before anything else sees it (lib/rules/passwords.ts). */
  applyPasswordPolicy<T extends Alert>(alert: T): T;
  /** The same policy for an item that broke the spec, whose shape is unknown (before quarantine). */
  maskRawItem(raw: unknown): unknown;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this run in leases. */
  owner: string;
  /** Failures already logged in this run (poll/failure.ts `once`): said once, not every cycle. */
  reported?: Set<string>;
  /** Test hook: called at each step boundary, so a test can stop the cycle there. */
  checkpoint?(step: PollStep, stream: string): void | Promise<void>;
  /** Pages written at once besides the one fetched (stream.ts PIPELINE_DEPTH; 0 turns the pipeline off). */
  pipelineDepth?: number;
}

export type PollStep = 'page-fetched' | 'records-written' | 'cursor-advanced';

export interface PollBudget {
  /** ms since the epoch: no upstream request or wait goes past it. */
  deadline: number;
  /** Stop starting pages this long before the deadline, to leave time to write and deliver. */
  reserveMs?: number;
  /** Skip a stream another run polled after this (ISO time): the cycle's start. */
  notPolledSince?: string;
  /**
   * The deadline is this stream's share of the cycle, shorter than the cycle's own: a stream cut
   * short by it was slow, and goes to the back of the order (a stream cut by the cycle's end was not).
   */
  ownShare?: boolean;
  /**
   * The last moment the cycle's delivery pass may start a send (default `deadline`): a send in
   * flight keeps its full timeout, so a Lambda gives the moment that leaves room for one.
   */
  sendsStartBy?: number;
  /**
   * The operator asked the run to stop (Ctrl-C): the budget ends now. Checked where the deadline
   * is, so the stop comes at the same safe points: no page or stream starts after it, pages in
   * flight are written and their cursor saved, and the delivery pass starts no send.
   */
  stop?: AbortSignal;
}

export type StreamStatus =
  | 'done'
  /** Not polled: the global-search quota is below `upstream.quotaReserve` (poll/quota.ts). */
  | 'paused'
  | 'budget'
  | 'skipped'
  | 'rate_limited'
  | 'lease_lost'
  | 'failed'
  | 'unauthorized';

/** What a page added; the stream folds it into its result once the page is done. */
export interface PageCounts {
  items: number;
  /** Items that got at least one new delivery record. */
  newItems: number;
  /** Records created as pending (to be sent). */
  queued: number;
  /** Records created already sent (delivered inline while polling). */
  sent: number;
  silenced: number;
  /** Records created as baseline, and items passed over as seen (poll/walk.ts). */
  baseline: number;
  unrouted: number;
  quarantined: number;
}

export interface StreamResult extends PageCounts {
  stream: string;
  /** The PollLagSeconds of this poll, when it saw items. */
  lagSeconds?: number;
  status: StreamStatus;
  pages: number;
  error?: { code: string; message: string };
  /**
   * The stream stopped because the shared governor had no turn for it before its deadline: when
   * the next turn is (ms since the epoch, on the run's clock). The cycle ends early only when that
   * is past its own deadline.
   */
  nextTurnAt?: number;
}

/** Every count at zero: a page's before its work, and a stream's before its first page. */
export function zeroCounts(): PageCounts {
  return { items: 0, newItems: 0, queued: 0, sent: 0, silenced: 0, baseline: 0, unrouted: 0, quarantined: 0 };
}
