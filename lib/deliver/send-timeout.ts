/**
 * How long a send waits for its answer: apart from send-context.ts, so the delivery pass reads it
 * at start without loading the send itself (which loads with the first message).
 */
export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** How long a send waits for its answer. */
export function sendTimeoutMs(deps: { sendTimeoutMs?: number }): number {
  return deps.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
}
