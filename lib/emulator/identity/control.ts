/**
 * The identity stand-in's knobs shared by both providers: added latency, injected faults (a status
 * for the next N requests, a delay, or no answer at all), the log of every request received, and
 * the log of the actions taken on accounts.
 *
 * The request log keeps each request whole (headers and body included) on purpose: a test reads it
 * to prove that no password or hash ever reached a provider and that a client secret was only ever
 * in the token request. It lives in the test or the local emulator's memory, and is never printed.
 */
import type { Context } from 'hono';

export type IdentityProvider = 'entra' | 'okta';

/** Every route of the stand-in, by name; `unknown` is a request no route took. */
export type IdentityEndpoint =
  | 'entraToken'
  | 'graphUser'
  | 'graphUsers'
  | 'graphRevokeSessions'
  | 'graphUpdateUser'
  | 'graphConfirmCompromised'
  | 'oktaUser'
  | 'oktaExpirePassword'
  | 'oktaClearSessions'
  | 'oktaSuspend'
  | 'oktaUnsuspend'
  | 'oktaRisk'
  | 'unknown';

export interface IdentityFault {
  /** Which provider it hits; both when absent. */
  provider?: IdentityProvider;
  /** Which route it hits; every route when absent. */
  endpoint?: IdentityEndpoint;
  /** Only requests whose path contains this. */
  path?: string;
  /** How many requests it hits; default 1. */
  times?: number;
  /** Answer with this status, in the provider's own error shape unless `body` is given. */
  status?: number;
  /** `Retry-After` to send with the status. */
  retryAfter?: number | string;
  body?: unknown;
  /** Answer with this text as it is (a body that is not JSON), with `status` (default 200). */
  raw?: string;
  /** Never answer: the client has to give up (the stand-in's close releases it). */
  hang?: true;
  /** Wait this long first, then answer (with `status`, or normally). */
  delayMs?: number;
}

export interface IdentityRequest {
  at: string;
  provider: IdentityProvider;
  endpoint: IdentityEndpoint;
  method: string;
  path: string;
  query: Record<string, string>;
  /** Every header as received, names in lower case. */
  headers: Record<string, string>;
  /** The body as text ('' for none). */
  body: string;
  status: number;
  fault?: string;
}

/** What was done to an account, in the order done: a test's proof that an action landed once. */
export interface IdentityAction {
  at: string;
  provider: IdentityProvider;
  action:
    | 'revokeSessions'
    | 'requirePasswordChange'
    | 'disable'
    | 'enable'
    | 'confirmCompromised'
    | 'setRisk';
  userId: string;
  login: string;
}

/**
 * A refusal, thrown by a route and answered in its provider's error shape. Without a `code`, the
 * provider's usual code for the status is used (an injected fault, an unexpected failure).
 */
export class ProviderError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** How a provider answers what the shared code decides: its error shape, its own refusals, its headers. */
export interface ProviderFace {
  provider: IdentityProvider;
  /** The provider's error answer. */
  errorAnswer(c: Context, error: ProviderError): Response;
  /** A refusal of the provider's own before anything else (Okta's rate limit spent); counts the request. */
  admit?(c: Context): Response | undefined;
  /** Headers every answer carries (Okta's `X-Rate-Limit-*`). */
  headers?(): Record<string, string>;
}

export type Handler = (c: Context, body: string) => Response | Promise<Response>;

export class IdentityControl {
  /** Added to every request before it is answered. */
  latencyMs = 0;
  /**
   * A provider's most requests in any second (its token requests aside): one more is a 429 with
   * `Retry-After: 1`, so a test or the bench proves the deployment kept to a lane's rate.
   */
  ceiling: Partial<Record<IdentityProvider, number>> = {};
  private readonly arrivals: Record<IdentityProvider, number[]> = { entra: [], okta: [] };
  readonly requests: IdentityRequest[] = [];
  readonly actions: IdentityAction[] = [];
  maxLogEntries = 20_000;
  private faults: IdentityFault[] = [];
  private readonly hung = new Set<() => void>();

  constructor(readonly now: () => number = Date.now) {}

  addFault(fault: IdentityFault): void {
    if (fault.status === undefined && !fault.hang && fault.delayMs === undefined && fault.raw === undefined)
      throw new RangeError('a fault needs a status, raw, hang: true or delayMs');
    this.faults.push({ ...fault, times: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  pendingFaults(): readonly IdentityFault[] {
    return this.faults;
  }

  clearLog(): void {
    this.requests.length = 0;
    this.actions.length = 0;
  }

  /** Requests that reached a route, of one provider or endpoint when named. */
  calls(filter: { provider?: IdentityProvider; endpoint?: IdentityEndpoint } = {}): IdentityRequest[] {
    return this.requests.filter(
      (r) =>
        (filter.provider === undefined || r.provider === filter.provider) &&
        (filter.endpoint === undefined || r.endpoint === filter.endpoint),
    );
  }

  /** Answers every hanging request (with 504), so a server can close. */
  releaseHangs(): void {
    for (const release of this.hung) release();
    this.hung.clear();
  }

  recordAction(action: Omit<IdentityAction, 'at'>): void {
    this.actions.push({ at: new Date(this.now()).toISOString(), ...action });
  }

  /** Wraps a route: latency, the provider's own refusal, faults, the handler, its headers, the log. */
  endpoint(face: ProviderFace, name: IdentityEndpoint, handler: Handler) {
    return async (c: Context): Promise<Response> => {
      const method = c.req.method;
      const body = method === 'GET' || method === 'HEAD' ? '' : await c.req.text().catch(() => '');
      let response: Response;
      let faultName: string | undefined;
      try {
        if (this.latencyMs > 0) await sleep(this.latencyMs);
        const refused = this.overCeiling(face, name, c) ?? face.admit?.(c);
        const fault = refused ? undefined : this.takeFault(face.provider, name, c.req.path);
        if (fault) faultName = JSON.stringify(fault);
        if (refused) response = refused;
        else if (fault?.hang) response = await this.hang(c, face);
        else {
          if (fault?.delayMs) await sleep(fault.delayMs);
          response =
            fault?.raw !== undefined
              ? c.body(fault.raw, (fault.status ?? 200) as 200, retryHeader(fault.retryAfter))
              : fault?.status !== undefined
                ? fault.body !== undefined
                  ? c.json(fault.body as object, fault.status as 400, retryHeader(fault.retryAfter))
                  : face.errorAnswer(
                      c,
                      new ProviderError(
                        fault.status,
                        undefined,
                        `injected ${fault.status}`,
                        retryHeader(fault.retryAfter),
                      ),
                    )
                : await handler(c, body);
        }
      } catch (error) {
        response = face.errorAnswer(
          c,
          error instanceof ProviderError
            ? error
            : new ProviderError(500, undefined, (error as Error).message),
        );
      }
      for (const [key, value] of Object.entries(face.headers?.() ?? {})) response.headers.set(key, value);
      this.log({
        at: new Date(this.now()).toISOString(),
        provider: face.provider,
        endpoint: name,
        method,
        path: c.req.path,
        query: Object.fromEntries(new URL(c.req.url).searchParams),
        headers: Object.fromEntries(c.req.raw.headers),
        body,
        status: response.status,
        ...(faultName ? { fault: faultName } : {}),
      });
      return response;
    };
  }

  /** A 429 for a request over the provider's `ceiling` in the last second; undefined within it. */
  private overCeiling(face: ProviderFace, name: IdentityEndpoint, c: Context): Response | undefined {
    const most = this.ceiling[face.provider];
    if (most === undefined || name === 'entraToken') return undefined;
    const now = this.now();
    const times = this.arrivals[face.provider];
    while (times.length && (times[0] as number) <= now - 1000) times.shift();
    times.push(now);
    if (times.length <= most) return undefined;
    return face.errorAnswer(c, new ProviderError(429, undefined, 'over the ceiling', retryHeader(1)));
  }

  private log(entry: IdentityRequest): void {
    this.requests.push(entry);
    if (this.requests.length > this.maxLogEntries)
      this.requests.splice(0, this.requests.length - this.maxLogEntries);
  }

  private takeFault(provider: IdentityProvider, endpoint: IdentityEndpoint, path: string) {
    const index = this.faults.findIndex(
      (f) =>
        (f.provider === undefined || f.provider === provider) &&
        (f.endpoint === undefined || f.endpoint === endpoint) &&
        (f.path === undefined || path.includes(f.path)),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index] as IdentityFault;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /** Waits until the client gives up or the stand-in releases it; then a 504 nobody may read. */
  private async hang(c: Context, face: ProviderFace): Promise<Response> {
    await new Promise<void>((resolve) => {
      const release = () => {
        this.hung.delete(release);
        resolve();
      };
      this.hung.add(release);
      const signal = c.req.raw.signal;
      if (signal?.aborted) release();
      signal?.addEventListener('abort', release, { once: true });
    });
    return face.errorAnswer(c, new ProviderError(504, undefined, 'the stand-in was told not to answer'));
  }
}

export function retryHeader(retryAfter: number | string | undefined): Record<string, string> {
  return retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
