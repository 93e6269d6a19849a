/**
 * Small pieces several views share: how a severity, a verdict and a delivery's state read, and the
 * destinations the status knows (read once per visit, for the filter's choices).
 */
import { ApiFailure, call, get } from '../api.ts';
import { type Child, h } from '../dom.ts';
import type { Delivery, Identity, Status } from '../types.ts';

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;

export function severityBadge(severity: string | undefined): Child {
  if (!severity) return '—';
  return h('span', { class: `badge sev-${/^[a-z]+$/.test(severity) ? severity : 'other'}` }, severity);
}

/** `at risk (Entra ID corp)`; nothing when the item has no verdict. */
export function verdictText(identity: Identity | undefined): Child {
  if (!identity) return '—';
  const words = identity.verdict.replace('_', ' ');
  return h(
    'span',
    { class: `badge verdict-${/^[a-z_]+$/.test(identity.verdict) ? identity.verdict : 'other'}` },
    identity.reason ? `${words} (${identity.reason})` : words,
    ` · ${identity.provider}`,
  );
}

/** A delivery's state in section 13's words: a pending one after a failed attempt is retrying. */
export function stateOf(d: Delivery): string {
  return d.status === 'pending' && d.attempts > 0 ? 'retrying' : d.status;
}

export function deliveryList(deliveries: Delivery[]): Child {
  if (deliveries.length === 0) return 'none';
  return h(
    'ul',
    { class: 'deliveries' },
    deliveries.map((d) => {
      const state = stateOf(d);
      return h(
        'li',
        {},
        h('span', { class: 'dest' }, d.destination),
        ' ',
        h('span', { class: `badge state-${/^[a-z]+$/.test(state) ? state : 'other'}` }, state),
      );
    }),
  );
}

let status: Promise<Status> | undefined;
/** The status, read once for choices (destination names, whether tenants exist); `fresh` reads it again. */
export function knownStatus(fresh = false): Promise<Status> {
  if (fresh || !status) {
    status = get<Status>('status');
    status.catch(() => {
      status = undefined;
    });
  }
  return status;
}

/**
 * How many of the recent alerts a silence would have held (`POST /silences?dryRun=true`), creating
 * nothing. An answer without the count is refused here, before any silence is made.
 */
export async function countHeld(body: unknown): Promise<{ wouldHold: number; of: number }> {
  const dry = (await call<{ wouldHold?: unknown; of?: unknown }>('POST', 'silences?dryRun=true', { body }))
    .body;
  if (typeof dry?.wouldHold !== 'number' || typeof dry.of !== 'number')
    throw new ApiFailure(
      0,
      'no_dry_run',
      'The API did not say what the silence would hold, so nothing more was done.',
    );
  return { wouldHold: dry.wouldHold, of: dry.of };
}
