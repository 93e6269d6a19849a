/** EMF output: what CloudWatch needs to turn a log line into metrics, per service and per stream. */
import { describe, expect, it } from 'vitest';
import { EmfMetrics } from '../lib/metrics.ts';

describe('EmfMetrics', () => {
  it('writes one EMF line per dimension set, with service-wide and detailed dimensions', () => {
    const lines: string[] = [];
    const metrics = new EmfMetrics({
      service: 'poll-events',
      write: (l) => lines.push(l),
      now: () => 1_700_000_000_000,
    });
    metrics.count('NewItems', 3, { stream: 'tenant' });
    metrics.count('NewItems', 2, { stream: 'tenant' });
    metrics.count('NewItems', 1, { stream: 'group:7' });
    metrics.gauge('GlobalSearchQuotaRemaining', 250);
    metrics.flush();
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed).toHaveLength(3);
    const tenant = parsed.find((p) => p.stream === 'tenant');
    expect(tenant.NewItems).toBe(5);
    expect(tenant._aws.Timestamp).toBe(1_700_000_000_000);
    expect(tenant._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'ExposureAlerts',
      Dimensions: [['service'], ['service', 'stream']],
      Metrics: [{ Name: 'NewItems', Unit: 'Count' }],
    });
    const quota = parsed.find((p) => 'GlobalSearchQuotaRemaining' in p);
    expect(quota.service).toBe('poll-events');
    expect(quota._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
    lines.length = 0;
    metrics.flush();
    expect(lines).toEqual([]);
  });
});
