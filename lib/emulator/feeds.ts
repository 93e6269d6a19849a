/**
 * The paging logic the emulator's feeds share: windows over an ordered list, opaque cursors, and
 * what the end of a feed looks like.
 */
import type { CursorCodec, CursorPayload } from './cursor.ts';

export class EmulatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function badRequest(message: string): EmulatorError {
  return new EmulatorError(400, 'BAD_REQUEST', message);
}

export interface FeedRequest {
  endpoint: string;
  tenantId: number;
  /** Fingerprint of everything in the request but `from` and `size`. */
  fingerprint: string;
  from: string | null | undefined;
  size: number;
  order: 'asc' | 'desc';
  endOfFeed: 'cursor' | 'null';
}

export interface FeedPage<T> {
  items: T[];
  next: string | null;
  /** Whether anything follows this page right now. */
  hasMore: boolean;
}

/** Reads and checks a cursor against the request it is sent with. */
export function startPosition(codec: CursorCodec, request: FeedRequest): number | undefined {
  if (request.from === undefined || request.from === null || request.from === '') return undefined;
  if (typeof request.from !== 'string') throw badRequest('from must be the opaque string of a previous next');
  const payload = codec.decode(request.from);
  if (!payload) throw badRequest('from is not a cursor this service issued (expired or altered)');
  if (payload.e !== request.endpoint || payload.t !== request.tenantId || payload.f !== request.fingerprint) {
    throw badRequest(
      'from belongs to a different request: reuse a cursor only with the same query, filters and order',
    );
  }
  return payload.p;
}

/**
 * Pages through `entries`, sorted ascending by `position`, keeping those `accept` takes, then
 * dropping those `postFilter` rejects (a filter applied after the window, so a page can come back
 * short or empty while the cursor still moves on, as the real service's can).
 */
export function pageFeed<E, T>(
  codec: CursorCodec,
  request: FeedRequest,
  entries: readonly E[],
  position: (entry: E) => number,
  accept: (entry: E) => boolean,
  render: (entry: E) => T,
  postFilter: (entry: E) => boolean = () => true,
): FeedPage<T> {
  const start = startPosition(codec, request);
  const window: E[] = [];
  let hasMore = false;
  const asc = request.order === 'asc';
  // Binary search for the first entry past the cursor, then walk.
  let i: number;
  if (asc) {
    let lo = 0;
    let hi = entries.length;
    if (start !== undefined) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (position(entries[mid] as E) <= start) lo = mid + 1;
        else hi = mid;
      }
    }
    i = lo;
  } else {
    let lo = 0;
    let hi = entries.length;
    if (start !== undefined) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (position(entries[mid] as E) < start) lo = mid + 1;
        else hi = mid;
      }
    }
    i = start === undefined ? entries.length - 1 : lo - 1;
  }
  for (; asc ? i < entries.length : i >= 0; asc ? i++ : i--) {
    const entry = entries[i] as E;
    if (!accept(entry)) continue;
    if (window.length === request.size) {
      hasMore = true;
      break;
    }
    window.push(entry);
  }
  const payload = (p: number): CursorPayload => ({
    e: request.endpoint,
    t: request.tenantId,
    f: request.fingerprint,
    p,
  });
  const last = window.at(-1);
  let next: string | null;
  if (request.endOfFeed === 'null' && !hasMore) next = null;
  else if (last !== undefined) next = codec.encode(payload(position(last)));
  else next = codec.encode(payload(start ?? (asc ? 0 : Number.MAX_SAFE_INTEGER)));
  return { items: window.filter(postFilter).map(render), next, hasMore };
}

/** What an endpoint handler returns; the app serialises it. */
export interface Answer {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}
export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function intParam(
  value: string | undefined,
  name: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
) {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value)) throw badRequest(`${name} must be an integer`);
  const n = Number(value);
  if (n < min || n > max) throw badRequest(`${name} must be from ${min} to ${max}`);
  return n;
}
