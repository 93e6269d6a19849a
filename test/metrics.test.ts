/** EMF output: what CloudWatch needs to turn a log line into metrics, per service and per stream. */
import { describe, expect, it } from 'vitest';
import { countForStream, EmfMetrics } from '../lib/metrics.ts';

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

  it('a stream gets a metric of its own only for what it counted; the service-wide one every time', () => {
    const lines: string[] = [];
    const metrics = new EmfMetrics({ service: 'poll-credentials', write: (l) => lines.push(l) });
    // Three visits: two find nothing, one finds 4 items of which 1 is new.
    countForStream(metrics, 'ItemsFetched', 0, 'credentials:a.test');
    countForStream(metrics, 'NewItems', 0, 'credentials:a.test');
    countForStream(metrics, 'ItemsFetched', 4, 'credentials:b.test');
    countForStream(metrics, 'NewItems', 1, 'credentials:b.test');
    countForStream(metrics, 'ItemsFetched', 0, 'credentials:c.test');
    metrics.flush();
    const parsed = lines.map((l) => JSON.parse(l));
    const perStream = parsed.filter((p) => 'stream' in p);
    expect(perStream.map((p) => [p.stream, p.ItemsFetched, p.NewItems])).toEqual([
      ['credentials:b.test', 4, 1],
    ]);
    const serviceWide = parsed.filter((p) => !('stream' in p));
    expect(serviceWide).toHaveLength(1);
    expect(serviceWide[0]).toMatchObject({ service: 'poll-credentials', ItemsFetched: 0, NewItems: 0 });
    expect(serviceWide[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
  });
});
