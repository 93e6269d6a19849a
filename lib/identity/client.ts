/**
 * What a provider client is (entra.ts, okta.ts): it looks one login up and says what came of it,
 * in the three ways the lookup step (lookup.ts) treats differently, and acts on an account. Only
 * the login travels: no password, no hash, no sign-in, ever. What both clients share lives here:
 * `send`, each request in its turn of the provider's lane (lanes.ts) with the lane paused after a
 * refusal for rate, and how an answer is read (a refusal, a failure, one it cannot read).
 */
import { originOf, waitingFor } from '../waits.ts';
import type { Answer } from './verdict.ts';
import type { AccountAction, ProviderType } from './words.ts';

export type LookupResult =
  /** The provider answered: the account, or that there is none. */
  | { answer: Extract<Answer, { found: boolean }> }
  /** The provider refuses our credentials or permissions: reported once, an alarm; `unknown` meanwhile. */
  | { refused: string }
  /**
   * Anything else (a timeout, a 5xx, a 429, an answer it cannot read, no turn of the provider's
   * rate in time): `unknown` for 5 minutes. `retryAt` is when the provider may be asked again.
   */
  | { failed: string; retryAt?: number };

export interface LookupContext {
  fetch: typeof fetch;
  /** ms since the epoch (real time: rate resets are the provider's clock). */
  now(): number;
  /** Ends the lookup or action whatever it is waiting for: the cycle's lookup time, the run's stop. */
  signal: AbortSignal;
  /**
   * No turn of the provider's rate is waited for past this (ms since the epoch): a lookup fails
   * then and an action is `rateLimited`, sending nothing. Default: an action waits ACT_TURN_MS.
   */
  deadline?: number;
  /**
   * How long the provider may take to answer, counted only while a request is out (a lookup's 3
   * seconds: the waits for turns count toward the cycle's time, not toward these). None: `signal`.
   */
  answerMs?: number;
}

/** One lane of a provider's rate, shared by every run of the deployment (lanes.ts). */
export interface Lane {
  /**
   * Waits for this run's turn to send one request. Undefined when it came; otherwise none comes
   * before `deadline` (ms since the epoch), and the answer is when one may (nothing may be sent).
   */
  take(options: { deadline?: number; signal?: AbortSignal }): Promise<number | undefined>;
  /** The provider's rate is spent until `until` (ms since the epoch): no run's turn comes before. */
  pause(until: number): Promise<void>;
}

/** A provider's lanes: its directory's (every request but one kind), Identity Protection's (Entra). */
export interface ProviderLanes {
  directory: Lane;
  protection?: Lane;
}

/** How long an action waits for its turn when its caller set no deadline. */
export const ACT_TURN_MS = 5_000;

/** A request sent, its answer read; or no turn of the lane before the deadline (nothing sent). */
export type Sent = { res: Response; text: string } | { noTurn: number };

/**
 * One request of a lookup or an action, in its turn of `lane` (none: sent at once), answered
 * within what is left of `ctx.answerMs` (`spent` carries what the lookup's earlier requests took).
 * A 429, or `X-Rate-Limit-Remaining: 0` (Okta), pauses the lane for every run until `resumeAt`
 * (the time the provider named), else RATE_PAUSE_MS.
 */
export async function send(
  ctx: LookupContext,
  lane: Lane | undefined,
  url: string,
  init: RequestInit,
  resumeAt: (headers: Headers, now: number) => number | undefined,
  spent: { ms: number } = { ms: 0 },
): Promise<Sent> {
  const retryAt = await lane?.take({ deadline: ctx.deadline ?? ctx.now() + ACT_TURN_MS, signal: ctx.signal });
  if (retryAt !== undefined) return { noTurn: retryAt };
  const started = ctx.now();
  const signal =
    ctx.answerMs === undefined
      ? ctx.signal
      : AbortSignal.any([ctx.signal, AbortSignal.timeout(Math.max(1, Math.floor(ctx.answerMs - spent.ms)))]);
  try {
    const answer = async () => {
      const res = await ctx.fetch(url, { ...init, signal });
      return { res, text: await res.text() };
    };
    const { res, text } = await waitingFor(`the identity provider at ${originOf(url)}`, answer());
    if (lane && (res.status === 429 || res.headers.get('x-rate-limit-remaining') === '0')) {
      const now = ctx.now();
      await lane.pause(resumeAt(res.headers, now) ?? now + RATE_PAUSE_MS);
    }
    return { res, text };
  } finally {
    spent.ms += ctx.now() - started;
  }
}

/** What came of no turn of a provider's rate before the caller's deadline: nothing was sent. */
export const noTurnText = (label: string) => `${label}: no turn of its rate in time (nothing sent)`;

/** What came of an action on an account. */
export type ActResult =
  | { ok: true }
  /** The provider refused for lack of a permission, a role or a licence (named): nothing changed. */
  | { refused: string }
  /** The provider answered that it was not done (a 4xx, a 500). */
  | { failed: string }
  /**
   * The provider refused for rate (a 429, or its lane paused past the caller's time): it did
   * nothing, so the same call may be made again at `retryAt` (section 12: not a failure).
   */
  | { rateLimited: string; retryAt: number }
  /** No answer (a timeout, a dropped connection, a 502, 503 or 504): it may have happened. */
  | { noAnswer: string };

/** The account an action is taken on: its id in the provider, and its login. */
export interface AccountRef {
  id: string;
  login: string;
}

export interface ProviderClient {
  type: ProviderType;
  /** The provider's name in the config. */
  name: string;
  /** Logins under these domains (or subdomains) are looked up here. */
  domains: readonly string[];
  lookup(login: string, ctx: LookupContext): Promise<LookupResult>;
  /** Takes `action` on the account; `reason` goes where the provider keeps one (Okta's risk). */
  act(
    action: AccountAction,
    account: AccountRef,
    ctx: LookupContext & { reason?: string },
  ): Promise<ActResult>;
  /** Why this provider cannot take `action` at all (Okta without `userRisk`); undefined when it can. */
  cannot(action: AccountAction): string | undefined;
}

/** How long a lane waits after a 429 that named no time. */
export const RATE_PAUSE_MS = 10_000;

/**
 * An action's answer that is not a 2xx: a 429 is a refusal for rate; a 502, 503 or 504 no answer
 * (a gateway's or a busy service's word proves nothing of the action, which may have been done:
 * section 12's answer unknown, asked at most once more); the rest as `notDone`.
 */
export function actNotDone(
  label: string,
  res: Pick<Response, 'status'>,
  text: string,
  hints: RefusalHints,
  retryAt: number | undefined,
  now: number,
): ActResult | undefined {
  if (res.status === 429)
    return { rateLimited: `${label}: HTTP 429`, retryAt: retryAt ?? now + RATE_PAUSE_MS };
  if (res.status === 502 || res.status === 503 || res.status === 504)
    return { noAnswer: `${label}: HTTP ${res.status}` };
  const bad = notDone(label, res, text, hints, retryAt, now);
  return bad && 'failed' in bad ? { failed: bad.failed } : bad;
}

/** A wait the provider asked for, from `Retry-After` (seconds or an HTTP date); capped at 10 minutes. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const at = Number.isFinite(seconds) ? now + seconds * 1000 : Date.parse(value);
  return Number.isFinite(at) ? Math.min(Math.max(at, now), now + 600_000) : undefined;
}

/** A short, safe description of what a provider answered: its status and error code, never its message. */
export function refusalText(
  provider: string,
  status: number,
  code: string | undefined,
  hint: string,
): string {
  return `${provider} answered HTTP ${status}${code ? ` ${code.slice(0, 60)}` : ''}: ${hint}`;
}

/**
 * The error code of a JSON error body (Graph `{error:{code}}`, Okta `{errorCode}`, Entra `{error}`),
 * at most 60 characters: it goes into failures that are kept in the table (a 600 KB one made the
 * lookup's write fail and stopped the cycle).
 */
export function errorCode(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; errorCode?: unknown } | null;
    const nested = (body?.error as { code?: unknown } | undefined)?.code;
    const code = [body?.errorCode, body?.error, nested].find((c): c is string => typeof c === 'string');
    return code?.slice(0, 60);
  } catch {
    return undefined;
  }
}

/**
 * An answer the product cannot read as the provider documents it (not JSON, a 200 without the user
 * or the list it must hold, a field of the wrong type): a failed lookup, never "no such login"
 * (section 12, "Unreadable is unknown"). `what` names the part, never the login.
 */
export const unreadable = (label: string, what: string) => ({
  failed: `${label}: an answer it cannot read (${what})`,
});

/** A JSON object (not null, not a list), or undefined. */
export const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/**
 * A date field as a provider documents it: an ISO 8601 string; null when absent or null (never
 * set); undefined when it is anything else, which the account cannot be read with.
 */
export function dateField(value: unknown): string | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  return typeof value === 'string' && Number.isFinite(Date.parse(value)) ? value : undefined;
}

/**
 * An account's id as a provider gives it: a string of 1 to 256 characters (Graph's are GUIDs,
 * Okta's 20 characters). A longer one is no id the product can keep: the answer and the verdict
 * are stored, and a DynamoDB item holds 400 KB.
 */
export const idField = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= 256;

/** A display name as kept and shown: at most 256 characters (Graph's own bound), cut beyond. */
export const nameField = (value: string): string => (value.length > 256 ? `${value.slice(0, 255)}…` : value);

/** Whether `value` (the answer's UPN, mail or Okta login) names `login`: logins ignore case. */
export const sameLogin = (value: unknown, login: string): boolean =>
  typeof value === 'string' && value.toLowerCase() === login.toLowerCase();

/** A network failure or an abort, said without the URL (it holds the login). */
export function networkText(provider: string, error: unknown, signal: AbortSignal): string {
  // The caller's stop, or the answer's own time (send's timer).
  if (signal.aborted || (error as Error)?.name === 'TimeoutError') return `${provider}: no answer in time`;
  const code = (error as { cause?: { code?: unknown } })?.cause?.code;
  return `${provider}: network error${typeof code === 'string' ? ` (${code})` : ''}`;
}

/** What to fix when a provider answers 401 or 403, in words for the refusal. */
export interface RefusalHints {
  401?: string;
  403?: string;
}

/**
 * A provider's answer that is not a 2xx, as the lookup step and the actions take it: a 401 or
 * 403 with a hint is a refusal naming what to fix; a 429 a failure with when to ask again
 * (`retryAt`, the provider's word, else RATE_PAUSE_MS); anything else a failure with its status and
 * error code. Undefined for a 2xx.
 */
export function notDone(
  label: string,
  res: Pick<Response, 'status'>,
  text: string,
  hints: RefusalHints,
  retryAt: number | undefined,
  now: number,
): { refused: string } | { failed: string; retryAt?: number } | undefined {
  if (res.status >= 200 && res.status < 300) return undefined;
  const code = errorCode(text);
  const hint = res.status === 401 || res.status === 403 ? hints[res.status] : undefined;
  if (hint) return { refused: refusalText(label, res.status, code, hint) };
  if (res.status === 429) return { failed: `${label}: HTTP 429`, retryAt: retryAt ?? now + RATE_PAUSE_MS };
  return { failed: `${label}: HTTP ${res.status}${code ? ` ${code}` : ''}` };
}
