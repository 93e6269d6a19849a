/**
 * Metrics in CloudWatch Embedded Metric Format: one JSON line per dimension set on flush, which
 * Lambda's log pipeline turns into metrics without an API call. A few lines of our own instead of
 * a library: the format is small and the bundles stay small. Nothing is a metric until flushed:
 * every Lambda function flushes after each invocation (lib/invocation.ts).
 *
 * Names used across the product (the CDK alarms refer to them): ItemsFetched, NewItems,
 * DeliveriesSent, DeliveriesFailed, DeliveriesDead, QuarantinedItems, PollLagSeconds,
 * GlobalSearchQuotaRemaining, DestinationRefused, SlackRequestsRejected. Every metric carries the
 * `service` dimension (the function's name); some also `stream`, `destination` or `route`.
 */

export type MetricUnit = 'Count' | 'Seconds' | 'Milliseconds' | 'None';

export interface Metrics {
  /** Adds to a counter. */
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
  /** Records a value (the last one in a flush wins). */
  gauge(name: string, value: number, unit?: MetricUnit, dimensions?: Record<string, string>): void;
  flush(): void;
}

export const METRICS_NAMESPACE = 'ExposureAlerts';

/**
 * Adds to a per-stream counter, with the `stream` dimension only when there is something to count.
 * CloudWatch bills a custom metric for each hour it receives data: sent at every visit, a stream's
 * own `ItemsFetched` and `NewItems` were two metrics a stream all month long, two thirds of a
 * 400-stream deployment's bill (docs/deploy.md, What it costs); sent in the hours a stream finds
 * something, they cost those hours. The service-wide figure (the one the alarms read) still gets a
 * value at every visit, zero included.
 */
export function countForStream(metrics: Metrics, name: string, value: number, stream: string): void {
  metrics.count(name, value, value > 0 ? { stream } : undefined);
}

interface Entry {
  dimensions: Record<string, string>;
  values: Map<string, { value: number; unit: MetricUnit; gauge: boolean }>;
}

/**
 * CloudWatch takes dimension values of printable ASCII, at most 1,024 characters; anything else
 * makes it drop the metric. A destination may be named `équipe sécurité`, so its value is written
 * with `\u` escapes for what is not ASCII, and cut to fit.
 */
export function dimensionValues(dimensions: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(dimensions)) {
    const ascii = value.replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    out[key] = (ascii.trim() === '' ? '-' : ascii).slice(0, 1_024);
  }
  return out;
}

export class EmfMetrics implements Metrics {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly options: {
      namespace?: string;
      service: string;
      write?: (line: string) => void;
      now?: () => number;
    },
  ) {}

  private entry(dimensions: Record<string, string> = {}): Entry {
    const dims = { service: this.options.service, ...dimensionValues(dimensions) };
    const key = JSON.stringify(Object.entries(dims).sort());
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { dimensions: dims, values: new Map() };
      this.entries.set(key, entry);
    }
    return entry;
  }

  count(name: string, value = 1, dimensions?: Record<string, string>): void {
    const values = this.entry(dimensions).values;
    const current = values.get(name);
    values.set(name, { value: (current?.value ?? 0) + value, unit: 'Count', gauge: false });
  }

  gauge(name: string, value: number, unit: MetricUnit = 'None', dimensions?: Record<string, string>): void {
    this.entry(dimensions).values.set(name, { value, unit, gauge: true });
  }

  flush(): void {
    const write = this.options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
    const timestamp = (this.options.now ?? Date.now)();
    for (const entry of this.entries.values()) {
      if (entry.values.size === 0) continue;
      const body: Record<string, unknown> = {
        _aws: {
          Timestamp: timestamp,
          CloudWatchMetrics: [
            {
              Namespace: this.options.namespace ?? METRICS_NAMESPACE,
              // Each metric is published per service, and also per stream/destination when given,
              // so alarms can watch the service-wide figure without metric math.
              Dimensions:
                Object.keys(entry.dimensions).length > 1
                  ? [['service'], Object.keys(entry.dimensions)]
                  : [['service']],
              Metrics: [...entry.values].map(([name, v]) => ({ Name: name, Unit: v.unit })),
            },
          ],
        },
        ...entry.dimensions,
      };
      for (const [name, v] of entry.values) body[name] = v.value;
      write(JSON.stringify(body));
    }
    this.entries = new Map();
  }
}

/** Keeps totals in memory: for tests, and for local runs that print a summary instead. */
export class MemoryMetrics implements Metrics {
  readonly totals = new Map<string, number>();
  count(name: string, value = 1): void {
    this.totals.set(name, (this.totals.get(name) ?? 0) + value);
  }
  gauge(name: string, value: number): void {
    this.totals.set(name, value);
  }
  flush(): void {}
  get(name: string): number {
    return this.totals.get(name) ?? 0;
  }
}
