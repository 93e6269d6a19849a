/**
 * The whole deployment, one stack: the DynamoDB table, the secrets (the main one, and with identity
 * providers their own, which only the workers read), polling fanned out per kind
 * (events, credentials), the HTTP API behind a Function URL, the alarms with their SNS topic, and
 * a dashboard (dashboard.ts).
 * `defineApp` is what `cdk synth` runs (infra/app.ts) and what the tests run, cdk-nag included,
 * so a finding fails both the same way.
 *
 * Polling, per kind: a schedule, a dispatcher, a stream queue, workers and a dead-letter queue
 * (polling.ts); what each function may do: permissions.ts.
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
import { Alias, Architecture, Code, FunctionUrlAuthType, LayerVersion } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { secretPlaces } from '../lib/identity/secrets.ts';
import { identityProvidersOf } from '../lib/state/catalog.ts';
import { TABLE_KEYS } from '../lib/state/table.ts';
import { addIdentityAlarm, addMetricAlarms, quotaAlarmThreshold } from './alarms.ts';
import { CONFIG_PATH_IN_LAMBDA, type DeployableConfig, loadDeployableConfig } from './alerts-config.ts';
import { addDashboard } from './dashboard.ts';
import { AlertsFunction, API_MEMORY_MB, FUNCTION_RUNTIME } from './function.ts';
import { grantApiAccess, grantIdentityActions, grantIdentityStatus, grantWorkQueue } from './permissions.ts';
import { addPolling } from './polling.ts';
import type { PollerKind } from './schedule.ts';
import { readSettings, type Settings } from './settings.ts';

export const STACK_NAME = 'ExposureAlerts';

export * from './permissions.ts';

export interface ExposureAlertsStackProps extends StackProps {
  settings: Settings;
  alerts: DeployableConfig;
}

export class ExposureAlertsStack extends Stack {
  readonly table: Table;
  readonly secret: ISecret;
  /** The ARN to grant on: exact for a created secret or a complete ARN, `name-??????` for a name. */
  readonly secretPolicyArn: string;
  /** The identity providers' credentials, which only the workers read (with identity, or when named). */
  readonly identitySecret?: ISecret;
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

    // A name a provider shares with a destination or Slack is in both.
    const { main: mainNames, identity: identityNames } = secretPlaces(alerts.config);
    const secret = this.createSecret('Secret', settings.existingSecret, [
      'apiToken|apiKey',
      'apiClients',
      ...mainNames,
    ]);
    this.secret = secret.secret;
    this.secretPolicyArn = secret.policyArn;
    // The providers' credentials can disable accounts: the API's function must not read them
    // (section 12, least privilege), so they have a secret of their own, granted to the workers only.
    const identity =
      identityNames.length || settings.existingIdentitySecret
        ? this.createSecret('IdentitySecret', settings.existingIdentitySecret, identityNames)
        : undefined;
    this.identitySecret = identity?.secret;

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

    const grants = {
      table: this.table,
      secretPolicyArn: this.secretPolicyArn,
      ...(identity ? { identitySecretPolicyArn: identity.policyArn } : {}),
    };
    const polling = {
      settings,
      logRetention,
      upstreamEnvironment,
      ...(identity ? { identitySecretId: identity.secretId } : {}),
      configLayer,
      alarmAction,
      grants,
    };
    const events = addPolling(this, 'events', settings.eventsIntervalSeconds, polling);
    const credentials = addPolling(this, 'credentials', settings.credentialsIntervalSeconds, polling);
    this.dispatchers = { events: events.dispatcher, credentials: credentials.dispatcher };
    this.workers = { events: events.worker, credentials: credentials.worker };
    this.streamQueues = { events: events.streamQueue, credentials: credentials.streamQueue };
    this.deadLetterQueues = { events: events.deadLetters, credentials: credentials.deadLetters };

    const withIdentity = identityProvidersOf(alerts.config).length > 0;
    const handsOff = Boolean(alerts.config.actions?.slack) || withIdentity;
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
        // here, with the queue where it hands a Slack request's work, or an account action it
        // recorded (only the workers read the identity providers' secrets), to the events worker.
        ...(alerts.config.actions?.slack
          ? { SLACK_ACTIONS: JSON.stringify(alerts.config.actions.slack) }
          : {}),
        ...(handsOff ? { WORK_QUEUE_URL: this.streamQueues.events.queueUrl } : {}),
        // The console's test messages (POST /destinations/{name}/test) read the destinations
        // here, when the first is asked for; the API reads nothing else of it.
        ALERTS_CONFIG: CONFIG_PATH_IN_LAMBDA,
      },
      layers: [configLayer],
      alarms: {
        action: alarmAction,
        // An unhandled error or a throttle means a caller got no answer from the app.
        errors: { threshold: 1, period: Duration.minutes(5) },
        throttles: { threshold: 1, period: Duration.minutes(5) },
      },
    });
    grantApiAccess(this.api, grants);
    if (withIdentity) {
      grantIdentityStatus(this.api, grants);
      // Account actions: recorded here, handed to the events worker (POST /identity/actions).
      grantIdentityActions(this.api, grants);
    }
    // What a request from Slack leaves for after its answer, and account actions, go to the events worker.
    if (handsOff) grantWorkQueue(this.api, this.streamQueues.events);
    const url = this.api.function.addFunctionUrl({
      authType: settings.apiAuth === 'AWS_IAM' ? FunctionUrlAuthType.AWS_IAM : FunctionUrlAuthType.NONE,
    });

    addMetricAlarms(
      this,
      settings,
      quotaAlarmThreshold(settings, alerts.config.upstream.quotaReserve),
      alarmAction,
    );
    if (identityProvidersOf(alerts.config).length) addIdentityAlarm(this, settings, alarmAction);

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
      value: ['apiToken or apiKey', 'apiClients', ...mainNames].join(', '),
      description: 'Keys the secret object must hold for this alert config',
    });
    if (identity) {
      new CfnOutput(this, 'IdentitySecretArn', {
        value: identity.secret.secretArn,
        description:
          `Put the identity providers' credentials here, read by the workers only${identityNames.length ? ` (${identityNames.join(', ')})` : ''}; see docs/deploy.md, The secret`.slice(
            0,
            1024,
          ),
      });
    }
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

  /** The main secret (`Secret`) or the identity providers' (`IdentitySecret`): existing, or created empty. */
  private createSecret(
    id: 'Secret' | 'IdentitySecret',
    existing: string | undefined,
    keys: string[],
  ): { secret: ISecret; secretId: string; policyArn: string } {
    if (existing?.startsWith('arn:')) {
      // A complete ARN pins the exact secret.
      const secret = Secret.fromSecretCompleteArn(this, id, existing);
      return { secret, secretId: existing, policyArn: existing };
    }
    if (existing) {
      // A name: the functions look it up by name, and IAM matches its random 6-character suffix.
      const secret = Secret.fromSecretNameV2(this, id, existing);
      return { secret, secretId: existing, policyArn: `${secret.secretArn}-??????` };
    }
    const what =
      id === 'Secret'
        ? 'exposure-alerts secret object'
        : "exposure-alerts identity providers' credentials, read by the workers only";
    const secret = new Secret(this, id, {
      description: `${what} (JSON): ${keys.join(', ')}. See the README, Deploying to AWS.`.slice(0, 2048),
      // Created as an empty object: ops put the real values in. CloudFormation writes a new value
      // only when this template value changes, and it never does, so later deploys keep theirs.
      secretStringValue: SecretValue.unsafePlainText('{}'),
      // Holds tokens issued elsewhere: a teardown must not destroy them.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions::AwsSolutions-SMG4',
      reason:
        id === 'Secret'
          ? 'The values are tokens and webhook URLs issued by other systems (the upstream API, Slack, mail providers); no rotation Lambda can re-issue them. They are replaced by hand when their issuer rotates them.'
          : 'The values are credentials issued by the identity providers (an Entra application client secret, an Okta API token); no rotation Lambda can re-issue them. They are replaced by hand when they are rotated at the provider.',
    });
    return { secret, secretId: secret.secretArn, policyArn: secret.secretArn };
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
