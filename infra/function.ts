/**
 * "A function of ours": every Lambda of the stack is built here, so all of them run the same way:
 * arm64 on the newest Node runtime, bundled by the local esbuild as minified ESM with source maps
 * and code splitting (the AWS SDK v3 left to the runtime; infra/lambda-bundle.mjs), an explicit timeout and memory size, their own log group
 * with a retention, their own role holding nothing but what the caller grants (no managed
 * policies), active tracing, and alarms on errors and throttles.
 */
import { join } from 'node:path';
import { type Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  type IDestination,
  type ILayerVersion,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { PROJECT_ROOT } from './alerts-config.ts';

/**
 * Node 24 is the newest runtime CDK knows: the longest support window, and it satisfies the
 * cdk-nag "latest runtime" rules without an acknowledgement. The bundles target node22 syntax,
 * so the runtime can be moved back to NODEJS_22_X without re-tuning anything.
 */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

/** Memory of the workers: JSON, schema checks and rendering are CPU work, and CPU share grows with memory. */
export const POLLER_MEMORY_MB = 512;
/** Memory of the dispatchers: one read and a few SQS sends, I/O-bound. */
export const DISPATCHER_MEMORY_MB = 256;
/** Memory of the API: I/O-bound and small (one Hono app). */
export const API_MEMORY_MB = 256;

/**
 * NODE_OPTIONS with the `sourceMapTraces` setting: stack traces point at the TypeScript sources
 * (the maps hold mappings, not the sources). Off by default: parsing the map costs every cold
 * start 10 to 20 ms (`npm run bench`), and the maps ship beside each bundle to read a trace
 * offline. No V8 heap flags ever: Node sizes its heap from the memory limit Lambda sets on the
 * sandbox (the function's memory), and any V8 flag makes Node drop the code cache of its own
 * modules, about 25 ms more.
 */
export const SOURCE_MAP_NODE_OPTIONS = '--enable-source-maps';

/** Some bundled CommonJS dependencies call `require`; ESM output has none, so define one. */
const REQUIRE_BANNER =
  "import { createRequire as __alertsCreateRequire } from 'node:module'; const require = __alertsCreateRequire(import.meta.url);";

export interface AlarmThreshold {
  /** Alarm when the Sum over `period` reaches this. */
  threshold: number;
  period: Duration;
}

export interface AlertsFunctionProps {
  /**
   * Entry file name in functions/, without `.ts`; also in the names of the function's alarms. (The
   * `service` of its metrics and logs is the code's: a worker's is `poll-events` / `poll-credentials`.)
   */
  name: 'dispatch-events' | 'dispatch-credentials' | 'work-events' | 'work-credentials' | 'api';
  description: string;
  timeout: Duration;
  memorySize: number;
  logRetention: RetentionDays;
  environment: Record<string, string>;
  layers?: ILayerVersion[];
  reservedConcurrency?: number;
  /** Set NODE_OPTIONS=--enable-source-maps (the `sourceMapTraces` setting). */
  sourceMapTraces?: boolean;
  /**
   * For functions invoked asynchronously (the dispatchers): no Lambda retries (the next scheduled
   * run is the retry), events older than `maxEventAge` dropped, failures sent to `failureQueue`.
   */
  async?: { maxEventAge: Duration; failureQueue: IQueue };
  /** Invoked by an SQS event source (the workers): a failed message stays on its queue. */
  queued?: boolean;
  alarms: { action: IAlarmAction; errors: AlarmThreshold; throttles: AlarmThreshold };
}

export class AlertsFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly errorsAlarm: Alarm;
  readonly throttlesAlarm: Alarm;

  constructor(scope: Construct, id: string, props: AlertsFunctionProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // Logs follow the stack; the table and the secret are what is kept on teardown.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.name}: only what the stack grants it`,
    });
    // Instead of AWSLambdaBasicExecutionRole (which allows every log group): this log group only.
    this.logGroup.grantWrite(this.role);
    let onFailure: IDestination | undefined;
    if (props.async) {
      const queue = props.async.failureQueue;
      // SqsDestination would also grant GetQueueAttributes and GetQueueUrl; Lambda only sends.
      this.role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }),
      );
      onFailure = { bind: () => ({ destination: queue.queueArn }) };
    }

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, 'functions', `${props.name}.ts`),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      description: props.description,
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      timeout: props.timeout,
      memorySize: props.memorySize,
      role: this.role,
      logGroup: this.logGroup,
      tracing: Tracing.ACTIVE,
      layers: props.layers,
      reservedConcurrentExecutions: props.reservedConcurrency,
      environment: {
        ...props.environment,
        ...(props.sourceMapTraces ? { NODE_OPTIONS: SOURCE_MAP_NODE_OPTIONS } : {}),
      },
      ...(props.async
        ? {
            retryAttempts: 0,
            maxEventAge: props.async.maxEventAge,
            onFailure,
          }
        : {}),
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        banner: REQUIRE_BANNER,
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        // The runtime provides the AWS SDK v3; bundling it would triple the size and cold start.
        externalModules: ['@aws-sdk/*'],
        logLevel: LogLevel.WARNING,
        // Never fall back to Docker: bundling must work offline with the local esbuild.
        forceDockerBundling: false,
        // NodejsFunction writes one file; the bundle is then made again with code splitting
        // (infra/lambda-bundle.mjs: the same settings), so a function loads at start only what it
        // always runs, and each destination kind's code when it first delivers to one.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `node ${JSON.stringify(join(inputDir, 'infra', 'lambda-bundle.mjs'))} ${JSON.stringify(join(inputDir, 'functions', `${props.name}.ts`))} ${JSON.stringify(outputDir)}`,
          ],
        },
      },
    });

    const alarm = (kind: 'errors' | 'throttles', limit: AlarmThreshold) => {
      const metric =
        kind === 'errors'
          ? this.function.metricErrors({ period: limit.period, statistic: 'Sum' })
          : this.function.metricThrottles({ period: limit.period, statistic: 'Sum' });
      const created = new Alarm(this, kind === 'errors' ? 'ErrorsAlarm' : 'ThrottlesAlarm', {
        alarmName: `${stackName}-${props.name}-${kind}`,
        alarmDescription: `${props.name}: ${limit.threshold} or more ${kind} in ${limit.period.toHumanString()}. Logs: aws logs tail ${this.logGroup.logGroupName}`,
        metric,
        threshold: limit.threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No invocation in a period is not a problem.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(props.alarms.action);
      created.addOkAction(props.alarms.action);
      return created;
    };
    this.errorsAlarm = alarm('errors', props.alarms.errors);
    this.throttlesAlarm = alarm('throttles', props.alarms.throttles);

    const policy = this.role.node.tryFindChild('DefaultPolicy');
    if (policy) {
      Validations.of(policy).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason:
          'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions (Resource must be *).',
      });
    }
    Validations.of(this.function).acknowledge(
      props.async
        ? {
            id: 'Serverless::Serverless-LambdaDLQ',
            reason:
              'Asynchronous failures go to an OnFailure destination (the same SQS queue as the schedule dead-letter queue), which records the error and request context; a DeadLetterConfig would only duplicate it.',
          }
        : props.queued
          ? {
              id: 'Serverless::Serverless-LambdaDLQ',
              reason:
                'Invoked by an SQS event source, which never dead-letters through the function: a failed message stays on its queue, is offered again, and the queue moves it to its own dead-letter queue after its maxReceiveCount.',
            }
          : {
              id: 'Serverless::Serverless-LambdaDLQ',
              reason:
                'Invoked synchronously through its Function URL: the caller receives every error, so there is no event to dead-letter.',
            },
    );
  }
}
