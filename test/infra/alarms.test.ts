/**
 * No alarm of the stack watches a metric nobody emits. The workers run for real (functions/
 * worker.ts, both kinds, against the emulator and dynalite, a destination that accepts and one that
 * refuses for good) with an EMF writer that keeps their metric lines; every alarm on the product's
 * namespace must name a (metric, dimensions) pair those lines publish, exactly, since CloudWatch
 * matches an alarm's dimensions exactly. Alarms on AWS's own metrics must name a function or queue
 * of the stack. And the quota alarm's threshold is the alert config's `upstream.quotaReserve`: the
 * metric the workers emit when polling pauses is below it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { METRICS_NAMESPACE } from '../../lib/metrics.ts';
import { QuotaStore } from '../../lib/state/quota.ts';
import {
  context,
  everyPathConfig,
  lambdaVariables,
  sqsRecord,
  withEnvironment,
} from '../functions/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { useReceivers } from '../helpers/receiver.ts';
import { logicalId, template } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 10, credentials: 25 });
const db = useDynalite();
const receiver = useReceivers();

/** The quota reserve of the config below, not the default, so the alarm cannot match by chance. */
const QUOTA_RESERVE = 40;

interface Published {
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
}
const key = (p: Published) =>
  JSON.stringify([p.namespace, p.name, Object.entries(p.dimensions).sort(([a], [b]) => a.localeCompare(b))]);

/** Every (namespace, metric, dimension set) an EMF line publishes, with its value. */
function published(lines: string[]): (Published & { value: number })[] {
  return lines.flatMap((line) => {
    const body = JSON.parse(line) as Record<string, unknown> & {
      _aws: {
        CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
      };
    };
    return body._aws.CloudWatchMetrics.flatMap((directive) =>
      directive.Dimensions.flatMap((set) =>
        directive.Metrics.map((m) => ({
          namespace: directive.Namespace,
          name: m.Name,
          dimensions: Object.fromEntries(set.map((d) => [d, String(body[d])])),
          value: Number(body[m.Name]),
        })),
      ),
    );
  });
}

interface AlarmProps {
  AlarmName: string;
  Namespace: string;
  MetricName: string;
  Dimensions?: { Name: string; Value: unknown }[];
  Threshold: number;
}

let lines: string[];
let alarms: AlarmProps[];
let t: ReturnType<typeof template>;
let vars: Record<string, string>;

beforeAll(async () => {
  const accepting = await receiver({ status: 200, body: 'ok' });
  const refusing = await receiver({ status: 400, body: 'no such hook' });
  vars = await lambdaVariables({
    apiUrl: emu.url,
    dynamodbEndpoint: db.endpoint,
    table: await db.table(),
    config: everyPathConfig(accepting.url, refusing.url, {
      requestsPerSecond: 100,
      searchRequestsPerSecond: 50,
      quotaReserve: QUOTA_RESERVE,
    }),
  });
  // The stack synthesized from the very config the workers run with.
  t = template({ alertsConfig: vars.ALERTS_CONFIG });
  alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm')).map(
    (a) => (a as { Properties: AlarmProps }).Properties,
  );
  lines = [];
  await withEnvironment(vars, async () => {
    const kinds = [
      ['events', ['tenant', 'group:101']],
      ['credentials', ['credentials:acme.test']],
    ] as const;
    const handlers = await Promise.all(
      kinds.map(([kind]) => createWorkerHandler(kind, { emfWrite: (line) => lines.push(line) })),
    );
    // Twice: the first walk reads its lookback; the second follows the feed, where the poll lag
    // is measured (poll/walk.ts), after new events and credentials came.
    for (const round of [1, 2]) {
      if (round === 2) {
        emu.running.emulator.dataset.appendEvents(1001, 2);
        emu.running.emulator.dataset.appendCredentials(2, { domain: 'acme.test' });
      }
      for (const [i, [kind, streams]] of kinds.entries()) {
        const records = streams.map((stream) => sqsRecord({ kind, stream }));
        expect(await handlers[i]?.({ Records: records }, context())).toEqual({ batchItemFailures: [] });
      }
    }
  });
}, 120_000);

describe('alarms watch what the code emits', () => {
  it('the workers published something of each kind (the run below is not empty)', () => {
    const services = new Set(published(lines).map((p) => p.dimensions.service));
    expect([...services].sort()).toEqual(['poll-credentials', 'poll-events']);
  });

  it('every alarm on the ExposureAlerts namespace names a metric and dimension set the workers publish', () => {
    const emitted = new Set(published(lines).map(key));
    const product = alarms.filter((a) => a.Namespace === METRICS_NAMESPACE);
    expect(product.length).toBe(5);
    for (const alarm of product) {
      const watched: Published = {
        namespace: alarm.Namespace,
        name: alarm.MetricName,
        dimensions: Object.fromEntries((alarm.Dimensions ?? []).map((d) => [d.Name, String(d.Value)])),
      };
      expect(
        emitted.has(key(watched)),
        `${alarm.AlarmName} watches ${key(watched)}, which nothing published`,
      ).toBe(true);
    }
  });

  it('every other alarm is on AWS/Lambda or AWS/SQS, about a function or queue of this stack', () => {
    const functions = Object.keys(t.findResources('AWS::Lambda::Function'));
    const queues = Object.keys(t.findResources('AWS::SQS::Queue'));
    const others = alarms.filter((a) => a.Namespace !== METRICS_NAMESPACE);
    expect(others.length).toBe(14);
    for (const alarm of others) {
      expect(alarm.Dimensions).toHaveLength(1);
      const dimension = alarm.Dimensions?.[0] as { Name: string; Value: unknown };
      if (alarm.Namespace === 'AWS/Lambda') {
        expect(['Errors', 'Throttles']).toContain(alarm.MetricName);
        expect(dimension.Name).toBe('FunctionName');
        expect(functions).toContain((dimension.Value as { Ref: string }).Ref);
      } else {
        expect(alarm.Namespace).toBe('AWS/SQS');
        expect(['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage']).toContain(
          alarm.MetricName,
        );
        expect(dimension.Name).toBe('QueueName');
        const [queue, attribute] = (dimension.Value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
        expect(queues).toContain(queue);
        expect(attribute).toBe('QueueName');
      }
    }
    // Each function has both, each dead-letter queue its depth, each stream queue its backlog.
    for (const fn of functions)
      for (const metric of ['Errors', 'Throttles'])
        expect(
          others.filter((a) => a.MetricName === metric && JSON.stringify(a.Dimensions).includes(fn)),
        ).toHaveLength(1);
    for (const [label, metric] of [
      ['EventsDeadLetterQueue', 'ApproximateNumberOfMessagesVisible'],
      ['CredentialsDeadLetterQueue', 'ApproximateNumberOfMessagesVisible'],
      ['EventsStreamQueue', 'ApproximateAgeOfOldestMessage'],
      ['CredentialsStreamQueue', 'ApproximateAgeOfOldestMessage'],
    ]) {
      const queue = logicalId(t, 'AWS::SQS::Queue', label as string);
      expect(
        others.filter((a) => a.MetricName === metric && JSON.stringify(a.Dimensions).includes(queue)),
      ).toHaveLength(1);
    }
  });

  it('the quota alarm fires at upstream.quotaReserve: what a paused worker publishes is below its threshold', async () => {
    const quota = alarms.filter((a) => a.MetricName === 'GlobalSearchQuotaRemaining');
    expect(quota.map((a) => a.Threshold)).toEqual([QUOTA_RESERVE]);
    // One search fewer than the reserve left, as the last reading says: the worker pauses.
    await new QuotaStore(db.client, vars.TABLE_NAME as string).write({
      remaining: QUOTA_RESERVE - 1,
      at: new Date().toISOString(),
    });
    const paused: string[] = [];
    await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('credentials', { emfWrite: (line) => paused.push(line) });
      const record = sqsRecord(
        { kind: 'credentials', stream: 'credentials:acme.test' },
        { sentAt: Date.now() + 1 },
      );
      expect(await handler({ Records: [record] }, context())).toEqual({ batchItemFailures: [] });
    });
    const readings = published(paused).filter(
      (p) => p.name === 'GlobalSearchQuotaRemaining' && Object.keys(p.dimensions).length === 1,
    );
    expect(readings.map((p) => [p.dimensions.service, p.value])).toEqual([
      ['poll-credentials', QUOTA_RESERVE - 1],
    ]);
    // The alarm compares LessThanThreshold: this value breaches it, the reserve itself would not.
    expect(QUOTA_RESERVE - 1).toBeLessThan(quota[0]?.Threshold as number);
  }, 60_000);
});
