/**
 * The stack's alarms beyond each function's own errors and throttles (infra/function.ts):
 * dead-letter queue depth, the stream queues' backlog, and the product's EMF metrics (namespace
 * ExposureAlerts, dimension `service`: the workers emit `poll-events` and `poll-credentials`):
 * dead deliveries, poll lag, the global-search quota, and (with identity providers in the config)
 * a provider refusing our credentials. All notify one SNS topic, on alarm and on recovery.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarmAction,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../lib/metrics.ts';
import { LABELS, MAX_RECEIVES, type PollerKind, pollerTiming, queueTiming } from './schedule.ts';
import type { Settings } from './settings.ts';

interface AlarmSpec {
  /** Appended to the stack name: the alarm's name, as it shows in the notification. */
  name: string;
  description: string;
  metric: Metric;
  threshold: number;
  comparison: ComparisonOperator;
}

function addAlarm(scope: Construct, id: string, spec: AlarmSpec, action: IAlarmAction): Alarm {
  const alarm = new Alarm(scope, id, {
    alarmName: `${Stack.of(scope).stackName}-${spec.name}`,
    alarmDescription: spec.description,
    metric: spec.metric,
    threshold: spec.threshold,
    evaluationPeriods: 1,
    comparisonOperator: spec.comparison,
    // These metrics exist only when there is something to report (a message, a dead delivery,
    // new items): no data is the good case.
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}

/**
 * Any message in a kind's dead-letter queue: a scheduled dispatch that could not be invoked or that
 * failed, or a stream whose poll failed MAX_RECEIVES times in a row.
 */
export function addDeadLetterAlarm(
  scope: Construct,
  kind: PollerKind,
  queue: Queue,
  action: IAlarmAction,
): Alarm {
  return addAlarm(
    scope,
    `${LABELS[kind]}DeadLetterAlarm`,
    {
      name: `poll-${kind}-dead-letters`,
      description: `poll-${kind}: a scheduled dispatch could not be delivered or failed, or a stream failed ${MAX_RECEIVES} times in a row; read the messages in the dead-letter queue, then purge it`,
      metric: queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    },
    action,
  );
}

/**
 * A stream message has waited longer than a message whose stream keeps failing can wait for its
 * retries (schedule.ts queueTiming): the workers are not keeping up with the dispatches.
 */
export function addBacklogAlarm(
  scope: Construct,
  kind: PollerKind,
  queue: Queue,
  intervalSeconds: number,
  action: IAlarmAction,
): Alarm {
  const seconds = queueTiming(intervalSeconds).backlogAlarmSeconds;
  return addAlarm(
    scope,
    `${LABELS[kind]}BacklogAlarm`,
    {
      name: `poll-${kind}-backlog`,
      description: `poll-${kind}: a stream message has waited more than ${seconds} s for a worker; the workers are behind the dispatches. Raise pollerConcurrency if the shared rate has room (README, Sizing the fan-out)`,
      metric: queue.metricApproximateAgeOfOldestMessage({
        period: pollerTiming(intervalSeconds).period,
        statistic: 'Maximum',
      }),
      threshold: seconds,
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
    },
    action,
  );
}

/**
 * The quota alarm's threshold: `quotaAlarmThreshold` when set, else the alert config's
 * `upstream.quotaReserve`, so the alarm fires exactly when credential polling pauses.
 */
export function quotaAlarmThreshold(settings: Pick<Settings, 'quotaAlarmThreshold'>, quotaReserve: number) {
  return settings.quotaAlarmThreshold ?? quotaReserve;
}

const emf = (name: string, service: string, statistic: string, period: Duration) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service },
    statistic,
    period,
  });

/** Dead deliveries and poll lag of each kind, and the global-search quota (below `quotaThreshold`). */
export function addMetricAlarms(
  scope: Construct,
  settings: Settings,
  quotaThreshold: number,
  action: IAlarmAction,
): void {
  const pollers: [PollerKind, number, number][] = [
    ['events', settings.eventsIntervalSeconds, settings.eventsLagAlarmSeconds],
    ['credentials', settings.credentialsIntervalSeconds, settings.credentialsLagAlarmSeconds],
  ];
  for (const [kind, interval, lagSeconds] of pollers) {
    const service = `poll-${kind}`;
    const period = pollerTiming(interval).period;
    addAlarm(
      scope,
      `${LABELS[kind]}DeadDeliveriesAlarm`,
      {
        name: `${service}-dead-deliveries`,
        description: `${service}: deliveries were marked dead (refused for good or out of attempts); see \`exposure-alerts deliveries list --status dead\``,
        metric: emf('DeliveriesDead', service, 'Sum', period),
        threshold: 1,
        comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      },
      action,
    );
    addAlarm(
      scope,
      `${LABELS[kind]}PollLagAlarm`,
      {
        name: `${service}-poll-lag`,
        description: `${service}: the newest item fetched is more than ${lagSeconds} s old; the poller is falling behind`,
        metric: emf('PollLagSeconds', service, 'Maximum', period),
        threshold: lagSeconds,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
      action,
    );
  }
  addAlarm(
    scope,
    'QuotaAlarm',
    {
      name: 'global-search-quota-low',
      description: `poll-credentials: fewer than ${quotaThreshold} global searches remain this month${settings.quotaAlarmThreshold === undefined ? ' (upstream.quotaReserve): credential polling is paused' : ''}`,
      metric: emf(
        'GlobalSearchQuotaRemaining',
        'poll-credentials',
        'Minimum',
        pollerTiming(settings.credentialsIntervalSeconds).period,
      ),
      threshold: quotaThreshold,
      comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
    },
    action,
  );
}

/**
 * An identity provider refuses our credentials (a wrong or expired secret, a permission taken
 * away): its logins get the verdict `unknown` until it accepts them again, so routes on `at_risk`
 * stay quiet. The credentials worker counts it (IdentityProviderRefused) at each refused lookup and
 * reports it once to `ops`; the alarm holds while it lasts and recovers when it stops.
 */
export function addIdentityAlarm(scope: Construct, settings: Settings, action: IAlarmAction): Alarm {
  return addAlarm(
    scope,
    'IdentityRefusedAlarm',
    {
      name: 'identity-provider-refused',
      description:
        'poll-credentials: an identity provider refuses our credentials; its logins get the verdict unknown. `exposure-alerts status` names it and what it answered; fix its secret or permissions, then `exposure-alerts identity test <provider>`',
      metric: emf(
        'IdentityProviderRefused',
        'poll-credentials',
        'Sum',
        pollerTiming(settings.credentialsIntervalSeconds).period,
      ),
      threshold: 1,
      comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    },
    action,
  );
}
