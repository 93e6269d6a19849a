/**
 * The console's one door to the API: the same origin, a bearer token, JSON both ways.
 *
 * The token lives in this tab's sessionStorage and nowhere else: never in a URL, a cookie or a log
 * line, and it is forgotten when the tab closes or when the API stops accepting it (a 401), in
 * which case the page asks for a token again and says why.
 */
import type { Scope, WhoAmI } from './types.ts';

const TOKEN_KEY = 'exposure-alerts-console-token';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  keep: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  forget: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** What the API answered when it did not do what was asked, in its own words (section 5's shape). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds, from `Retry-After` (a 429 or 503). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Told when the token stops working, with what to say on the sign-in form. */
let onSignedOut: (why: string) => void = () => undefined;
export function whenSignedOut(listener: (why: string) => void): void {
  onSignedOut = listener;
}

/**
 * An Idempotency-Key for one confirmed change, so a retried request is the same change. Made from
 * getRandomValues, which (unlike randomUUID) a page served over plain HTTP on a LAN address has.
 */
export function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export interface Answer<T> {
  status: number;
  body: T;
}

/** Sends one request; a 2xx gives its JSON, anything else throws an ApiFailure that says what happened. */
export async function call<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { body?: unknown; key?: string; token?: string } = {},
): Promise<Answer<T>> {
  const token = options.token ?? session.token();
  if (!token) {
    onSignedOut('Sign in with an API token to continue.');
    throw new ApiFailure(401, 'unauthorized', 'no API token in this tab');
  }
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.key) headers['Idempotency-Key'] = options.key;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch {
    throw new ApiFailure(
      0,
      'network',
      'The API could not be reached (network error). Check the connection and try again.',
    );
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  if (res.ok) return { status: res.status, body: body as T };
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : `http_${res.status}`;
  const message =
    typeof error?.message === 'string' ? error.message : `The API answered ${res.status} ${res.statusText}.`;
  const retry = Number(res.headers.get('Retry-After'));
  const failure = new ApiFailure(
    res.status,
    code,
    message,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
  // A token the API stopped accepting (expired, revoked, mistyped): forget it and ask again. The
  // sign-in check passes its own token, and says so itself.
  if (res.status === 401 && options.token === undefined) {
    session.forget();
    onSignedOut(
      'The API no longer accepts this token (it is wrong, expired or was removed). Enter a token again.',
    );
  }
  throw failure;
}

export async function get<T>(path: string): Promise<T> {
  return (await call<T>('GET', path)).body;
}

/** Who a token belongs to and its scopes (`GET /whoami`), without keeping it. */
export async function identify(token: string): Promise<WhoAmI> {
  return (await call<WhoAmI>('GET', '/whoami', { token })).body;
}

/** A query string of the values given (empty ones left out). */
export function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v) params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** A path segment: ids hold `/` and `:`, and are one percent-encoded segment each (section 5). */
export const segment = (id: string): string => encodeURIComponent(id);

/** What a failure means to the person who clicked, in words. */
export function explain(error: unknown, need?: Scope): string {
  if (!(error instanceof ApiFailure)) return `Something failed in this page: ${String(error)}`;
  if (error.status === 403)
    return `Not allowed: ${error.message}${need ? ` (this needs the ${need} scope)` : ''}.`;
  if (error.status === 429 || error.status === 503)
    return `${error.message}${error.retryAfter ? ` Try again in ${error.retryAfter} s.` : ''}`;
  if (error.status === 404) return `Not found: ${error.message}`;
  return error.message;
}
