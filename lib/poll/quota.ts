/**
 * The global-search quota as credential polling sees it (docs/architecture.md): below
 * `upstream.quotaReserve` searches left, credential polling pauses instead of spending the last
 * ones; event polling and the API go on. The reading is the upstream's own
 * (`X-Flare-Global-Searches-Remaining`), seen on every search and stored in the table once a cycle
 * (state/quota.ts), so every run and `status` share it.
 *
 * While paused nothing searches, so nothing would tell when the quota came back (it renews
 * monthly): once the stored reading is an hour old, a cycle spends one search on one page of one
 * stream to read it again, and goes on if the quota allows. The probe is claimed in the table
 * first, so however many workers run, the deployment spends one probe search an hour.
 */
import type { Clock } from '../clock.ts';
import { SKEW_SLACK_MS } from '../state/clock-sync.ts';
import type { QuotaReading, QuotaStore } from '../state/quota.ts';

/** How old a paused reading may get before a cycle spends one search to read it again. */
export const QUOTA_PROBE_MS = 3_600_000;

export type QuotaState = 'open' | 'probe' | 'paused';

export class QuotaGate {
  private seen?: QuotaReading;
  private stored?: QuotaReading;

  constructor(
    private readonly store: QuotaStore,
    private readonly clock: Clock,
  ) {}

  /** A reading from a search response (the upstream client's onQuota). */
  observe(remaining: number): void {
    this.seen = { remaining, at: new Date(this.clock.now()).toISOString() };
  }

  /** The latest reading known to this run. */
  latest(): QuotaReading | undefined {
    if (!this.seen) return this.stored;
    if (!this.stored) return this.seen;
    return this.seen.at >= this.stored.at ? this.seen : this.stored;
  }

  /** At a credential cycle's start: whether to poll, probe with one page, or stay paused. */
  async check(reserve: number): Promise<QuotaState> {
    this.stored = await this.store.read();
    const reading = this.latest();
    if (!reading || reading.remaining >= reserve) return 'open';
    const now = this.clock.now();
    // A reading dated ahead of now (a wrong clock wrote it) is as good as an old one.
    const age = now - Date.parse(reading.at);
    if (age < QUOTA_PROBE_MS && age > -SKEW_SLACK_MS) return 'paused';
    return (await this.store.claimProbe(now, QUOTA_PROBE_MS)) ? 'probe' : 'paused';
  }

  /** Mid-cycle: whether the last reading fell below the reserve. */
  below(reserve: number): boolean {
    const reading = this.latest();
    return reading !== undefined && reading.remaining < reserve;
  }

  /** Stores what this run read, when it is newer than what the table holds. */
  async save(): Promise<void> {
    const seen = this.seen;
    if (!seen || (this.stored && this.stored.at >= seen.at)) return;
    await this.store.write(seen);
    this.stored = seen;
  }
}
