/**
 * The upstream's monthly global-search quota (docs/architecture.md), as the emulator charges it on
 * endpoints 9 and 11: per organization (shared by its tenants), one search per 100 results asked for
 * (a page of 10 or 100 costs 1, of 101 to 200 costs 2), and the same search repeated within 10
 * minutes free.
 *
 * With nothing left a search is refused 403 `QUOTA_EXCEEDED`, not 429: the quota is an entitlement
 * that comes back next month, not a rate that comes back in 10 s, and a 429 would tell clients
 * (ours included) to retry every 10 s all month. A 403 is final for the request, as it should be.
 */
import type { Organization } from './dataset-types.ts';
import { EmulatorError } from './feeds.ts';

export const RESULTS_PER_SEARCH = 100;
export const FREE_REPEAT_MS = 10 * 60_000;

/** What a page of `size` results costs: one search per started 100. */
export function searchCost(size: number): number {
  return Math.max(1, Math.ceil(size / RESULTS_PER_SEARCH));
}

/**
 * `X-Flare-Global-Searches-Batch-Reached`, as the vendor's docs word it: "when you reach the
 * maximum number of results for a search", a further search is charged again. So it is true when
 * this page came back full and more remains (the next page is another search), else false.
 */
export function quotaHeaders(remaining: number, batchReached: boolean): Record<string, string> {
  return {
    'X-Flare-Global-Searches-Remaining': String(remaining),
    'X-Flare-Global-Searches-Batch-Reached': String(batchReached),
  };
}

export interface QuotaCharge {
  /** Searches taken from the quota by this request: 0 for a free repeat. */
  cost: number;
  remaining: number;
}

/**
 * Charges one global search to the organization, or lets it through free when the same search
 * (same endpoint and body, `from` and `size` included) was charged less than 10 minutes ago. The
 * 10 minutes run from the charged search, not from the free repeats, so repeating every 5 minutes
 * is charged every other time. Keyed by organization, whose quota it is: a sibling tenant's
 * identical first page is the same search. `recent` is the emulator's memory of charged searches.
 */
export function chargeSearch(
  recent: Map<string, number>,
  organization: Organization,
  search: { key: string; size: number },
  now: number,
): QuotaCharge {
  for (const [key, at] of recent) if (at <= now - FREE_REPEAT_MS) recent.delete(key);
  const key = `${organization.id}:${search.key}`;
  if (recent.has(key)) return { cost: 0, remaining: organization.quotaRemaining };
  const cost = searchCost(search.size);
  if (organization.quotaRemaining < cost) {
    throw new EmulatorError(
      403,
      'QUOTA_EXCEEDED',
      `the monthly global search quota is used up: ${organization.quotaRemaining} left, this search costs ${cost}`,
      quotaHeaders(organization.quotaRemaining, false),
    );
  }
  organization.quotaRemaining -= cost;
  recent.set(key, now);
  return { cost, remaining: organization.quotaRemaining };
}
