/**
 * A Discord webhook's answer, read as Discord means it (docs/destinations/discord.md): on top of the
 * common reading (deliver/send-context.ts `readAnswer`), a 429's JSON `retry_after` (seconds, with a fraction)
 * sets the wait when it is longer than the `Retry-After` header; and an acceptance that says its
 * bucket is empty (`X-RateLimit-Remaining: 0`) holds the next message for `X-RateLimit-Reset-After`
 * seconds, so the next send is not refused at all.
 */
import type { SendOutcome } from '../../deliver/outcome.ts';

/** The longest hold an acceptance's headers can ask for; past it they are not believed. */
const MAX_HOLD_MS = 60_000;
const MAX_WAIT_MS = 3_600_000;

function seconds(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n * 1000) : undefined;
}

export function readDiscordAnswer(
  read: SendOutcome,
  body: string,
  headers: { get(name: string): string | null },
): SendOutcome {
  if (read.ok) {
    if (headers.get('x-ratelimit-remaining')?.trim() !== '0') return read;
    const hold = seconds(headers.get('x-ratelimit-reset-after'));
    return hold ? { ...read, holdMs: Math.min(hold, MAX_HOLD_MS) } : read;
  }
  if (read.status !== 429) return read;
  let said: number | undefined;
  try {
    said = seconds((JSON.parse(body) as { retry_after?: unknown }).retry_after);
  } catch {
    // Not JSON: the header is all there is.
  }
  if (said === undefined || said <= (read.retryAfterMs ?? 0)) return read;
  return { ...read, retryAfterMs: Math.min(said, MAX_WAIT_MS) };
}
