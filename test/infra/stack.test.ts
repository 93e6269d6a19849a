/**
 * The template, resource by resource: what the issue asks of the table, the secret, the five
 * functions, the schedules, the stream queues and their event sources, the dead-letter queues,
 * the API's Function URL, the alert config's delivery, the alarms and the outputs. Bundling is
 * skipped (the real synth is in synth.test.ts); cdk-nag runs in every synth here.
 *
 * The least-privilege tests (least-privilege.ts) run in this file's process, on the same synth of
 * the example: a file of their own loaded aws-cdk-lib and the stack and synthesized it again (5 CPU
 * seconds alone, for 1.3 s of tests).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_KEYS } from '../../lib/state/table.ts';
import { EXAMPLE_CONFIG, logicalId, nagReport, template } from './harness.ts';
import './least-privilege.ts';

// biome-ignore lint/suspicious/noExplicitAny: a CloudFormation template is untyped JSON; the assertions check its shape.
type Props = Record<string, any>;

let t: Template & { built: { outdir: string } };
beforeAll(() => {
  t = template();
});

function resource(type: string, prefix: string): Props {
  return t.findResources(type)[logicalId(t, type, prefix)] as Props;
}

const FUNCTIONS = [
  {
    prefix: 'EventsDispatcherFunction',
    name: 'dispatch-events',
    timeout: 30,
    memory: 256,
    role: 'dispatcher',
  },
  { prefix: 'EventsWorkerFunction', name: 'work-events', timeout: 55, memory: 512, role: 'worker' },
  {
    prefix: 'CredentialsDispatcherFunction',
    name: 'dispatch-credentials',
    timeout: 30,
    memory: 256,
    role: 'dispatcher',
  },
  {
    prefix: 'CredentialsWorkerFunction',
    name: 'work-credentials',
    timeout: 300,
    memory: 512,
    role: 'worker',
  },
  { prefix: 'ApiFunction', name: 'api', timeout: 15, memory: 256, role: 'api' },
] as const;
const KINDS = [
  { kind: 'events', label: 'Events', interval: 60, workerTimeout: 55 },
  { kind: 'credentials', label: 'Credentials', interval: 3600, workerTimeout: 300 },
] as const;
const all = <T>(value: T) => Array.from({ length: FUNCTIONS.length }, () => value);

describe('DynamoDB table', () => {
  it('is on demand, with point-in-time recovery, TTL on expiresAt, the gsi1 index, and retained', () => {
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
    const table = resource('AWS::DynamoDB::Table', 'Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties).toEqual({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      TimeToLiveSpecification: { AttributeName: TABLE_KEYS.ttlAttribute, Enabled: true },
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
        { AttributeName: 'gsi1pk', AttributeType: 'S' },
        { AttributeName: 'gsi1sk', AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });
});

describe('secret', () => {
  it('is created as an empty JSON object, retained, its shape in the description', () => {
    const secret = resource('AWS::SecretsManager::Secret', 'Secret');
    expect(secret.DeletionPolicy).toBe('Retain');
    expect(secret.Properties.SecretString).toBe('{}');
    expect(secret.Properties.GenerateSecretString).toBeUndefined();
    // apiToken/apiKey and apiClients always; the others come from the example config (Slack, webhook,
    // Teams and PagerDuty destinations).
    expect(secret.Properties.Description).toMatch(
      /apiToken\|apiKey, apiClients, jiraApiToken, oncallRoutingKey, sentinelClientSecret, servicenowPassword, siemKey, socDiscordWebhook, socGoogleChatWebhook, socMattermostWebhook, socSlackBotToken, socSlackWebhook, socTeamsWebhook, splunkHecToken/,
    );
  });

  it('is not created when an existing one is named, and every function that reads a secret reads that one', () => {
    const other = template({ existingSecretName: 'ops/exposure-alerts' });
    other.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const env = Object.values(other.findResources('AWS::Lambda::Function')).map(
      (f) => (f as Props).Properties.Environment.Variables.SECRET_ID,
    );
    expect(env).toEqual(all('ops/exposure-alerts'));
    // IAM sees the full ARN, whose random suffix a name does not give: exactly six characters.
    const grants = Object.values(other.findResources('AWS::IAM::Policy')).flatMap((p) =>
      ((p as Props).Properties.PolicyDocument.Statement as Props[]).filter(
        (s) => s.Action === 'secretsmanager:GetSecretValue',
      ),
    );
    // The workers and the API; a dispatcher reads no secret.
    expect(grants).toHaveLength(FUNCTIONS.filter((f) => f.role !== 'dispatcher').length);
    for (const grant of grants) {
      expect(JSON.stringify(grant.Resource)).toMatch(/:secret:ops\/exposure-alerts-\?\?\?\?\?\?"\]\]\}$/);
    }
  });

  it('is pinned exactly when the existing one is given by its complete ARN', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ops/exposure-alerts-AbC123';
    const other = template({ existingSecretName: arn });
    other.resourceCountIs('AWS::SecretsManager::Secret', 0);
    for (const f of Object.values(other.findResources('AWS::Lambda::Function'))) {
      expect((f as Props).Properties.Environment.Variables.SECRET_ID).toBe(arn);
    }
    other.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: arn },
        ]),
      },
    });
  });
});

describe('functions', () => {
  it.each(FUNCTIONS)(
    '$name: arm64, Node 22 or newer, explicit timeout and memory, tracing, own log group',
    (f) => {
      const fn = resource('AWS::Lambda::Function', f.prefix);
      const p = fn.Properties;
      expect(p.Architectures).toEqual(['arm64']);
      expect(Number(/^nodejs(\d+)\.x$/.exec(p.Runtime)?.[1])).toBeGreaterThanOrEqual(22);
      expect(p.Handler).toBe('index.handler');
      expect(p.Timeout).toBe(f.timeout);
      expect(p.MemorySize).toBe(f.memory);
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
      const logGroupId = logicalId(t, 'AWS::Logs::LogGroup', f.prefix.replace('Function', 'Logs'));
      expect(p.LoggingConfig).toEqual({ LogGroup: { Ref: logGroupId } });
      expect(resource('AWS::Logs::LogGroup', logGroupId).Properties.RetentionInDays).toBe(30);
      expect(p.Environment.Variables).toMatchObject({
        TABLE_NAME: { Ref: logicalId(t, 'AWS::DynamoDB::Table', 'Table') },
        SECRET_ID: { Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret') },
        LOG_LEVEL: 'info',
      });
      // Nothing local-only leaks into AWS.
      expect(p.Environment.Variables.DYNAMODB_ENDPOINT).toBeUndefined();
      // No flags by default: each would cost the cold start (see infra/function.ts).
      expect(p.Environment.Variables.NODE_OPTIONS).toBeUndefined();
      expect(p.Environment.Variables.SECRETS_FILE).toBeUndefined();
    },
  );

  it('every function gets the alert config through the layer (the API for the console’s test messages); nothing is reserved', () => {
    const layer = logicalId(t, 'AWS::Lambda::LayerVersion', 'AlertsConfig');
    for (const f of FUNCTIONS) {
      const p = resource('AWS::Lambda::Function', f.prefix).Properties;
      expect(p.Layers).toEqual([{ Ref: layer }]);
      expect(p.Environment.Variables.ALERTS_CONFIG).toBe('/opt/alerts.config.json');
      // The event sources' maximum concurrency bounds the workers (see the event source test).
      expect(p.ReservedConcurrentExecutions).toBeUndefined();
    }
  });

  it('pollerReservedConcurrency reserves for the workers only', () => {
    const other = template({ pollerConcurrency: 3, pollerReservedConcurrency: '4' });
    const reserved = Object.entries(other.findResources('AWS::Lambda::Function')).map(([id, f]) => [
      id.replace(/[0-9A-F]{8}$/, ''),
      (f as Props).Properties.ReservedConcurrentExecutions,
    ]);
    expect(Object.fromEntries(reserved)).toEqual({
      EventsDispatcherFunction: undefined,
      EventsWorkerFunction: 4,
      CredentialsDispatcherFunction: undefined,
      CredentialsWorkerFunction: 4,
      ApiFunction: undefined,
    });
  });

  it('each dispatcher is told its own stream queue, and only the dispatchers are', () => {
    for (const { label } of KINDS) {
      const p = resource('AWS::Lambda::Function', `${label}DispatcherFunction`).Properties;
      expect(p.Environment.Variables.STREAM_QUEUE_URL).toEqual({
        Ref: logicalId(t, 'AWS::SQS::Queue', `${label}StreamQueue`),
      });
    }
    const told = Object.values(t.findResources('AWS::Lambda::Function')).filter(
      (f) => (f as Props).Properties.Environment.Variables.STREAM_QUEUE_URL !== undefined,
    );
    expect(told).toHaveLength(2);
  });

  it('the layer holds the validated config file, byte for byte', () => {
    const layer = resource('AWS::Lambda::LayerVersion', 'AlertsConfig');
    expect(layer.DeletionPolicy).toBe('Delete');
    expect(layer.Properties.CompatibleArchitectures).toEqual(['arm64']);
    const hash = String(layer.Properties.Content.S3Key).replace(/\.zip$/, '');
    const shipped = readFileSync(join(t.built.outdir, `asset.${hash}`, 'alerts.config.json'), 'utf8');
    expect(shipped).toBe(readFileSync(EXAMPLE_CONFIG, 'utf8'));
  });

  it('sourceMapTraces=on gives every function NODE_OPTIONS=--enable-source-maps', () => {
    const other = template({ sourceMapTraces: 'on' });
    const functions = Object.values(other.findResources('AWS::Lambda::Function')) as Props[];
    expect(functions.map((f) => f.Properties.Environment.Variables.NODE_OPTIONS)).toEqual(
      all('--enable-source-maps'),
    );
  });

  it('upstream settings from context reach every function', () => {
    const other = template({
      apiUrl: 'https://api.example.net',
      apiCoreSegment: 'core2',
      tenantId: '42',
      appUrl: 'https://app.example.net',
      logLevel: 'debug',
    });
    for (const f of Object.values(other.findResources('AWS::Lambda::Function'))) {
      expect((f as Props).Properties.Environment.Variables).toMatchObject({
        EXPOSURE_API_URL: 'https://api.example.net',
        EXPOSURE_API_CORE_SEGMENT: 'core2',
        EXPOSURE_TENANT_ID: '42',
        EXPOSURE_APP_URL: 'https://app.example.net',
        LOG_LEVEL: 'debug',
      });
    }
  });

  it('dispatchers are not retried by Lambda, drop stale events, and send failures to their dead-letter queue', () => {
    const configs = t.findResources('AWS::Lambda::EventInvokeConfig');
    expect(Object.keys(configs)).toHaveLength(2);
    for (const [prefix, queue, age] of [
      ['EventsDispatcherFunction', 'EventsDeadLetterQueue', 60],
      ['CredentialsDispatcherFunction', 'CredentialsDeadLetterQueue', 1800],
    ] as const) {
      t.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalId(t, 'AWS::Lambda::Function', prefix) },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: age,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', queue), 'Arn'] } },
        },
      });
    }
  });
});

describe('schedules', () => {
  const cases = [
    {
      kind: 'events',
      fn: 'EventsDispatcherFunction',
      queue: 'EventsDeadLetterQueue',
      rate: 'rate(1 minute)',
      interval: 60,
    },
    {
      kind: 'credentials',
      fn: 'CredentialsDispatcherFunction',
      queue: 'CredentialsDeadLetterQueue',
      rate: 'rate(1 hour)',
      interval: 3600,
    },
  ];

  it.each(cases)('$kind: Scheduler rate, retry policy, max event age, dead-letter queue', (c) => {
    const schedules = Object.values(t.findResources('AWS::Scheduler::Schedule')) as Props[];
    expect(schedules).toHaveLength(2);
    const schedule = schedules.find(
      (s) => s.Properties.Target.Arn['Fn::GetAtt'][0] === logicalId(t, 'AWS::Lambda::Function', c.fn),
    );
    expect(schedule).toBeDefined();
    const p = schedule?.Properties;
    expect(p.ScheduleExpression).toBe(c.rate);
    expect(p.State).toBe('ENABLED');
    expect(p.FlexibleTimeWindow).toEqual({ Mode: 'OFF' });
    expect(p.Target.DeadLetterConfig).toEqual({
      Arn: { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', c.queue), 'Arn'] },
    });
    expect(p.Target.RetryPolicy.MaximumRetryAttempts).toBe(3);
    const age = p.Target.RetryPolicy.MaximumEventAgeInSeconds;
    // Below the interval; 60 s is the floor Scheduler and Lambda accept, so a 1-minute rate gets 60.
    if (c.interval > 120) expect(age).toBeLessThan(c.interval);
    else expect(age).toBe(60);
  });

  it('rates come from context, and the timeouts and event ages follow them', () => {
    const other = template({
      eventsRate: 'rate(5 minutes)',
      credentialsRate: 'rate(6 hours)',
      credentialsLagAlarmSeconds: 43_200,
    });
    const expressions = Object.values(other.findResources('AWS::Scheduler::Schedule')).map(
      (s) => (s as Props).Properties.ScheduleExpression,
    );
    expect(expressions.sort()).toEqual(['rate(5 minutes)', 'rate(6 hours)']);
    other.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('polls the event streams'),
      Timeout: 295,
    });
    // The queue follows the worker's timeout.
    other.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 6 * 295 });
    other.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(5 minutes)',
      Target: Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 150 } }),
    });
    other.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(6 hours)',
      Target: Match.objectLike({
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 10_800 },
      }),
    });
  });

  it('dead-letter queues are encrypted and keep messages 14 days; every queue is TLS-only', () => {
    const queues = t.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(4);
    for (const { label } of KINDS) {
      expect(resource('AWS::SQS::Queue', `${label}DeadLetterQueue`).Properties).toEqual({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 1_209_600,
      });
    }
    for (const id of Object.keys(queues)) {
      t.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });
});

describe('fan-out', () => {
  it.each(KINDS)(
    '$kind stream queue: encrypted, a visibility of 6x the worker timeout, dead-lettered after 3 receives, kept until then',
    (k) => {
      const p = resource('AWS::SQS::Queue', `${k.label}StreamQueue`).Properties;
      const visibility = 6 * k.workerTimeout;
      expect(p).toEqual({
        SqsManagedSseEnabled: true,
        VisibilityTimeout: visibility,
        RedrivePolicy: {
          deadLetterTargetArn: {
            'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', `${k.label}DeadLetterQueue`), 'Arn'],
          },
          maxReceiveCount: 3,
        },
        MessageRetentionPeriod: 2 * 3 * visibility,
      });
      // SQS counts retention from the send: a message failing every time must live through its
      // three receives, one visibility timeout apart, to reach the dead-letter queue.
      expect(p.MessageRetentionPeriod).toBeGreaterThan(3 * p.VisibilityTimeout);
      // And the worker must finish (or time out) before its message is offered again.
      expect(p.VisibilityTimeout).toBeGreaterThan(k.workerTimeout);
    },
  );

  it.each(KINDS)(
    '$kind worker: one stream per invocation, at most pollerConcurrency at once, partial batch failures',
    (k) => {
      const mappings = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')) as Props[];
      expect(mappings).toHaveLength(2);
      const queue = logicalId(t, 'AWS::SQS::Queue', `${k.label}StreamQueue`);
      const mine = mappings.filter((m) => m.Properties.EventSourceArn['Fn::GetAtt'][0] === queue);
      expect(mine.map((m) => m.Properties)).toEqual([
        {
          FunctionName: { Ref: logicalId(t, 'AWS::Lambda::Function', `${k.label}WorkerFunction`) },
          EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
          BatchSize: 1,
          ScalingConfig: { MaximumConcurrency: 2 },
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        },
      ]);
    },
  );

  it('pollerConcurrency sets both event sources', () => {
    const other = template({ pollerConcurrency: '8' });
    const concurrency = Object.values(other.findResources('AWS::Lambda::EventSourceMapping')).map(
      (m) => (m as Props).Properties.ScalingConfig,
    );
    expect(concurrency).toEqual([{ MaximumConcurrency: 8 }, { MaximumConcurrency: 8 }]);
  });
});

describe('API', () => {
  it('is exposed through a Function URL with auth NONE by default (the app checks bearer tokens)', () => {
    const api = logicalId(t, 'AWS::Lambda::Function', 'ApiFunction');
    t.resourceCountIs('AWS::Lambda::Url', 1);
    t.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      TargetFunctionArn: { 'Fn::GetAtt': [api, 'Arn'] },
    });
    t.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionUrlAuthType: 'NONE',
      Principal: '*',
      FunctionName: { 'Fn::GetAtt': [api, 'Arn'] },
    });
  });

  it('uses AWS_IAM auth, with no public permission, when context says so', () => {
    const other = template({ apiAuth: 'AWS_IAM' });
    other.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM' });
    const permissions = Object.values(other.findResources('AWS::Lambda::Permission')) as Props[];
    expect(permissions.filter((p) => p.Properties.Principal === '*')).toEqual([]);
    // The app then takes the IAM caller as the client instead of a bearer token.
    const apiFunctions = Object.values(other.findResources('AWS::Lambda::Function')).filter(
      (f) => (f as Props).Properties.Environment?.Variables?.API_AUTH !== undefined,
    ) as Props[];
    expect(apiFunctions.map((f) => f.Properties.Environment.Variables.API_AUTH)).toEqual(['AWS_IAM']);
    expect(
      t.findResources('AWS::Lambda::Function', {
        Properties: { Environment: { Variables: { API_AUTH: 'AWS_IAM' } } },
      }),
    ).toEqual({});
  });
});

describe('alarms', () => {
  type Alarm = {
    MetricName?: string;
    Namespace?: string;
    Dimensions?: { Name: string; Value: unknown }[];
    Threshold: number;
    Period: number;
    Statistic: string;
    ComparisonOperator: string;
    AlarmActions: unknown[];
    OKActions: unknown[];
    TreatMissingData: string;
  };
  const alarms = () =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => (a as Props).Properties as Alarm);
  const dim = (a: Alarm, name: string) => a.Dimensions?.find((d) => d.Name === name)?.Value;
  const summary = (a: Alarm) => ({
    metric: `${a.Namespace}/${a.MetricName}`,
    threshold: a.Threshold,
    period: a.Period,
    statistic: a.Statistic,
    comparison: a.ComparisonOperator,
  });

  it('every alarm notifies the SNS topic on alarm and on recovery', () => {
    const topic = { Ref: logicalId(t, 'AWS::SNS::Topic', 'AlarmTopic') };
    // Errors and throttles of five functions, two dead-letter queues, two backlogs, five EMF alarms.
    expect(alarms()).toHaveLength(19);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([topic]);
      expect(alarm.OKActions).toEqual([topic]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
  });

  it('cover errors and throttles of each function', () => {
    for (const [prefix, errors] of [
      ['EventsDispatcherFunction', { threshold: 3, period: 900 }],
      ['EventsWorkerFunction', { threshold: 3, period: 900 }],
      ['CredentialsDispatcherFunction', { threshold: 1, period: 3600 }],
      ['CredentialsWorkerFunction', { threshold: 1, period: 3600 }],
      ['ApiFunction', { threshold: 1, period: 300 }],
    ] as const) {
      const fn = { Ref: logicalId(t, 'AWS::Lambda::Function', prefix) };
      for (const metric of ['Errors', 'Throttles']) {
        const found = alarms().filter(
          (a) => a.MetricName === metric && JSON.stringify(dim(a, 'FunctionName')) === JSON.stringify(fn),
        );
        expect(found.map(summary)).toEqual([
          {
            metric: `AWS/Lambda/${metric}`,
            threshold: errors.threshold,
            period: errors.period,
            statistic: 'Sum',
            comparison: 'GreaterThanOrEqualToThreshold',
          },
        ]);
      }
    }
  });

  it('cover the backlog of each stream queue: a message older than any retry can keep one', () => {
    for (const k of KINDS) {
      const queue = logicalId(t, 'AWS::SQS::Queue', `${k.label}StreamQueue`);
      const name = { 'Fn::GetAtt': [queue, 'QueueName'] };
      const found = alarms().filter((a) => JSON.stringify(dim(a, 'QueueName')) === JSON.stringify(name));
      const deadLetterAfter = 3 * 6 * k.workerTimeout;
      expect(found.map(summary)).toEqual([
        {
          metric: 'AWS/SQS/ApproximateAgeOfOldestMessage',
          threshold: deadLetterAfter + 60,
          period: Math.max(k.interval, 300),
          statistic: 'Maximum',
          comparison: 'GreaterThanThreshold',
        },
      ]);
      // A real backlog can show before SQS expires the message.
      const retention = resource('AWS::SQS::Queue', queue).Properties.MessageRetentionPeriod;
      expect(found[0]?.Threshold).toBeLessThan(retention);
    }
  });

  it('cover the depth of each dead-letter queue', () => {
    for (const queue of ['EventsDeadLetterQueue', 'CredentialsDeadLetterQueue']) {
      const name = { 'Fn::GetAtt': [logicalId(t, 'AWS::SQS::Queue', queue), 'QueueName'] };
      const found = alarms().filter((a) => JSON.stringify(dim(a, 'QueueName')) === JSON.stringify(name));
      expect(found.map(summary)).toEqual([
        {
          metric: 'AWS/SQS/ApproximateNumberOfMessagesVisible',
          threshold: 1,
          period: 300,
          statistic: 'Maximum',
          comparison: 'GreaterThanOrEqualToThreshold',
        },
      ]);
    }
  });

  it('cover dead deliveries, poll lag and the global-search quota, on the EMF metrics by service', () => {
    const emf = alarms()
      .filter((a) => a.Namespace === 'ExposureAlerts')
      .map((a) => ({ ...summary(a), dimensions: a.Dimensions }))
      .sort((a, b) =>
        `${a.metric}${JSON.stringify(a.dimensions)}`.localeCompare(
          `${b.metric}${JSON.stringify(b.dimensions)}`,
        ),
      );
    const service = (s: string) => [{ Name: 'service', Value: s }];
    expect(emf).toEqual([
      {
        metric: 'ExposureAlerts/DeliveriesDead',
        threshold: 1,
        period: 3600,
        statistic: 'Sum',
        comparison: 'GreaterThanOrEqualToThreshold',
        dimensions: service('poll-credentials'),
      },
      {
        metric: 'ExposureAlerts/DeliveriesDead',
        threshold: 1,
        period: 300,
        statistic: 'Sum',
        comparison: 'GreaterThanOrEqualToThreshold',
        dimensions: service('poll-events'),
      },
      {
        metric: 'ExposureAlerts/GlobalSearchQuotaRemaining',
        threshold: 100,
        period: 3600,
        statistic: 'Minimum',
        comparison: 'LessThanThreshold',
        dimensions: service('poll-credentials'),
      },
      {
        metric: 'ExposureAlerts/PollLagSeconds',
        threshold: 7200,
        period: 3600,
        statistic: 'Maximum',
        comparison: 'GreaterThanThreshold',
        dimensions: service('poll-credentials'),
      },
      {
        metric: 'ExposureAlerts/PollLagSeconds',
        threshold: 900,
        period: 300,
        statistic: 'Maximum',
        comparison: 'GreaterThanThreshold',
        dimensions: service('poll-events'),
      },
    ]);
  });

  it('thresholds come from context', () => {
    const other = template({ eventsLagAlarmSeconds: '1800', quotaAlarmThreshold: 25 });
    other.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'PollLagSeconds', Threshold: 1800 });
    other.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'GlobalSearchQuotaRemaining',
      Threshold: 25,
    });
  });

  it("the quota alarm fires at the config's upstream.quotaReserve, unless quotaAlarmThreshold overrides it", () => {
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8'));
    const path = join(mkdtempSync(join(tmpdir(), 'ea-quota-')), 'alerts.config.json');
    writeFileSync(path, JSON.stringify({ ...example, upstream: { quotaReserve: 250 } }));
    const quota = (context: Record<string, unknown>) =>
      Object.values(template({ alertsConfig: path, ...context }).findResources('AWS::CloudWatch::Alarm'))
        .map((a) => (a as Props).Properties)
        .filter((a) => a.MetricName === 'GlobalSearchQuotaRemaining')
        .map((a) => a.Threshold);
    expect(quota({})).toEqual([250]);
    expect(quota({ quotaAlarmThreshold: '40' })).toEqual([40]);
  });

  it('the topic is TLS-only, and gets an e-mail subscription only when alarmEmail is set', () => {
    t.resourceCountIs('AWS::SNS::Subscription', 0);
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const other = template({ alarmEmail: 'oncall@example.com' });
    other.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: logicalId(other, 'AWS::SNS::Topic', 'AlarmTopic') },
    });
  });
});

describe('outputs', () => {
  it('name the API URL, the table and the secret ARN', () => {
    const outputs = t.findOutputs('*');
    expect(outputs.ApiUrl?.Value).toEqual({
      'Fn::GetAtt': [logicalId(t, 'AWS::Lambda::Url', 'ApiFunctionFunctionUrl'), 'FunctionUrl'],
    });
    expect(outputs.TableName?.Value).toEqual({ Ref: logicalId(t, 'AWS::DynamoDB::Table', 'Table') });
    expect(outputs.SecretArn?.Value).toEqual({ Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret') });
    expect(outputs.SecretKeys?.Value).toBe(
      'apiToken or apiKey, apiClients, jiraApiToken, oncallRoutingKey, sentinelClientSecret, servicenowPassword, siemKey, socDiscordWebhook, socGoogleChatWebhook, socMattermostWebhook, socSlackBotToken, socSlackWebhook, socTeamsWebhook, splunkHecToken',
    );
    // And what the runbook (README, Deploying to AWS) refers to: every function and log group,
    // every queue, each output naming the resource its name says.
    for (const { label } of KINDS) {
      for (const role of ['Dispatcher', 'Worker']) {
        expect(outputs[`${label}${role}FunctionName`]?.Value).toEqual({
          Ref: logicalId(t, 'AWS::Lambda::Function', `${label}${role}Function`),
        });
        expect(outputs[`${label}${role}LogGroup`]?.Value).toEqual({
          Ref: logicalId(t, 'AWS::Logs::LogGroup', `${label}${role}Logs`),
        });
      }
      for (const queue of ['StreamQueue', 'DeadLetterQueue']) {
        expect(outputs[`${label}${queue}Url`]?.Value).toEqual({
          Ref: logicalId(t, 'AWS::SQS::Queue', `${label}${queue}`),
        });
      }
    }
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'AlarmTopicArn',
        'ApiFunctionName',
        'ApiLogGroup',
        'ApiUrl',
        'CredentialsDeadLetterQueueUrl',
        'CredentialsDispatcherFunctionName',
        'CredentialsDispatcherLogGroup',
        'CredentialsStreamQueueUrl',
        'CredentialsWorkerFunctionName',
        'CredentialsWorkerLogGroup',
        'DashboardName',
        'EventsDeadLetterQueueUrl',
        'EventsDispatcherFunctionName',
        'EventsDispatcherLogGroup',
        'EventsStreamQueueUrl',
        'EventsWorkerFunctionName',
        'EventsWorkerLogGroup',
        'SecretArn',
        'SecretKeys',
        'TableName',
      ].sort(),
    );
  });
});

describe('dashboard', () => {
  // The widgets' JSON, with the stack's region and the tokens CloudFormation joins resolved away.
  const body = (): string => {
    const raw = resource('AWS::CloudWatch::Dashboard', 'Dashboard').Properties.DashboardBody;
    if (typeof raw === 'string') return raw;
    return (raw['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'REGION')).join('');
  };
  type Widget = { properties: { title?: string; metrics?: unknown[][] } };
  const widgets = () => (JSON.parse(body()) as { widgets: Widget[] }).widgets;
  const titled = (title: string) => widgets().find((w) => w.properties.title === title);
  /** Each line's metric: [namespace, name, ...dimension pairs] without the options object. */
  const lines = (w: Widget | undefined) =>
    (w?.properties.metrics ?? []).map((m) => m.filter((x) => typeof x === 'string' && x !== '.'));

  it('is named after the stack, and the stack outputs its name', () => {
    const dashboard = resource('AWS::CloudWatch::Dashboard', 'Dashboard');
    expect(dashboard.Properties.DashboardName).toBe('ExposureAlerts-overview');
    expect(t.findOutputs('*').DashboardName?.Value).toEqual({
      Ref: logicalId(t, 'AWS::CloudWatch::Dashboard', 'Dashboard'),
    });
  });

  it('per stream: lag, new items and quarantined items, from the metrics the workers emit', () => {
    // The tenants take turns (the top-level sources first), the config's order within each.
    const streams = [
      ['poll-events', 'tenant'],
      ['poll-events', 'tenant:1003'],
      ['poll-events', 'group:201'],
      ['poll-credentials', 'credentials:example.com'],
      ['poll-credentials', 'credentials:1003:initech.test'],
    ];
    for (const [title, name] of [
      ['Poll lag (seconds, maximum)', 'PollLagSeconds'],
      ['New items', 'NewItems'],
      ['Quarantined items', 'QuarantinedItems'],
    ]) {
      const found = lines(titled(title as string));
      expect(found).toEqual(
        streams.map(([service, stream]) => ['ExposureAlerts', name, 'service', service, 'stream', stream]),
      );
    }
  });

  it("per tenant: its worst stream's lag, from both workers", () => {
    expect(lines(titled('Poll lag by tenant (seconds, maximum)'))).toEqual(
      ['1003'].flatMap((tenant) =>
        ['poll-events', 'poll-credentials'].map((service) => [
          'ExposureAlerts',
          'PollLagSeconds',
          'service',
          service,
          'tenant',
          tenant,
        ]),
      ),
    );
  });

  it('per destination: sent and dead, both workers summed; and the quota', () => {
    for (const [title, name] of [
      ['Deliveries sent', 'DeliveriesSent'],
      ['Deliveries dead', 'DeliveriesDead'],
    ]) {
      const metrics = titled(title as string)?.properties.metrics ?? [];
      const expressions = metrics.filter(
        (m) => typeof (m[0] as { expression?: string })?.expression === 'string',
      );
      expect(expressions.map((m) => (m[0] as { label: string }).label)).toEqual([
        'soc',
        'socApp',
        'siem',
        'socTeams',
        'oncall',
        'tickets',
        'itsm',
        'socDiscord',
        'socChat',
        'socMattermost',
        'hec',
        'sentinel',
      ]);
      const used = lines({ properties: { metrics: metrics.filter((m) => !expressions.includes(m)) } });
      expect(used).toContainEqual([
        'ExposureAlerts',
        name,
        'destination',
        'oncall',
        'service',
        'poll-credentials',
      ]);
      expect(used).toContainEqual(['ExposureAlerts', name, 'destination', 'soc', 'service', 'poll-events']);
    }
    expect(lines(titled('Global-search quota remaining'))).toEqual([
      ['ExposureAlerts', 'GlobalSearchQuotaRemaining', 'service', 'poll-credentials'],
    ]);
  });
});

describe('Slack actions on AWS', () => {
  it('with actions.slack and AWS_IAM, Slack gets a URL of its own with no AWS auth, and the API its settings', () => {
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8')) as Record<string, unknown>;
    const dir = mkdtempSync(join(tmpdir(), 'ea-slack-synth-'));
    const path = join(dir, 'alerts.config.json');
    const slack = {
      signingSecret: { secret: 'slackSigningSecret' },
      teamId: 'T0123ABCD',
      allowedUsers: ['U0123ABCD'],
    };
    writeFileSync(path, JSON.stringify({ ...example, actions: { slack } }));
    const iam = template({ apiAuth: 'AWS_IAM', alertsConfig: path });
    const urls = Object.values(iam.findResources('AWS::Lambda::Url')) as Props[];
    expect(urls.map((u) => u.Properties.AuthType).sort()).toEqual(['AWS_IAM', 'NONE']);
    const open = urls.find((u) => u.Properties.AuthType === 'NONE') as Props;
    expect(open.Properties.Qualifier).toBe('slack');
    expect(Object.keys(iam.findOutputs('SlackUrl'))).toEqual(['SlackUrl']);
    const api = Object.values(iam.findResources('AWS::Lambda::Function')).find(
      (f) => (f as Props).Properties.Environment?.Variables?.SLACK_ACTIONS !== undefined,
    ) as Props;
    expect(JSON.parse(api.Properties.Environment.Variables.SLACK_ACTIONS)).toEqual({
      ...slack,
      responseUrlPrefix: 'https://hooks.slack.com/',
    });
    // The work a Slack request leaves for after its answer goes to the events worker's queue.
    expect(JSON.stringify(api.Properties.Environment.Variables.WORK_QUEUE_URL)).toContain(
      'EventsStreamQueue',
    );
    const apiPolicies = Object.values(iam.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify((p as Props).Properties.Roles).includes('ApiRole'),
    ) as Props[];
    const sends = apiPolicies.flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]).filter(
        (st) => st.Action === 'sqs:SendMessage',
      ),
    );
    expect(sends).toHaveLength(1);
    expect(JSON.stringify(sends[0]?.Resource)).toContain('EventsStreamQueue');
    // The signing secret is a key of the secret object, like every other the config names.
    expect(JSON.stringify(iam.findOutputs('SecretKeys'))).toContain('slackSigningSecret');
    // cdk-nag ran on it (synth throws on a finding) and passed both packs.
    expect(nagReport(iam.built.outdir).pluginReports.map((p) => [p.pluginName, p.conclusion])).toEqual([
      ['AwsSolutions', 'success'],
      ['Serverless', 'success'],
    ]);
    // Bearer auth: the one public URL serves Slack too; no second one.
    const bearer = template({ alertsConfig: path });
    bearer.resourceCountIs('AWS::Lambda::Url', 1);
    expect(bearer.findOutputs('SlackUrl')).toEqual({});
  });
});
