/**
 * When and how polling runs: the timing of the dispatchers, the workers and the stream queue
 * between them, derived from the schedule interval, and the EventBridge Scheduler schedule that
 * invokes each dispatcher asynchronously, with a retry policy, a maximum event age and a
 * dead-letter queue.
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

/** Poller timing (a worker's, and a dispatched run's), derived from the schedule interval (seconds). */
export function pollerTiming(intervalSeconds: number) {
  return {
    // A worker's: ends before the next dispatch; the code keeps 10 s of it back for its last writes.
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

/** How often SQS offers a stream message whose poll keeps failing before it dead-letters it. */
export const MAX_RECEIVES = 3;

/**
 * The stream queue's timing, derived from the worker's timeout.
 *
 * A failed stream's message comes back one visibility timeout later: six times the worker's
 * timeout, AWS's advice for an SQS event source, so a batch that met a throttle is retried in
 * time. A message whose stream keeps failing is thus offered MAX_RECEIVES times and reaches the
 * dead-letter queue after MAX_RECEIVES visibility timeouts (`deadLetterAfter`). Its age counts in
 * the queue's age of oldest message all that while, so the backlog alarm waits that long (and a
 * minute) before it calls a waiting message a backlog. Messages are kept twice that long: SQS
 * counts retention from the send, so a retention of one interval would expire every failed
 * message before its retries and the dead-letter queue would never see a stream that keeps
 * failing. Redundant messages that live longer (the next dispatch enqueued the stream again) cost
 * a worker one read: functions/worker.ts deletes a message whose stream was polled since it was sent.
 */
export function queueTiming(intervalSeconds: number) {
  const visibility = 6 * pollerTiming(intervalSeconds).timeout.toSeconds();
  const deadLetterAfter = MAX_RECEIVES * visibility;
  return {
    visibilityTimeout: Duration.seconds(visibility),
    maxReceiveCount: MAX_RECEIVES,
    deadLetterAfter: Duration.seconds(deadLetterAfter),
    retention: Duration.seconds(2 * deadLetterAfter),
    backlogAlarmSeconds: deadLetterAfter + 60,
  };
}

/** The schedule of one dispatcher, with a role that may invoke that function and dead-letter to its queue. */
export function scheduleDispatch(
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
    description: `EventBridge Scheduler: invoke dispatch-${kind} and dead-letter to its queue`,
  });
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
  );
  return new Schedule(scope, `${label}Schedule`, {
    description: `exposure-alerts: run dispatch-${kind}, which enqueues the ${kind} streams for the workers`,
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
