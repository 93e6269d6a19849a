/**
 * The rate tiers of the upstream (docs/architecture.md) and what takes a turn in them: the client
 * (http.ts) and the token exchange (auth.ts) ask a RateGovernor before each request; the shared
 * one lives in the table (state/governor.ts).
 */

/** The upstream's rate tiers: every request is Basic; global searches are Search too. */
export type RateTier = 'basic' | 'search';

/** Endpoints of the Search tier (endpoints 9 and 11). */
export const SEARCH_TIER_ENDPOINTS: ReadonlySet<string> = new Set(['globalCredentials', 'legacySearch']);

/**
 * Takes this run's turn before each request, so every run of the deployment together keeps within
 * the organization's rate (state/governor.ts). Throws rate_limited when no turn comes in time.
 */
export interface RateGovernor {
  take(tier: RateTier, options: { deadline?: number; signal?: AbortSignal }): Promise<void>;
  /** A 429 came back: slow the shared rate down for a while. */
  slowDown(): Promise<void>;
}
