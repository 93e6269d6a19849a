/**
 * Longer than 300 lines because the bill reads best whole: each assumption, each line, each price.
 *
 * The month's bill of a deployment, from what one stream visit and one delivered item were measured
 * to use (measure-cost.ts), the stack's shape (its functions' memory, schedules, alarms: read from
 * the synthesized template) and the list prices (prices.ts). Pure arithmetic, so a reader can check
 * each line; every assumption that is not a measurement is a named constant below.
 *
 * Per month (730 hours), for `events` event streams and `credentials` credential domains polled by
 * one organization:
 * - Schedules. Each kind is dispatched every interval of the stack's schedule (every minute, every
 *   hour) when the organization's rate allows it: every visit costs upstream requests (measured),
 *   paced at 90% of the tiers (4 a second, 1 search a second; a search counts in both). When the
 *   streams need more, the interval grows to the least whole number of hours (credentials) or
 *   minutes (events) that fits, which is what `credentialsRate` / `eventsRate` would have to be set
 *   to. Each stream is then visited once an interval (a dispatch enqueues every stream).
 * - Items. ITEMS_PER_STREAM_PER_DAY new items a stream (an assumption), each costing what one more
 *   delivered item cost in the bench beyond its visit.
 * - Lambda. One worker invocation a visit (batch size 1), one dispatcher invocation a dispatch, the
 *   API none (a few calls a day cost under a cent). A worker invocation bills the time measured on
 *   this machine for its own work (the job's time less its waits for the bench's ×10 rate, which
 *   stands for Lambda's), with each upstream request's answer at UPSTREAM_LATENCY_MS instead of the
 *   emulator's EMULATOR_LATENCY_MS; and never less than the rate allows: while the rate is what
 *   bounds a kind, all its `pollerConcurrency` workers are busy (working or waiting for their turn)
 *   for as long as its requests take at the paced rate. A dispatcher bills its measured reads and
 *   SQS_SEND_MS a batch of ten messages.
 * - DynamoDB: the capacity units measured (product.ts CapacityCount), on demand. A visit reads its
 *   own stream's state only (lib/poll/cycle.ts `streamsInTurn` with `only`, measured: KindMeasure
 *   `stateReadUnits`), so its reads do not grow with the deployment's streams. Storage of the
 *   stream states and ITEM_DAYS_KEPT days of items (their records' lifetime), with point-in-time
 *   recovery on the same size.
 * - SQS: per message one send (ten to a SendMessageBatch), one receive and one delete; and the
 *   event sources' long polls of an empty queue, ESM_POLLERS pollers each every LONG_POLL_S.
 * - Secrets Manager: the stack's secrets, and one GetSecretValue per cold start of a worker or the
 *   API (the dispatchers read none), COLD_STARTS_PER_HOUR of each environment.
 * - CloudWatch: every metric the bench's EMF lines published. CloudWatch bills a custom metric by
 *   the hour: one that gets data in N hours of the month is N/730 of a metric-month. Per service:
 *   every hour (each visit sends them, zero included). Per stream: those a visit that finds nothing
 *   publishes, every hour (none since lib/metrics.ts `countForStream`, as measured; billed if ever
 *   there are some), and those each new item makes the streams that fetch it publish, an hour each
 *   (KindMeasure `streamMetricsPerItem`). The items are assumed to come apart, each in an hour of
 *   its own (an upper bound), so a stream has them in ITEMS_PER_STREAM_PER_DAY hours a day, no more
 *   than every hour nor than its visits a day (`itemHours`). Per destination: in the hours a
 *   destination delivers (the chance that an hour has an item of that kind). With `tenants`
 *   entries, a PollLagSeconds per tenant and worker (lib/poll/cycle.ts, not measured: the bench's
 *   world is one tenant), sent when one of the tenant's streams saw items: in as many hours as its
 *   streams find items a day, at most every hour. The stack's alarms and dashboards. Logs: the
 *   bytes measured (log and EMF lines), with the request id every line carries on Lambda
 *   (LINE_CONTEXT_BYTES) and the platform's START/END/REPORT lines (PLATFORM_LOG_BYTES); stored for
 *   the retention, at their raw size.
 * - X-Ray (active tracing on every function): Lambda samples the first request each second and 5%
 *   of the rest, per function (assumed): a worker's busy seconds are its billed seconds over its
 *   concurrency.
 * - EventBridge Scheduler: one invocation per dispatch.
 */
import { REAL_RATE_LIMITS } from '../../lib/emulator/limits.ts';
import { PACE_SHARE } from '../../lib/state/governor.ts';
import { PRICES, tiered } from './prices.ts';

export type Kind = 'events' | 'credentials';
export const COST_KINDS: Kind[] = ['events', 'credentials'];

export const MONTH_HOURS = 730;
const MONTH_S = MONTH_HOURS * 3600;
/** Assumed: new items a stream finds a day, each in an hour of its own (see the header, CloudWatch). */
export const ITEMS_PER_STREAM_PER_DAY = 1;
/** Assumed: an upstream answer on AWS (docs/deploy.md, Sizing the fan-out: about half a second). */
export const UPSTREAM_LATENCY_MS = 500;
/** The scale world's emulator adds this to every answer (measure-scale.ts, `latencyMs`). */
export const EMULATOR_LATENCY_MS = 10;
/** Assumed: one SendMessageBatch from a dispatcher. */
export const SQS_SEND_MS = 20;
/** Assumed: pollers of an SQS event source on an idle queue, and their long poll. */
export const ESM_POLLERS = 5;
export const LONG_POLL_S = 20;
/** Assumed: cold starts an hour of each worker environment and of the API. */
export const COLD_STARTS_PER_HOUR = 1;
/** Lambda's START, END and REPORT lines (with the X-Ray trace line) of one invocation (not measured). */
export const PLATFORM_LOG_BYTES = 360;
/** Each product line on Lambda also carries the invocation's request id (lib/invocation.ts). */
export const LINE_CONTEXT_BYTES = JSON.stringify({
  awsRequestId: '00000000-0000-0000-0000-000000000000',
  coldStart: false,
}).length;
/** Delivery records live 90 days (docs/architecture.md); an item's data is counted that long. */
export const ITEM_DAYS_KEPT = 90;
/** DynamoDB counts 100 bytes of overhead per item, in the table and in each index that holds it. */
export const ITEM_OVERHEAD_BYTES = 100;
/** The real tiers. */
const { basicPerSecond: BASIC_PER_S, searchPerSecond: SEARCH_PER_S } = REAL_RATE_LIMITS;

/** What one use (a visit that found nothing new, or one more item delivered) cost, on average. */
export interface Use {
  /** Upstream requests (for credentials, all searches). */
  upstream: number;
  dynamoRequests: number;
  /** Read and write request units, index writes and refused conditional writes included. */
  readUnits: number;
  writeUnits: number;
  /** Billed time of the worker on Lambda (see the header). */
  lambdaMs: number;
  /** Log and EMF bytes, as ingested on Lambda (platform lines apart). */
  logBytes: number;
}

export interface KindMeasure {
  /** Streams of the kind in the measured world. */
  streams: number;
  /** A visit that finds nothing new. */
  visit: Use;
  /**
   * Read units of a visit's read of stream states (its BatchGetItem), part of `visit.readUnits`:
   * its own stream's state, about 1 unit whatever the streams (a job used to read its kind's every
   * state, so the reads grew with the deployment's streams, and the month's with their square).
   */
  stateReadUnits: number;
  item: Use;
  /** Metrics with a `stream` dimension that a visit finding nothing publishes (mean; 0 expected). */
  idleStreamMetrics: number;
  /**
   * Metrics with a `stream` dimension that one more item brings, beyond the idle ones, on every
   * stream that fetched it (an event can be on the tenant's feed and an identifier group's; a
   * stream that fetched it after another has it as not new, and still counts it fetched): each an
   * hour of one metric, since the items come each in an hour of its own.
   */
  streamMetricsPerItem: number;
  /** Metrics with the `service` dimension alone. */
  serviceMetrics: number;
  /** Metrics with a `destination` dimension, per destination that delivered. */
  destinationMetrics: number;
  /** A dispatch, per stream it enqueues: time, DynamoDB requests and read units, log bytes. */
  dispatch: {
    msPerStream: number;
    requestsPerStream: number;
    readUnitsPerStream: number;
    logBytesPerStream: number;
  };
}

export interface Measured {
  kinds: Record<Kind, KindMeasure>;
  /** DynamoDB bytes (overhead and index copies included) of a stream's state, and of one item's data. */
  storage: { bytesPerStream: number; bytesPerItem: number };
  /** Destinations in the measured world. */
  destinations: number;
}

/** What the bill reads from the synthesized stack (measure-cost.ts stackShape). */
export interface StackShape {
  workerMemoryMb: Record<Kind, number>;
  dispatcherMemoryMb: Record<Kind, number>;
  /** The schedules' intervals. */
  intervalS: Record<Kind, number>;
  /** The event sources' maximum concurrency (`pollerConcurrency`). */
  concurrency: Record<Kind, number>;
  /** Functions that read the secret at a cold start besides the workers (the API). */
  otherSecretReaders: number;
  alarms: number;
  dashboards: number;
  secrets: number;
  logRetentionDays: number;
  pitr: boolean;
  tracing: boolean;
}

/** A deployment to bill: its streams by kind, those of each `tenants` entry, and its destinations. */
export interface Deployment {
  streams: Record<Kind, number>;
  /** Each `tenants` entry's streams by kind (part of `streams`); none when all are the top level's. */
  tenants: Record<Kind, number>[];
  destinations: number;
}

export interface BillLine {
  id: string;
  label: string;
  /** How many, in `unit`, a month. */
  quantity: number;
  unit: string;
  usd: number;
  /** What the quantity is made of, in a few words. */
  detail: string;
}

export interface Bill {
  intervalS: Record<Kind, number>;
  lines: BillLine[];
  total: number;
  /** Upstream requests a second the schedule uses, against the paced tiers. */
  rate: { basic: number; basicLimit: number; search: number; searchLimit: number };
}

const GB = 1024 ** 3;

/**
 * The share of the month's hours in which something that finds `perDay` items a day, visited every
 * `intervalS`, has a metric: each item in an hour of its own (the header's assumption, an upper
 * bound), at most one hour a visit, at most every hour.
 */
export function itemHours(perDay: number, intervalS: number): number {
  return Math.min(perDay, 24, 86_400 / intervalS) / 24;
}

/** The intervals the streams need: the stack's, or longer where the rate cannot visit them all. */
export function schedule(m: Measured, stack: StackShape, d: Deployment): Record<Kind, number> {
  const itemsPerS = (k: Kind) => (d.streams[k] * ITEMS_PER_STREAM_PER_DAY) / 86_400;
  const searchLimit = PACE_SHARE * SEARCH_PER_S;
  const basicLimit = PACE_SHARE * BASIC_PER_S;
  const c = m.kinds.credentials;
  const searchItems = itemsPerS('credentials') * c.item.upstream;
  const perVisitC = d.streams.credentials * c.visit.upstream;
  let credentialsS = stack.intervalS.credentials;
  if (perVisitC > 0 && perVisitC / credentialsS + searchItems > searchLimit)
    credentialsS = Math.ceil(perVisitC / (searchLimit - searchItems) / 3600) * 3600;
  const e = m.kinds.events;
  const basicLeft =
    basicLimit - (perVisitC / credentialsS + searchItems) - itemsPerS('events') * e.item.upstream;
  const perVisitE = d.streams.events * e.visit.upstream;
  let eventsS = stack.intervalS.events;
  if (perVisitE > 0 && perVisitE / eventsS > basicLeft) eventsS = Math.ceil(perVisitE / basicLeft / 60) * 60;
  return { events: eventsS, credentials: credentialsS };
}

/** The month's bill of `d` (see the header). */
export function bill(m: Measured, stack: StackShape, d: Deployment): Bill {
  const intervalS = schedule(m, stack, d);
  const lines: BillLine[] = [];
  const add = (id: string, label: string, quantity: number, unit: string, usd: number, detail: string) =>
    lines.push({ id, label, quantity, unit, usd, detail });
  const use = Object.fromEntries(
    COST_KINDS.map((k) => {
      const km = m.kinds[k];
      const runs = MONTH_S / intervalS[k];
      const visits = d.streams[k] * runs;
      const items = d.streams[k] * ITEMS_PER_STREAM_PER_DAY * (MONTH_HOURS / 24);
      return [
        k,
        { km, runs, visits, items, requests: visits * km.visit.upstream + items * km.item.upstream },
      ];
    }),
  ) as Record<Kind, { km: KindMeasure; runs: number; visits: number; items: number; requests: number }>;
  const searchPerS = use.credentials.requests / MONTH_S;
  const basicPerS = searchPerS + use.events.requests / MONTH_S;
  // What each kind's requests are paced at: the search tier, or what the searches leave of the basic.
  const paced: Record<Kind, number> = {
    credentials: PACE_SHARE * SEARCH_PER_S,
    events: Math.max(0.1, PACE_SHARE * BASIC_PER_S - searchPerS),
  };
  let invocations = 0;
  let gbSeconds = 0;
  let readUnits = 0;
  let writeUnits = 0;
  let sqsRequests = 0;
  let logBytes = 0;
  let traces = 0;
  let dispatches = 0;
  let metrics = 0;
  for (const k of COST_KINDS) {
    const { km, runs, visits, items, requests } = use[k];
    const streams = d.streams[k];
    // Workers: their own time, or the rate's time for all of them, whichever is longer.
    const workS = (visits * km.visit.lambdaMs + items * km.item.lambdaMs) / 1000;
    const workerS = Math.max(workS, (stack.concurrency[k] * requests) / paced[k]);
    gbSeconds += (workerS * stack.workerMemoryMb[k]) / 1024;
    invocations += visits + runs;
    dispatches += runs;
    // Dispatcher: its reads and its SQS batches.
    const batches = Math.ceil(streams / 10);
    const dispatchS = (streams * km.dispatch.msPerStream + batches * SQS_SEND_MS) / 1000;
    gbSeconds += (runs * dispatchS * stack.dispatcherMemoryMb[k]) / 1024;
    readUnits +=
      visits * km.visit.readUnits +
      items * km.item.readUnits +
      runs * streams * km.dispatch.readUnitsPerStream;
    writeUnits += visits * km.visit.writeUnits + items * km.item.writeUnits;
    sqsRequests += runs * batches + 2 * visits + ESM_POLLERS * (MONTH_S / LONG_POLL_S);
    logBytes +=
      visits * (km.visit.logBytes + PLATFORM_LOG_BYTES) +
      items * km.item.logBytes +
      runs * (streams * km.dispatch.logBytesPerStream + PLATFORM_LOG_BYTES);
    // X-Ray: a worker is busy workerS / concurrency seconds of the month; a dispatch is one trace.
    const busyS = Math.min(MONTH_S, workerS / stack.concurrency[k]);
    if (stack.tracing) traces += Math.min(visits, busyS + 0.05 * Math.max(0, visits - busyS)) + runs;
    // Metric-months (the header): per stream, those of an idle visit every hour and the rest in the
    // hours it finds items; per service every hour; per destination in the hours it delivers; per
    // tenant in the hours its streams find items.
    const itemShare = itemHours(ITEMS_PER_STREAM_PER_DAY, intervalS[k]);
    const deliveringHours = 1 - Math.exp(-items / MONTH_HOURS);
    const tenantHours = d.tenants.reduce(
      (n, entry) => n + itemHours(ITEMS_PER_STREAM_PER_DAY * entry[k], intervalS[k]),
      0,
    );
    metrics +=
      streams * (km.idleStreamMetrics + km.streamMetricsPerItem * itemShare) +
      km.serviceMetrics +
      d.destinations * km.destinationMetrics * deliveringHours +
      tenantHours;
  }
  const p = PRICES;
  add(
    'lambda',
    'Lambda (arm64)',
    gbSeconds,
    'GB-s',
    invocations * p.lambda.perRequest + gbSeconds * p.lambda.perGbSecond,
    `${fmt(invocations)} invocations`,
  );
  add(
    'dynamodb',
    'DynamoDB on demand',
    readUnits + writeUnits,
    'request units',
    readUnits * p.dynamodb.perReadUnit + writeUnits * p.dynamodb.perWriteUnit,
    `${fmt(writeUnits)} write units, ${fmt(readUnits)} read units`,
  );
  add(
    'sqs',
    'SQS',
    sqsRequests,
    'requests',
    sqsRequests * p.sqs.perRequest,
    'sends, receives, deletes, idle polls',
  );
  const secretCalls =
    (stack.concurrency.events + stack.concurrency.credentials + stack.otherSecretReaders) *
    COLD_STARTS_PER_HOUR *
    MONTH_HOURS;
  add(
    'secrets',
    'Secrets Manager',
    secretCalls,
    'calls',
    stack.secrets * p.secretsManager.perSecretMonth + secretCalls * p.secretsManager.perCall,
    `${stack.secrets} secret, GetSecretValue at cold starts`,
  );
  add(
    'metrics',
    'CloudWatch custom metrics',
    metrics,
    'metric-months',
    tiered(metrics, p.cloudwatch.metricTiers),
    'EMF, by the hours each gets data',
  );
  add('alarms', 'CloudWatch alarms', stack.alarms, 'alarms', stack.alarms * p.cloudwatch.perAlarm, '');
  add(
    'dashboards',
    'CloudWatch dashboards',
    stack.dashboards,
    stack.dashboards === 1 ? 'dashboard' : 'dashboards',
    stack.dashboards * p.cloudwatch.perDashboard,
    '',
  );
  const logGb = logBytes / GB;
  const storedShare = Math.min(1, stack.logRetentionDays / (MONTH_HOURS / 24));
  add(
    'logs',
    'CloudWatch Logs',
    logGb,
    'GB',
    logGb * p.cloudwatch.logsPerGbIngested + logGb * storedShare * p.cloudwatch.logsPerGbMonth,
    `ingested, kept ${stack.logRetentionDays} days`,
  );
  add('xray', 'X-Ray traces', traces, 'traces', traces * p.xray.perTrace, 'active tracing, sampled');
  add(
    'scheduler',
    'EventBridge Scheduler',
    dispatches,
    'invocations',
    dispatches * p.scheduler.perInvocation,
    'one per dispatch',
  );
  const streamsAll = d.streams.events + d.streams.credentials;
  const itemsKept = streamsAll * ITEMS_PER_STREAM_PER_DAY * ITEM_DAYS_KEPT;
  const storedGb = (streamsAll * m.storage.bytesPerStream + itemsKept * m.storage.bytesPerItem) / GB;
  add(
    'storage',
    'DynamoDB storage',
    storedGb,
    'GB',
    storedGb * (p.dynamodb.perGbMonth + (stack.pitr ? p.dynamodb.pitrPerGbMonth : 0)),
    stack.pitr ? 'with point-in-time recovery' : '',
  );
  return {
    intervalS,
    lines,
    total: lines.reduce((n, l) => n + l.usd, 0),
    rate: {
      basic: basicPerS,
      basicLimit: PACE_SHARE * BASIC_PER_S,
      search: searchPerS,
      searchLimit: PACE_SHARE * SEARCH_PER_S,
    },
  };
}

/** A count for a note: 1,234,567 or 1.2M. */
export function fmt(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n < 10 && !Number.isInteger(n)) return n.toPrecision(2);
  return Math.round(n).toLocaleString('en-US');
}

/** A tenant of 40 streams, in the bench world's mix: its tenant stream and 9 groups, 30 domains. */
export const TENANT_STREAMS: Record<Kind, number> = { events: 10, credentials: 30 };

/** `tenants` tenants of 40 streams: one is the top level's; more are each a `tenants` entry. */
export function tenantsDeployment(tenants: number, destinations: number): Deployment {
  return {
    streams: { events: TENANT_STREAMS.events * tenants, credentials: TENANT_STREAMS.credentials * tenants },
    tenants: tenants > 1 ? Array.from({ length: tenants }, () => TENANT_STREAMS) : [],
    destinations,
  };
}

/** `every minute`, `every 7 min`, `every hour`, `every 2 h`. */
export function every(seconds: number): string {
  if (seconds === 60) return 'every minute';
  if (seconds === 3600) return 'every hour';
  return seconds % 3600 === 0 ? `every ${seconds / 3600} h` : `every ${Math.round(seconds / 60)} min`;
}
