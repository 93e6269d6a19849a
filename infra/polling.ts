/**
 * Polling of one kind (events or credentials): an EventBridge Scheduler schedule invokes a small
 * dispatcher, which enqueues one message per stream on the kind's stream queue, least recently
 * polled first; an SQS event source runs the worker on them, one stream per invocation, at most
 * `pollerConcurrency` at once. The stream leases keep two workers off one stream, the destination
 * leases keep one delivery pass per destination at a time, and the shared rate governor keeps all
 * of them together within the upstream's rate. Whatever fails for good (a schedule that could not
 * invoke, a dispatch that failed, a stream that failed three times in a row) ends in the kind's
 * dead-letter queue.
 *
 * Its resources are the stack's own children, as they always were, so their logical ids (and the
 * deployed queues and functions) stay what they are.
 */
import { Duration, type Stack, Validations } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { addBacklogAlarm, addDeadLetterAlarm } from './alarms.ts';
import { CONFIG_PATH_IN_LAMBDA } from './alerts-config.ts';
import { AlertsFunction, DISPATCHER_MEMORY_MB, POLLER_MEMORY_MB } from './function.ts';
import { type GrantTargets, grantDispatcherAccess, grantWorkerAccess } from './permissions.ts';
import { LABELS, type PollerKind, pollerTiming, queueTiming, scheduleDispatch } from './schedule.ts';
import type { Settings } from './settings.ts';

/** What every kind's polling shares: the settings, the functions' environment and config layer, the alarms' action. */
export interface PollingProps {
  settings: Settings;
  logRetention: RetentionDays;
  upstreamEnvironment: Record<string, string>;
  /** IDENTITY_SECRET_ID of the workers (never of a dispatcher or the API), with identity providers. */
  identitySecretId?: string;
  configLayer: ILayerVersion;
  alarmAction: IAlarmAction;
  grants: GrantTargets;
}

export interface Polling {
  dispatcher: AlertsFunction;
  worker: AlertsFunction;
  streamQueue: Queue;
  deadLetters: Queue;
}

/** The schedule, dispatcher, stream queue, worker and dead-letter queue of `kind`, with their alarms. */
export function addPolling(
  stack: Stack,
  kind: PollerKind,
  intervalSeconds: number,
  props: PollingProps,
): Polling {
  const { settings, logRetention, upstreamEnvironment, configLayer, alarmAction, grants } = props;
  const timing = pollerTiming(intervalSeconds);
  const queueing = queueTiming(intervalSeconds);
  const label = LABELS[kind];
  const deadLetters = new Queue(stack, `${label}DeadLetterQueue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  // (AwsSolutions-SQS3 sees it is the stream queue's dead-letter queue; the Serverless pack does not.)
  Validations.of(deadLetters).acknowledge({
    id: 'Serverless::Serverless-SQSRedrivePolicy',
    reason: `This queue is itself the dead-letter queue of the ${kind} schedule, of the dispatch-${kind} asynchronous invocations and of the ${kind} stream queue; nothing consumes it, so it needs no redrive of its own.`,
  });
  const streamQueue = new Queue(stack, `${label}StreamQueue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: queueing.visibilityTimeout,
    retentionPeriod: queueing.retention,
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: queueing.maxReceiveCount },
  });

  const worker = new AlertsFunction(stack, `${label}Worker`, {
    name: `work-${kind}`,
    description:
      kind === 'events'
        ? 'exposure-alerts: polls the event streams (tenant, identifier groups) of its messages, then a delivery pass'
        : 'exposure-alerts: polls the credential domains of its messages, then a delivery pass',
    timeout: timing.timeout,
    // 512 MB gets a faster CPU share and a shorter cold start for a few cents more, on a
    // function that runs often.
    memorySize: POLLER_MEMORY_MB,
    logRetention,
    sourceMapTraces: settings.sourceMapTraces,
    environment: {
      ...upstreamEnvironment,
      ...(props.identitySecretId ? { IDENTITY_SECRET_ID: props.identitySecretId } : {}),
      ALERTS_CONFIG: CONFIG_PATH_IN_LAMBDA,
    },
    layers: [configLayer],
    // None by default: the event source's maximum concurrency bounds the workers, and
    // settings.ts refuses a reservation below it.
    reservedConcurrency: settings.pollerReservedConcurrency,
    queued: true,
    alarms: { action: alarmAction, errors: timing.failures, throttles: timing.failures },
  });
  grantWorkerAccess(worker, grants, streamQueue);
  // Not SqsEventSource: it would also grant ChangeMessageVisibility and GetQueueUrl, which the
  // event source does not use (grantWorkerAccess grants what it does).
  const source = worker.function.addEventSourceMapping('StreamQueue', {
    eventSourceArn: streamQueue.queueArn,
    // One stream per invocation: with ten, one worker could take a whole dispatch batch and
    // walk it alone while the others idle.
    batchSize: 1,
    maxConcurrency: settings.pollerConcurrency,
    reportBatchItemFailures: true,
  });
  Validations.of(source).acknowledge({
    id: 'Serverless::Serverless-LambdaEventSourceMappingDestination',
    reason:
      'An SQS event source takes no on-failure destination (Lambda offers one for stream and Kafka sources): a failed message stays on the queue, and the queue redrives it to the dead-letter queue after its maxReceiveCount, which the dead-letters alarm watches.',
  });

  const dispatcher = new AlertsFunction(stack, `${label}Dispatcher`, {
    name: `dispatch-${kind}`,
    description: `exposure-alerts: enqueues one message per ${kind} stream, least recently polled first, for work-${kind}`,
    // One read and a few sends, plus a cold start's secret read; well within any interval.
    timeout: Duration.seconds(30),
    memorySize: DISPATCHER_MEMORY_MB,
    logRetention,
    sourceMapTraces: settings.sourceMapTraces,
    environment: {
      ...upstreamEnvironment,
      ALERTS_CONFIG: CONFIG_PATH_IN_LAMBDA,
      STREAM_QUEUE_URL: streamQueue.queueUrl,
    },
    layers: [configLayer],
    async: { maxEventAge: timing.maxEventAge, failureQueue: deadLetters },
    alarms: { action: alarmAction, errors: timing.failures, throttles: timing.failures },
  });
  grantDispatcherAccess(dispatcher, grants, streamQueue);
  scheduleDispatch(stack, kind, dispatcher.function, deadLetters, intervalSeconds);
  addDeadLetterAlarm(stack, kind, deadLetters, alarmAction);
  addBacklogAlarm(stack, kind, streamQueue, intervalSeconds, alarmAction);
  return { dispatcher, worker, streamQueue, deadLetters };
}
