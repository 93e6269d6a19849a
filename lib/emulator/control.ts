/**
 * The emulator's knobs for tests and demos: added latency, injected faults, short-lived tokens,
 * the end-of-feed behaviour, the rate limiter (limits.ts) and its stats, and a request log that
 * tests read to prove what was (not) called.
 */
import { RateLimiter, type RateLimitOption, type RateStats, type Tier } from './limits.ts';

export type EndpointName =
  | 'generateToken'
  | 'tokenTest'
  | 'identitiesByAccounts'
  | 'identifierGroupEvents'
  | 'tenantEvents'
  | 'identitiesByPassword'
  | 'credentialsV2'
  | 'identitiesByKeyword'
  | 'identitiesByDomain'
  | 'globalCredentials'
  | 'assetToggle'
  | 'legacySearch'
  | 'eventActions';

export type FaultAction =
  /** Answer with this status (and `Retry-After` when given) instead of the real answer. */
  | { status: number; retryAfter?: number | string; body?: unknown }
  /** Wait this long, then answer normally. */
  | { delayMs: number }
  /** Never answer; the client has to time out. */
  | { hang: true }
  /** 200 with a body that is not JSON. */
  | { malformedJson: true }
  /** Break one item of the page (the first, or `index`) so it no longer fits the schema. */
  | { badItem: true; index?: number };

export type Fault = FaultAction & {
  /** Which endpoint it hits; every endpoint when absent. */
  endpoint?: EndpointName;
  /** Only requests whose path contains this (one identifier group: `/identifier_groups/12/`). */
  path?: string;
  /** How many requests it hits; default 1. */
  times?: number;
};

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  endpoint: EndpointName | 'unknown';
  tenantId?: number;
  status: number;
  /** The parsed JSON body or the query, for tests that check what was asked. */
  input?: unknown;
  fault?: string;
  /** The tiers whose rate refused it (a 429 of the limiter, not an injected one). */
  rateLimited?: Tier[];
}

export class EmulatorControl {
  latencyMs = 0;
  /** Lifetime of tokens from `POST /tokens/generate`. */
  tokenTtlMs = 3_600_000;
  /**
   * What a feed says when nothing is left: `cursor` returns a cursor at the current position (the
   * same `next` again when nothing new came), `null` returns `next: null`.
   */
  endOfFeed: 'cursor' | 'null' = 'cursor';
  readonly requests: RequestLogEntry[] = [];
  maxLogEntries = 20_000;
  private faults: Fault[] = [];
  /** Per-organization rate limits; unlimited unless asked for (EmulatorOptions `rateLimits`). */
  readonly rate: RateLimiter;

  constructor(options: { rateLimits?: RateLimitOption; now?: () => number } = {}) {
    this.rate = new RateLimiter(options.rateLimits, options.now ?? Date.now);
  }

  /** Per organization and tier: arrivals, admitted, 429s, and the most in any sliding second. */
  rateStats(): RateStats {
    return this.rate.stats();
  }

  /** Forgets the rate stats and the windows behind them (limits.ts `reset`). */
  resetRateStats(): void {
    this.rate.reset();
  }

  addFault(fault: Fault): void {
    this.faults.push({ ...fault, times: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  pendingFaults(): readonly Fault[] {
    return this.faults;
  }

  /** The next fault that applies to `endpoint` (and `path`), consuming one of its uses. */
  takeFault(endpoint: EndpointName, path = ''): Fault | undefined {
    const index = this.faults.findIndex(
      (f) =>
        (f.endpoint === undefined || f.endpoint === endpoint) &&
        (f.path === undefined || path.includes(f.path)),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index] as Fault;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  log(entry: RequestLogEntry): void {
    this.requests.push(entry);
    if (this.requests.length > this.maxLogEntries)
      this.requests.splice(0, this.requests.length - this.maxLogEntries);
  }

  clearLog(): void {
    this.requests.length = 0;
  }

  /** Requests that reached an endpoint (the admin routes are not counted). */
  calls(endpoint?: EndpointName): RequestLogEntry[] {
    return this.requests.filter((r) => endpoint === undefined || r.endpoint === endpoint);
  }
}
