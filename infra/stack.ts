/**
 * The whole deployment, one stack: the DynamoDB table, the secret, polling fanned out per kind
 * (events, credentials), the HTTP API behind a Function URL, the alarms with their SNS topic, and
 * a dashboard (dashboard.ts).
 * `defineApp` is what `cdk synth` runs (infra/app.ts) and what the tests run, cdk-nag included,
 * so a finding fails both the same way.
 *
 * Polling, per kind (interface.md section 7): an EventBridge Scheduler schedule invokes a small
 * dispatcher, which enqueues one message per stream on the kind's stream queue, least recently
 * polled first; an SQS event source runs the worker on them, one stream per invocation, at most
 * `pollerConcurrency` at once. The stream leases keep two workers off one stream, the destination
 * leases keep one delivery pass per destination at a time, and the shared rate governor keeps all
 * of them together within the upstream's rate. Whatever fails for good (a schedule that could not
 * invoke, a dispatch that failed, a stream that failed three times in a row) ends in the kind's
 * dead-letter queue.
 */
import {
  Annotations,
  type App,
  CfnOutput,
  Duration,
  RemovalPolicy,
  SecretValue,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import type { Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias, Architecture, Code, FunctionUrlAuthType, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { TABLE_KEYS } from '../lib/state/table.ts';
import { addBacklogAlarm, addDeadLetterAlarm, addMetricAlarms, quotaAlarmThreshold } from './alarms.ts';
import { CONFIG_PATH_IN_LAMBDA, type DeployableConfig, loadDeployableConfig } from './alerts-config.ts';
import { addDashboard } from './dashboard.ts';
import {
  AlertsFunction,
  API_MEMORY_MB,
  DISPATCHER_MEMORY_MB,
  FUNCTION_RUNTIME,
  POLLER_MEMORY_MB,
} from './function.ts';
import { LABELS, type PollerKind, pollerTiming, queueTiming, scheduleDispatch } from './schedule.ts';
import { readSettings, type Settings } from './settings.ts';

export const STACK_NAME = 'ExposureAlerts';

/**
 * DynamoDB actions of the workers: leases, cursors and the claim mark (UpdateItem), delivery
 * records, packs (PutItem, and Query to find a pack again), quarantine, the streams' last-polled
 * times (BatchGetItem), and the items of the shared rate governor and of the quota (GetItem,
 * UpdateItem).
 */
export const POLLER_TABLE_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;
/** The workers read due deliveries from the index. */
export const POLLER_INDEX_ACTIONS = ['dynamodb:Query'] as const;
/** What the event source needs of a worker's queue (what AWSLambdaSQSQueueExecutionRole allows). */
export const WORKER_QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
] as const;
/** The dispatchers read when each stream was last polled (one BatchGet per 100 streams), nothing else. */
export const DISPATCHER_TABLE_ACTIONS = ['dynamodb:BatchGetItem'] as const;
/** Partition keys of the stream items (lib/state/streams.ts), the only ones a dispatcher reads. */
export const STREAM_KEYS = 'stream#*';
/** With a heartbeat, a dispatcher writes its dispatch (lib/state/heartbeat.ts), under these keys only. */
export const DISPATCH_KEYS = 'heartbeat#*';
/** The API writes and lists its audit trail (toggles and silence changes). */
export const API_TABLE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:Query'] as const;
/**
 * The API's run-time silences (lib/state/silences.ts): made (PutItem), listed (Query), found by id
 * (GetItem) and ended (UpdateItem), in their one partition.
 */
export const API_SILENCE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;
/**
 * Acting on events (lib/actions/events.ts, POST /events/actions): the action's record (created
 * once, updated as it goes) and the flags we know of each event (read, written), the event's
 * delivery records (read: which destinations were sent it), and its follow-ups' records (created
 * once, for the pollers' delivery pass to send).
 */
export const API_ACTION_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;
/** The partition keys those touch. */
export const ACTION_KEYS = ['action#*', 'flags#*', 'dlv#*', 'fu#*'];
/**
 * Idempotency-Key records (lib/state/idempotency.ts): claimed (PutItem), read when held (GetItem),
 * completed or released after a request that changed nothing (UpdateItem). Never deleted.
 */
export const API_IDEMPOTENCY_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;
/** The partition keys of those records. */
export const IDEMPOTENCY_KEYS = ['idem#*'];
/** The partition key of the silences. */
export const SILENCE_KEY = 'silence';
/**
 * GET /status (lib/state/status.ts) reads, in batches: the catalog the pollers write, the quota
 * reading, and the state items of the streams and destinations. Read only.
 */
export const API_STATUS_ACTIONS = ['dynamodb:BatchGetItem'] as const;
export const STATUS_KEYS = ['catalog', 'quota', 'stream#*', 'dest#*'];
/** ... and counts each destination's pending and dead deliveries on the index: counts only. */
export const API_INDEX_ACTIONS = ['dynamodb:Query'] as const;
/** The API takes its turns from the shared rate governor (lib/state/governor.ts): its one item. */
export const API_GOVERNOR_ACTIONS = ['dynamodb:GetItem', 'dynamodb:UpdateItem'] as const;
/** The partition key of the shared rate governor's item. */
export const GOVERNOR_KEY = 'governor';

export interface ExposureAlertsStackProps extends StackProps {
  settings: Settings;
  alerts: DeployableConfig;
}

export class ExposureAlertsStack extends Stack {
  readonly table: Table;
  readonly secret: ISecret;
  /** The ARN to grant on: exact for a created secret or a complete ARN, `name-??????` for a name. */
  readonly secretPolicyArn: string;
  readonly alarmTopic: Topic;
  readonly dispatchers: Record<PollerKind, AlertsFunction>;
  readonly workers: Record<PollerKind, AlertsFunction>;
  readonly api: AlertsFunction;
  readonly dashboard: Dashboard;
  readonly streamQueues: Record<PollerKind, Queue>;
  readonly deadLetterQueues: Record<PollerKind, Queue>;

  constructor(scope: Construct, id: string, props: ExposureAlertsStackProps) {
    super(scope, id, props);
    const { settings, alerts } = props;
    const logRetention = settings.logRetentionDays as RetentionDays;

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_KEYS.ttlAttribute,
      // Cursors and delivery records are the exactly-once state: a teardown must not lose them.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: TABLE_KEYS.index,
      partitionKey: { name: TABLE_KEYS.indexPartitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.indexSortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    const secret = this.createSecret(settings.existingSecret, alerts.secretNames);
    this.secret = secret.secret;
    this.secretPolicyArn = secret.policyArn;

    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: 'exposure-alerts alarms',
      enforceSSL: true,
    });
    if (settings.alarmEmail) {
      this.alarmTopic.addSubscription(new EmailSubscription(settings.alarmEmail));
      Validations.of(this.alarmTopic).acknowledge({
        id: 'Serverless::Serverless-SNSRedrivePolicy',
        reason:
          'The only subscription is an e-mail address, which SNS retries by its own delivery policy. An alarm whose e-mail is lost stays visible in CloudWatch; a queue of undelivered alarm e-mails would need watching by the very alarms it holds.',
      });
    }
    const alarmAction = new SnsAction(this.alarmTopic);

    const upstreamEnvironment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      SECRET_ID: secret.secretId,
      LOG_LEVEL: settings.logLevel,
      ...(settings.upstream.apiUrl ? { EXPOSURE_API_URL: settings.upstream.apiUrl } : {}),
      ...(settings.upstream.coreSegment ? { EXPOSURE_API_CORE_SEGMENT: settings.upstream.coreSegment } : {}),
      ...(settings.upstream.tenantId ? { EXPOSURE_TENANT_ID: settings.upstream.tenantId } : {}),
      ...(settings.upstream.appUrl ? { EXPOSURE_APP_URL: settings.upstream.appUrl } : {}),
    };

    const configLayer = new LayerVersion(this, 'AlertsConfig', {
      code: Code.fromAsset(alerts.layerDir),
      description: `exposure-alerts alert config, validated at synth, at ${CONFIG_PATH_IN_LAMBDA}`,
      compatibleArchitectures: [Architecture.ARM_64],
      compatibleRuntimes: [FUNCTION_RUNTIME],
      // CloudFormation deletes a replaced version only after the update succeeded, so a rollback
      // still finds it; keeping every past config version would only pile them up.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const fanOut = (kind: PollerKind, intervalSeconds: number) => {
      const timing = pollerTiming(intervalSeconds);
      const queueing = queueTiming(intervalSeconds);
      const label = LABELS[kind];
      const deadLetters = new Queue(this, `${label}DeadLetterQueue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      // (AwsSolutions-SQS3 sees it is the stream queue's dead-letter queue; the Serverless pack does not.)
      Validations.of(deadLetters).acknowledge({
        id: 'Serverless::Serverless-SQSRedrivePolicy',
        reason: `This queue is itself the dead-letter queue of the ${kind} schedule, of the dispatch-${kind} asynchronous invocations and of the ${kind} stream queue; nothing consumes it, so it needs no redrive of its own.`,
      });
      const streamQueue = new Queue(this, `${label}StreamQueue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: queueing.visibilityTimeout,
        retentionPeriod: queueing.retention,
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: queueing.maxReceiveCount },
      });

      const worker = new AlertsFunction(this, `${label}Worker`, {
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
        environment: { ...upstreamEnvironment, ALERTS_CONFIG: CONFIG_PATH_IN_LAMBDA },
        layers: [configLayer],
        // None by default: the event source's maximum concurrency bounds the workers, and
        // settings.ts refuses a reservation below it.
        reservedConcurrency: settings.pollerReservedConcurrency,
        queued: true,
        alarms: { action: alarmAction, errors: timing.failures, throttles: timing.failures },
      });
      this.grantWorkerAccess(worker, streamQueue);
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

      const dispatcher = new AlertsFunction(this, `${label}Dispatcher`, {
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
      this.grantDispatcherAccess(dispatcher, streamQueue);
      scheduleDispatch(this, kind, dispatcher.function, deadLetters, intervalSeconds);
      addDeadLetterAlarm(this, kind, deadLetters, alarmAction);
      addBacklogAlarm(this, kind, streamQueue, intervalSeconds, alarmAction);
      return { dispatcher, worker, streamQueue, deadLetters };
    };

    const events = fanOut('events', settings.eventsIntervalSeconds);
    const credentials = fanOut('credentials', settings.credentialsIntervalSeconds);
    this.dispatchers = { events: events.dispatcher, credentials: credentials.dispatcher };
    this.workers = { events: events.worker, credentials: credentials.worker };
    this.streamQueues = { events: events.streamQueue, credentials: credentials.streamQueue };
    this.deadLetterQueues = { events: events.deadLetters, credentials: credentials.deadLetters };

    this.api = new AlertsFunction(this, 'Api', {
      name: 'api',
      description: 'exposure-alerts HTTP API: asset toggles, silences and status, with an audit trail',
      // The upstream budget is 10 s; the rest is for the audit write and a cold start's secret read.
      timeout: Duration.seconds(15),
      // 256 MB is plenty and halves the cost per millisecond.
      memorySize: API_MEMORY_MB,
      logRetention,
      sourceMapTraces: settings.sourceMapTraces,
      environment: {
        ...upstreamEnvironment,
        ...(settings.apiAuth === 'AWS_IAM' ? { API_AUTH: 'AWS_IAM' } : {}),
        // The API has no alert config: what it needs of `actions.slack` (no secret: a name) rides
        // here, with the queue where it hands a Slack request's work to the events worker.
        ...(alerts.config.actions?.slack
          ? {
              SLACK_ACTIONS: JSON.stringify(alerts.config.actions.slack),
              WORK_QUEUE_URL: this.streamQueues.events.queueUrl,
            }
          : {}),
      },
      alarms: {
        action: alarmAction,
        // An unhandled error or a throttle means a caller got no answer from the app.
        errors: { threshold: 1, period: Duration.minutes(5) },
        throttles: { threshold: 1, period: Duration.minutes(5) },
      },
    });
    this.grantApiAccess(this.api);
    if (alerts.config.actions?.slack)
      // What a request from Slack leaves for after its answer goes to the events worker.
      this.api.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.streamQueues.events.queueArn] }),
      );
    const url = this.api.function.addFunctionUrl({
      authType: settings.apiAuth === 'AWS_IAM' ? FunctionUrlAuthType.AWS_IAM : FunctionUrlAuthType.NONE,
    });

    addMetricAlarms(
      this,
      settings,
      quotaAlarmThreshold(settings, alerts.config.upstream.quotaReserve),
      alarmAction,
    );

    new CfnOutput(this, 'ApiUrl', { value: url.url, description: 'Base URL of the HTTP API' });
    if (alerts.config.actions?.slack && settings.apiAuth === 'AWS_IAM') {
      // Slack cannot sign IAM requests: its routes get a URL of their own (one URL per qualifier,
      // so on an alias) with no AWS auth. Their signature is their auth (lib/api/slack.ts); every
      // other route on this URL still asks for an IAM identity the request does not carry: 401.
      const slackUrl = new Alias(this, 'SlackAlias', {
        aliasName: 'slack',
        version: this.api.function.currentVersion,
      }).addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
      new CfnOutput(this, 'SlackUrl', {
        value: slackUrl.url,
        description: 'Base URL for Slack: <url>slack/interactions and <url>slack/commands',
      });
    }
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SecretArn', {
      value: this.secret.secretArn,
      description: 'Put the secret object here (see the README, Deploying to AWS)',
    });
    new CfnOutput(this, 'SecretKeys', {
      value: ['apiToken or apiKey', 'apiClients', ...alerts.secretNames].join(', '),
      description: 'Keys the secret object must hold for this alert config',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
    this.dashboard = addDashboard(this, alerts.config);
    new CfnOutput(this, 'DashboardName', {
      value: this.dashboard.dashboardName,
      description:
        'CloudWatch dashboard: lag, new items, sent, dead, quarantined per stream and destination, and quota',
    });
    // What the runbook in the README (Deploying to AWS) needs: function names, log groups, queues.
    for (const [label, fn] of [
      ['EventsDispatcher', events.dispatcher],
      ['EventsWorker', events.worker],
      ['CredentialsDispatcher', credentials.dispatcher],
      ['CredentialsWorker', credentials.worker],
      ['Api', this.api],
    ] as const) {
      new CfnOutput(this, `${label}FunctionName`, { value: fn.function.functionName });
      new CfnOutput(this, `${label}LogGroup`, { value: fn.logGroup.logGroupName });
    }
    for (const [label, fanned] of [
      ['Events', events],
      ['Credentials', credentials],
    ] as const) {
      new CfnOutput(this, `${label}StreamQueueUrl`, { value: fanned.streamQueue.queueUrl });
      new CfnOutput(this, `${label}DeadLetterQueueUrl`, { value: fanned.deadLetters.queueUrl });
    }
  }

  private createSecret(
    existing: string | undefined,
    names: string[],
  ): { secret: ISecret; secretId: string; policyArn: string } {
    if (existing?.startsWith('arn:')) {
      // A complete ARN pins the exact secret.
      const secret = Secret.fromSecretCompleteArn(this, 'Secret', existing);
      return { secret, secretId: existing, policyArn: existing };
    }
    if (existing) {
      // A name: the functions look it up by name, and IAM matches its random 6-character suffix.
      const secret = Secret.fromSecretNameV2(this, 'Secret', existing);
      return { secret, secretId: existing, policyArn: `${secret.secretArn}-??????` };
    }
    const keys = ['apiToken|apiKey', 'apiClients', ...names].join(', ');
    const secret = new Secret(this, 'Secret', {
      description: `exposure-alerts secret object (JSON): ${keys}. See the README, Deploying to AWS.`.slice(
        0,
        2048,
      ),
      // Created as an empty object: ops put the real values in. CloudFormation writes a new value
      // only when this template value changes, and it never does, so later deploys keep theirs.
      secretStringValue: SecretValue.unsafePlainText('{}'),
      // Holds tokens issued elsewhere: a teardown must not destroy them.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        'The values are tokens and webhook URLs issued by other systems (the upstream API, Slack, mail providers); no rotation Lambda can re-issue them. They are replaced by hand when their issuer rotates them.',
    });
    return { secret, secretId: secret.secretArn, policyArn: secret.secretArn };
  }

  private grantSecretRead(fn: AlertsFunction): void {
    // GetSecretValue only (grantRead would add DescribeSecret, which the code never calls).
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.secretPolicyArn] }),
    );
  }

  private grantWorkerAccess(fn: AlertsFunction, queue: Queue): void {
    this.grantSecretRead(fn);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...POLLER_TABLE_ACTIONS], resources: [this.table.tableArn] }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...POLLER_INDEX_ACTIONS],
        resources: [`${this.table.tableArn}/index/${TABLE_KEYS.index}`],
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...WORKER_QUEUE_ACTIONS], resources: [queue.queueArn] }),
    );
  }

  private grantDispatcherAccess(fn: AlertsFunction, queue: Queue): void {
    // No secret: it loads the config and the streams' last-polled times only (lib/poll/turn.ts).
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...DISPATCHER_TABLE_ACTIONS],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [STREAM_KEYS] } },
      }),
    );
    // The dispatch the heartbeat's workers count its jobs against: PutItem, in its own partitions.
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [DISPATCH_KEYS] } },
      }),
    );
    // grantSendMessages would add GetQueueAttributes and GetQueueUrl, which the dispatcher never calls.
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
    );
  }

  private grantApiAccess(fn: AlertsFunction): void {
    this.grantSecretRead(fn);
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_TABLE_ACTIONS],
        resources: [this.table.tableArn],
        // Audit items only: the API can neither read nor overwrite cursors (status reads stream and
        // destination state, read only, and actions reach their own records, below).
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['audit#*'] } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_SILENCE_ACTIONS],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SILENCE_KEY] } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_ACTION_ACTIONS],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ACTION_KEYS } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_IDEMPOTENCY_ACTIONS],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': IDEMPOTENCY_KEYS } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_STATUS_ACTIONS],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': STATUS_KEYS } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_INDEX_ACTIONS],
        resources: [`${this.table.tableArn}/index/${TABLE_KEYS.index}`],
        // A count of pending or dead deliveries, never the deliveries (their items) themselves.
        conditions: { StringEquals: { 'dynamodb:Select': 'COUNT' } },
      }),
    );
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...API_GOVERNOR_ACTIONS],
        resources: [this.table.tableArn],
        // The governor's item only: its turn of the shared rate, and the slow-down after a 429.
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [GOVERNOR_KEY] } },
      }),
    );
  }
}

/**
 * Builds the app from its context: settings and alert config checked first (a problem throws
 * with a message naming it), then the stack, then cdk-nag's AwsSolutions and Serverless packs,
 * which fail synth on any finding that is not acknowledged with a reason.
 */
export function defineApp(app: App): ExposureAlertsStack {
  const settings = readSettings(app.node);
  const alerts = loadDeployableConfig(settings.alertsConfig);
  const stack = new ExposureAlertsStack(app, STACK_NAME, {
    settings,
    alerts,
    description:
      'exposure-alerts: leaked-credential and exposure-event alerts (dispatchers, workers, API, alarms)',
  });
  for (const warning of alerts.warnings) {
    Annotations.of(stack).addWarningV2('exposure-alerts:alert-config', `alert config: ${warning}`);
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return stack;
}
