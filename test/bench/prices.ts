/**
 * The AWS list prices the cost section (measure-cost.ts) bills with: us-east-1, on demand, entered
 * by hand in this one place, with the date they were read. Check them before relying on a figure,
 * and when a price changes, change it here (and the date): the bench's comparison with its
 * baseline is priced with these on both sides, so a new price moves the bill, not the ratio.
 *
 * The free tier is NOT applied: every figure is the list price of the usage, what an account that
 * already spends its free tier elsewhere pays. The free allowances are written beside each price
 * for the reader, and an account in its first months pays less by about their worth.
 *
 * Read on 2026-11-26 from the public pricing pages (and excerpts of them):
 * aws.amazon.com/lambda/pricing, aws.amazon.com/dynamodb/pricing/on-demand,
 * aws.amazon.com/sqs/pricing, aws.amazon.com/secrets-manager/pricing,
 * aws.amazon.com/cloudwatch/pricing, aws.amazon.com/xray/pricing,
 * aws.amazon.com/eventbridge/pricing (Scheduler).
 */

export const PRICES_READ_ON = '2026-11-26';
export const PRICES_REGION = 'us-east-1';

export interface Tier {
  /** Units in this tier (the last is unbounded). */
  upTo: number;
  /** USD per unit. */
  price: number;
}

export const PRICES = {
  lambda: {
    /** arm64, first 7.5 billion GB-s a month (free: 400,000 GB-s, x86 and arm64 together). */
    perGbSecond: 0.0000133334,
    /** Per request (free: 1 million a month). */
    perRequest: 0.2 / 1e6,
  },
  dynamodb: {
    /** On-demand, Standard table class (since the cut of November 2024). */
    perWriteUnit: 0.625 / 1e6,
    perReadUnit: 0.125 / 1e6,
    /** Per GB-month stored, items and their indexes (free: 25 GB). */
    perGbMonth: 0.25,
    /** Continuous backups (point-in-time recovery), per GB-month of table size. */
    pitrPerGbMonth: 0.2,
  },
  sqs: {
    /** Standard queue, per request, each 64 KB chunk of a payload a request (free: 1 million a month). */
    perRequest: 0.4 / 1e6,
  },
  secretsManager: {
    perSecretMonth: 0.4,
    /** GetSecretValue and every other API call. */
    perCall: 0.05 / 10_000,
  },
  cloudwatch: {
    /** Custom metrics (EMF included), per metric-month, prorated by the hours a metric is sent (free: 10). */
    metricTiers: [
      { upTo: 10_000, price: 0.3 },
      { upTo: 240_000, price: 0.1 },
      { upTo: 750_000, price: 0.05 },
      { upTo: Number.POSITIVE_INFINITY, price: 0.02 },
    ] as Tier[],
    /** Standard-resolution alarm, per alarm metric-month (free: 10). */
    perAlarm: 0.1,
    /** Per custom dashboard-month (free: 3 dashboards of up to 50 metrics). */
    perDashboard: 3,
    /** Logs ingested (standard class; Lambda's logs start at the same price), per GB (free: 5 GB). */
    logsPerGbIngested: 0.5,
    /** Logs stored, per GB-month (compressed; we bill the raw size, an upper bound). */
    logsPerGbMonth: 0.03,
  },
  xray: {
    /** Per trace recorded (free: 100,000 a month). */
    perTrace: 5 / 1e6,
  },
  scheduler: {
    /** EventBridge Scheduler, per invocation (free: 14 million a month). */
    perInvocation: 1 / 1e6,
  },
} as const;

/** What `units` cost through `tiers` (each tier's `upTo` counted from the end of the one before). */
export function tiered(units: number, tiers: readonly Tier[]): number {
  let left = units;
  let cost = 0;
  for (const tier of tiers) {
    const here = Math.min(left, tier.upTo);
    cost += here * tier.price;
    left -= here;
    if (left <= 0) break;
  }
  return cost;
}
