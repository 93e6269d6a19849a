/**
 * No duplicate ticket from a crash or a timeout (interface.md section 4, Jira and ServiceNow). A ticket system has
 * no idempotency key, so a create is written down (`sendingAt`) before it is sent. A create whose
 * outcome is not known (the run died before recording it, the request timed out, the server
 * answered 5xx) is tried again no sooner than UNKNOWN_OUTCOME_WAIT_MS after it was sent, and only
 * after a search for its `exposure-` label finds nothing: the search is eventually consistent, so
 * one straight after the create could miss it. What remains: an index slower than those 5 minutes
 * (the README says so).
 */
import type { Rendered } from '../render/types.ts';
import type { DeliveryRecord } from '../state/records/record.ts';
import type { ResolvedDestination } from './destinations.ts';
import type { SendOutcome } from './outcome.ts';
import type { Payload, SendContext } from './senders.ts';
import type { DeliverDeps } from './types.ts';

export const UNKNOWN_OUTCOME_WAIT_MS = 5 * 60_000;

type Ticketing = Extract<ResolvedDestination, { type: 'jira' | 'servicenow' }>;

/** What to do with a message to a ticket destination before sending it. */
export type TicketGate = { send: true } | { wait: true } | { found: string };

/**
 * Decides whether `records` may be created now: never tried (send, marked first), tried with an
 * unknown outcome less than 5 minutes ago (wait), or tried longer ago (search: found, or send).
 */
export async function beforeTicket(
  deps: Pick<DeliverDeps, 'deliveries' | 'clock'>,
  destination: Ticketing,
  message: Rendered<Payload>,
  records: DeliveryRecord[],
  ctx: SendContext,
): Promise<TicketGate> {
  const now = deps.clock.now();
  const tried = records.map((r) => Date.parse(r.sendingAt ?? '')).filter(Number.isFinite);
  if (tried.length) {
    const since = Math.max(...tried);
    if (now - since < UNKNOWN_OUTCOME_WAIT_MS) {
      const due = new Date(since + UNKNOWN_OUTCOME_WAIT_MS).toISOString();
      for (const r of records) r.nextAttemptAt = due;
      await deps.deliveries.save(records);
      return { wait: true };
    }
    const payload = message.payload as { labels?: string[]; correlation_id?: string };
    const label = payload.labels?.[0] ?? payload.correlation_id;
    const found = label ? await searchLabel(destination, label, ctx) : undefined;
    if (found === 'error') {
      for (const r of records) r.nextAttemptAt = new Date(now + 60_000).toISOString();
      await deps.deliveries.save(records);
      return { wait: true };
    }
    if (found) return { found };
  }
  for (const r of records) r.sendingAt = new Date(now).toISOString();
  await deps.deliveries.save(records);
  return { send: true };
}

/**
 * After an answer: a definite refusal (a 4xx) made nothing, so the mark goes; an unknown outcome
 * keeps it, and its retry waits at least the 5 minutes. Returns the records to save again.
 */
export function afterTicket(records: DeliveryRecord[], outcome: SendOutcome): DeliveryRecord[] {
  if (outcome.ok) return [];
  const known = outcome.status !== undefined && outcome.status >= 400 && outcome.status < 500;
  const changed: DeliveryRecord[] = [];
  for (const r of records) {
    if (known) {
      if (r.sendingAt) changed.push(r);
      r.sendingAt = undefined;
      continue;
    }
    const earliest = Date.parse(r.sendingAt ?? '') + UNKNOWN_OUTCOME_WAIT_MS;
    if (r.status === 'pending' && Number.isFinite(earliest) && Date.parse(r.nextAttemptAt ?? '') < earliest) {
      r.nextAttemptAt = new Date(earliest).toISOString();
      changed.push(r);
    }
  }
  return changed;
}

/**
 * The ticket that carries `label` (Jira: a JQL label search; ServiceNow: a `correlation_id` query),
 * undefined if none, 'error' if the search failed.
 */
async function searchLabel(
  destination: Ticketing,
  label: string,
  ctx: SendContext,
): Promise<string | undefined | 'error'> {
  const url =
    destination.type === 'jira'
      ? `${destination.url}/rest/api/3/search/jql?jql=${encodeURIComponent(`labels = "${label}"`)}&fields=key&maxResults=1`
      : `${destination.url}/api/now/table/${destination.table}?sysparm_query=${encodeURIComponent(`correlation_id=${label}`)}&sysparm_fields=sys_id,number&sysparm_limit=1`;
  try {
    const res = await fetch(url, {
      headers: { Accept: 'application/json', Authorization: destination.authorization },
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return 'error';
    }
    const body = (await res.json()) as { issues?: { key?: unknown }[]; result?: { sys_id?: unknown }[] };
    const found = destination.type === 'jira' ? body.issues?.[0]?.key : body.result?.[0]?.sys_id;
    return typeof found === 'string' ? found : undefined;
  } catch {
    return 'error';
  }
}
