/**
 * Searching a ticket system for the ticket a label names, for a ticket kind's body (its `search`):
 * before a create of unknown outcome is tried again, tickets.ts asks whether it happened.
 */
import { originOf, waitingFor } from '../waits.ts';

/**
 * Searches a ticket system (a GET of `url`) for the ticket a label names: its key or id, undefined
 * when there is none, 'error' when the search itself failed (a create then waits: tickets.ts).
 */
export async function searchTickets(
  url: string,
  authorization: string,
  ctx: { timeoutMs: number },
  found: (body: unknown) => unknown,
): Promise<string | undefined | 'error'> {
  try {
    const res = await waitingFor(
      `a ticket search at ${originOf(url)}`,
      fetch(url, {
        headers: { Accept: 'application/json', Authorization: authorization },
        signal: AbortSignal.timeout(ctx.timeoutMs),
      }),
    );
    if (!res.ok) {
      await res.body?.cancel();
      return 'error';
    }
    const key = found(await res.json());
    return typeof key === 'string' ? key : undefined;
  } catch {
    return 'error';
  }
}
