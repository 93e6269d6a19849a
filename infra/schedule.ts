/**
 * When and how the pollers run: their timing, derived from the schedule interval, and the
 * EventBridge Scheduler schedule that invokes each one asynchronously, with a retry policy, a
 * maximum event age and a dead-letter queue.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Schedule, ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

export type PollerKind = 'events' | 'credentials';

/** `Events` / `Credentials`: the prefix of the construct ids of a poller's resources. */
export const LABELS: Record<PollerKind, string> = { events: 'Events', credentials: 'Credentials' };

/** Poller timing, derived from the schedule interval (seconds). */
export function pollerTiming(intervalSeconds: number) {
  return {
    // Ends before the next run starts; the code keeps 10 s of it back for its last writes.
    timeout: Duration.seconds(Math.min(intervalSeconds - 5, 300)),
    // An invocation that could not start within half an interval is dropped: the next one is near.
    // 60 s is the least both Lambda and Scheduler accept, so a 1-minute rate gets exactly 60 s.
    maxEventAge: Duration.seconds(Math.min(Math.max(Math.floor(intervalSeconds / 2), 60), 6 * 3600)),
    // Metric alarm periods: at least one run per period, and never shorter than 5 minutes.
    period: Duration.seconds(Math.min(Math.max(intervalSeconds, 300), 86_400)),
    // Errors and throttles: a poller running more often than every 15 minutes may meet a passing
    // upstream blip, so it alarms on up to 3 failed runs in 15 minutes; a slower one on its first.
    failures:
      intervalSeconds < 900
        ? { threshold: Math.min(3, Math.floor(900 / intervalSeconds)), period: Duration.minutes(15) }
        : { threshold: 1, period: Duration.seconds(Math.min(intervalSeconds, 86_400)) },
  };
}

/** The schedule of one poller, with a role that may invoke that function and dead-letter to its queue. */
export function schedulePoller(
  scope: Construct,
  kind: PollerKind,
  fn: IFunction,
  queue: IQueue,
  intervalSeconds: number,
): Schedule {
  const label = LABELS[kind];
  // Our own role with exactly two permissions. The target would otherwise grant invoke on the
  // function and all its versions (`arn:*`); it is handed an immutable view so it adds nothing.
  const role = new Role(scope, `${label}ScheduleRole`, {
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
    }),
    description: `EventBridge Scheduler: invoke poll-${kind} and dead-letter to its queue`,
  });
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  );
  return new Schedule(scope, `${label}Schedule`, {
    description: `exposure-alerts: run poll-${kind}`,
    schedule: ScheduleExpression.rate(Duration.seconds(intervalSeconds)),
    timeWindow: TimeWindow.off(),
    target: new LambdaInvoke(fn, {
      role: role.withoutPolicyUpdates(),
      // Scheduler retries only when it cannot hand the event to Lambda (throttled, 5xx).
      retryAttempts: 3,
      maxEventAge: pollerTiming(intervalSeconds).maxEventAge,
      deadLetterQueue: queue,
    }),
  });
}
