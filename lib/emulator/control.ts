/**
 * The emulator's knobs for tests and demos: added latency, injected faults, short-lived tokens,
 * the end-of-feed behaviour, and a request log that tests read to prove what was (not) called.
 */

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
  | 'legacySearch';

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

  addFault(fault: Fault): void {
    this.faults.push({ ...fault, times: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  pendingFaults(): readonly Fault[] {
    return this.faults;
  }

  /** The next fault that applies to `endpoint`, consuming one of its uses. */
  takeFault(endpoint: EndpointName): Fault | undefined {
    const index = this.faults.findIndex((f) => f.endpoint === undefined || f.endpoint === endpoint);
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
