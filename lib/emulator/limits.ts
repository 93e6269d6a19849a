/**
 * The upstream's rate limits (docs/architecture.md): per ORGANIZATION, shared
 * by every tenant and caller of it, a Basic tier on every endpoint (the token exchange included: the
 * API key is the organization's) and a Search tier on the global searches (endpoints 9 and 11),
 * which count in both. Over a limit the answer is 429 `RATELIMIT_REACHED`.
 *
 * Counting is a sliding log: a request arriving at `t` is refused when the window (t - 1 s, t]
 * already holds the limit. A fixed 1 s bucket would let 2x the limit through across a bucket edge
 * and so could not tell a product that paces right from one that does not.
 *
 * The limiter also measures, limits on or off: per organization and tier, the requests that
 * arrived, those admitted, the 429s, and the highest count seen in any sliding 1 s window, of
 * admitted requests and of arrivals. That is what a test or a benchmark reads to prove the product
 * kept within the rate under either reading of "a refused request counts".
 */

export type Tier = 'basic' | 'search';

export interface RateLimits {
  /** Requests per sliding second per organization, every endpoint; Infinity: unlimited. */
  basicPerSecond: number;
  /** Requests per sliding second per organization on endpoints 9 and 11; Infinity: unlimited. */
  searchPerSecond: number;
  /**
   * `Retry-After` seconds sent with a 429; undefined sends none, as the real service promises
   * none (its docs say to wait 10 s), so clients are tested on the header's absence by default.
   */
  retryAfterSeconds: number | undefined;
  /**
   * Whether a refused request still takes a place in the window. Default false: most limiters
   * (sliding logs, token buckets, GCRA) record only what they admit, and the real service does not
   * say otherwise. True is the stricter reading, where a client that keeps knocking stays locked
   * out; the product must keep within the limit under both, so both are available.
   */
  countRefused: boolean;
  /**
   * Whether a Search-tier request also counts in Basic. Default true, as docs/architecture.md
   * and issue 14 read the facts. (The vendor's public page words the tiers as "independent", four
   * basic plus one search a second; true is the stricter of the two, so a product that keeps
   * within it keeps within both.)
   */
  searchCountsInBasic: boolean;
}

/** The real service's numbers: Basic 4 requests/s, Search 1 request/s. */
export const REAL_RATE_LIMITS: Readonly<Pick<RateLimits, 'basicPerSecond' | 'searchPerSecond'>> = {
  basicPerSecond: 4,
  searchPerSecond: 1,
};

/**
 * How a caller asks for limits: `'real'` (4/s and 1/s), `'off'` (unlimited, the default, so tests
 * and demos never see a 429 they did not ask for), or the knobs themselves; a knob left out of the
 * object is unlimited (or its default).
 */
export type RateLimitOption = 'real' | 'off' | Partial<RateLimits>;

/** Endpoints of the Search tier (endpoints 9 and 11: the global searches). */
const SEARCH_ENDPOINTS: ReadonlySet<string> = new Set(['globalCredentials', 'legacySearch']);

export function isSearchEndpoint(endpoint: string): boolean {
  return SEARCH_ENDPOINTS.has(endpoint);
}

const WINDOW_MS = 1_000;

/**
 * A per-second rate from a knob: 0, null, Infinity or "unlimited" mean no limit; otherwise a
 * positive whole number (a count in a 1 s window; a fraction would not be one).
 */
export function perSecond(name: string, value: unknown): number {
  if (value === 0 || value === null || value === Number.POSITIVE_INFINITY || value === 'unlimited') {
    return Number.POSITIVE_INFINITY;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of requests per second (0 or null: unlimited)`);
  }
  return value;
}

const UNLIMITED: RateLimits = {
  basicPerSecond: Number.POSITIVE_INFINITY,
  searchPerSecond: Number.POSITIVE_INFINITY,
  retryAfterSeconds: undefined,
  countRefused: false,
  searchCountsInBasic: true,
};

/** `limits` with the knobs `change` names (an undefined one is left as it was) checked and applied. */
function applyChange(limits: RateLimits, change: Partial<RateLimits>): RateLimits {
  const next = { ...limits };
  if (change.basicPerSecond !== undefined)
    next.basicPerSecond = perSecond('basicPerSecond', change.basicPerSecond);
  if (change.searchPerSecond !== undefined)
    next.searchPerSecond = perSecond('searchPerSecond', change.searchPerSecond);
  if (change.retryAfterSeconds !== undefined) {
    const value = change.retryAfterSeconds;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new RangeError('retryAfterSeconds must be a number of seconds, 0 or more');
    }
    next.retryAfterSeconds = value;
  }
  for (const flag of ['countRefused', 'searchCountsInBasic'] as const) {
    const value = change[flag];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new RangeError(`${flag} must be true or false`);
    next[flag] = value;
  }
  return next;
}

export function resolveRateLimits(option: RateLimitOption | undefined): RateLimits {
  if (option === undefined || option === 'off') return { ...UNLIMITED };
  if (option === 'real') return { ...UNLIMITED, ...REAL_RATE_LIMITS };
  return applyChange(UNLIMITED, option);
}

/** Timestamps of the last second, oldest first; a head index keeps pruning cheap. */
class SlidingWindow {
  private times: number[] = [];
  private head = 0;

  /** How many fall in (now - 1 s, now]. */
  count(now: number): number {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - WINDOW_MS) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    return this.times.length - this.head;
  }

  add(now: number): void {
    this.times.push(now);
  }
}

export interface TierStats {
  /** Requests of this tier that arrived (authenticated, so attributable to the organization). */
  arrivals: number;
  admitted: number;
  /** 429s this tier caused (a request both tiers refuse counts in both). */
  refused: number;
  /** Highest count of admitted requests in any sliding 1 s window: must stay within the limit. */
  maxAdmittedPerWindow: number;
  /** Highest count of arrivals, 429s included, in any sliding 1 s window. */
  maxArrivalsPerWindow: number;
}

export interface OrganizationRateStats {
  organizationId: number;
  /** 429s given to this organization for its rate. */
  refused: number;
  basic: TierStats;
  search: TierStats;
}

export interface RateStats {
  limits: {
    basicPerSecond: number | null;
    searchPerSecond: number | null;
    retryAfterSeconds: number | null;
    countRefused: boolean;
    searchCountsInBasic: boolean;
  };
  /** Every 429 the limiter gave (not injected faults). */
  refused: number;
  organizations: OrganizationRateStats[];
}

interface TierState {
  admitted: SlidingWindow;
  arrived: SlidingWindow;
  stats: TierStats;
}

interface OrganizationState {
  refused: number;
  basic: TierState;
  search: TierState;
}

function newTier(): TierState {
  return {
    admitted: new SlidingWindow(),
    arrived: new SlidingWindow(),
    stats: { arrivals: 0, admitted: 0, refused: 0, maxAdmittedPerWindow: 0, maxArrivalsPerWindow: 0 },
  };
}

export type Admission = { admitted: true } | { admitted: false; refusedBy: Tier[] };

export class RateLimiter {
  limits: RateLimits;
  private organizations = new Map<number, OrganizationState>();

  constructor(
    option: RateLimitOption | undefined,
    private readonly now: () => number,
  ) {
    this.limits = resolveRateLimits(option);
  }

  /**
   * Changes some knobs, keeping the others and the windows (requests already counted still are).
   * `'real'` and `'off'` set both rates; `retryAfterSeconds: null` stops sending the header.
   */
  configure(
    change:
      | (Omit<Partial<RateLimits>, 'retryAfterSeconds'> & { retryAfterSeconds?: number | null })
      | 'real'
      | 'off',
  ): void {
    if (change === 'real' || change === 'off') {
      const rates = resolveRateLimits(change);
      this.limits = {
        ...this.limits,
        basicPerSecond: rates.basicPerSecond,
        searchPerSecond: rates.searchPerSecond,
      };
      return;
    }
    const { retryAfterSeconds, ...rest } = change;
    const next = applyChange(this.limits, { ...rest, retryAfterSeconds: retryAfterSeconds ?? undefined });
    if (retryAfterSeconds === null) next.retryAfterSeconds = undefined;
    this.limits = next;
  }

  private limit(tier: Tier): number {
    return tier === 'basic' ? this.limits.basicPerSecond : this.limits.searchPerSecond;
  }

  private state(organizationId: number): OrganizationState {
    let state = this.organizations.get(organizationId);
    if (!state) {
      state = { refused: 0, basic: newTier(), search: newTier() };
      this.organizations.set(organizationId, state);
    }
    return state;
  }

  /**
   * Admits or refuses one request of `organizationId` to `endpoint`, arriving now, and records it.
   * A request is admitted only when every tier it counts in has room; then it takes a place in each.
   */
  admit(organizationId: number, endpoint: string): Admission {
    const now = this.now();
    const org = this.state(organizationId);
    const tiers: Tier[] = isSearchEndpoint(endpoint)
      ? this.limits.searchCountsInBasic
        ? ['basic', 'search']
        : ['search']
      : ['basic'];
    const refusedBy = tiers.filter((tier) => {
      const t = org[tier];
      const window = this.limits.countRefused ? t.arrived : t.admitted;
      return window.count(now) >= this.limit(tier);
    });
    const admitted = refusedBy.length === 0;
    for (const tier of tiers) {
      const t = org[tier];
      t.arrived.add(now);
      t.stats.arrivals++;
      t.stats.maxArrivalsPerWindow = Math.max(t.stats.maxArrivalsPerWindow, t.arrived.count(now));
      if (admitted) {
        t.admitted.add(now);
        t.stats.admitted++;
        t.stats.maxAdmittedPerWindow = Math.max(t.stats.maxAdmittedPerWindow, t.admitted.count(now));
      } else if (refusedBy.includes(tier)) {
        t.stats.refused++;
      }
    }
    if (admitted) return { admitted: true };
    org.refused++;
    return { admitted: false, refusedBy };
  }

  stats(): RateStats {
    const finite = (n: number) => (Number.isFinite(n) ? n : null);
    const organizations = [...this.organizations]
      .sort(([a], [b]) => a - b)
      .map(([organizationId, s]) => ({
        organizationId,
        refused: s.refused,
        basic: { ...s.basic.stats },
        search: { ...s.search.stats },
      }));
    return {
      limits: {
        basicPerSecond: finite(this.limits.basicPerSecond),
        searchPerSecond: finite(this.limits.searchPerSecond),
        retryAfterSeconds: this.limits.retryAfterSeconds ?? null,
        countRefused: this.limits.countRefused,
        searchCountsInBasic: this.limits.searchCountsInBasic,
      },
      refused: organizations.reduce((sum, o) => sum + o.refused, 0),
      organizations,
    };
  }

  /**
   * Forgets the counts, the maxima AND the windows, so a test or a measured run starts from an
   * empty second rather than inheriting the requests of the one before.
   */
  reset(): void {
    this.organizations.clear();
  }
}
