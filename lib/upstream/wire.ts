/**
 * What an HTTP answer says, read the same way wherever one comes back: the wait a `Retry-After`
 * asks for (the upstream's 429s and every destination's), the body as text and JSON, and the
 * upstream's own error message.
 */

import { parseWellFormed } from '../text.ts';

/**
 * Parses `Retry-After` as seconds or an HTTP date into a wait in ms, at most an hour: every caller
 * turns it into a time or a timer, and a wait of days would stall a stream or a destination on one
 * answer (a 13-digit value is not even a valid Date; setTimeout fires at once past 2^31 ms).
 * Undefined, so the caller backs off as it would without the header, when the header is absent,
 * unreadable, or absurd: further away than a year, which no server means (an epoch timestamp
 * written where seconds belong looks like that).
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const maxWaitMs = 3_600_000;
  const absurdMs = 366 * 86_400_000;
  const trimmed = value?.trim() ?? '';
  let waitMs: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) waitMs = Number(trimmed) * 1000;
  // An HTTP date names its month and day in letters; Date.parse would also take "-5" or "12".
  else if (/[a-z]/i.test(trimmed)) waitMs = Date.parse(trimmed) - now;
  else return undefined;
  if (!Number.isFinite(waitMs) || waitMs > absurdMs) return undefined;
  return Math.min(maxWaitMs, Math.max(0, Math.round(waitMs)));
}

/** The body as text, and as JSON when it parses (an empty body is no JSON, and no error). */
export async function readBody(res: Response): Promise<{ json: unknown; ok: boolean; text: string }> {
  const text = await res.text();
  if (text === '') return { json: undefined, ok: true, text };
  try {
    // Strings as text can be: a lone surrogate from a `\ud800` escape becomes U+FFFD (text.ts).
    return { json: parseWellFormed(text), ok: true, text };
  } catch {
    return { json: undefined, ok: false, text };
  }
}

/** The upstream's own error code (`{"error": {"code": "QUOTA_EXCEEDED"}}`), if its body has one. */
export function upstreamCode(body: unknown): string | undefined {
  const code = ((body as { error?: unknown } | null)?.error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The upstream's own error message, if its body has one, cut short. */
export function upstreamMessage(body: unknown): string {
  const error = (body as { error?: unknown } | null)?.error;
  const raw =
    typeof error === 'string'
      ? error
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : typeof (error as { code?: unknown } | null)?.code === 'string'
          ? (error as { code: string }).code
          : typeof (body as { message?: unknown } | null)?.message === 'string'
            ? (body as { message: string }).message
            : '';
  return raw ? `: ${raw.slice(0, 200)}` : '';
}
