/**
 * "A function of ours": every Lambda of the stack is built here, so all of them run the same way:
 * arm64 on the newest Node runtime, bundled by the local esbuild as minified ESM with source maps
 * and code splitting (the AWS SDK v3 left to the runtime; infra/lambda-bundle.mjs), an explicit
 * timeout and memory size, their own log group with a retention, their own role holding nothing
 * but what the caller grants (no managed policies), active tracing, and alarms on errors and
 * throttles.
 *
 * Each function is bundled once, in this process, by esbuild's synchronous API with
 * infra/lambda-bundle.mjs's options (one esbuild service for the five). NodejsFunction's own
 * bundling made each bundle twice (its one-file build, then ours with code splitting over it) and
 * started `npx esbuild` and a Node process per function: about 6 CPU seconds of a synth.
 */
import {
  AssetHashType,
  DockerImage,
  type Duration,
  type ILocalBundling,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  type IDestination,
  type ILayerVersion,
  Function as LambdaFunction,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import { PROJECT_ROOT } from './alerts-config.ts';
// @ts-expect-error a plain JavaScript module of the stack (infra/lambda-bundle.mjs), shared with the bench
import { lambdaBuildOptions } from './lambda-bundle.mjs';

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

/**
 * Bundles one function's entry (`functions/<name>.ts`, from the project root) into the asset's
 * folder. The entry is a field, not only in the closure: the CDK keys its cache of staged assets
 * on the bundling options' JSON, so five bundlers alike but for the entry would share one bundle.
 */
class LocalBundle implements ILocalBundling {
  constructor(readonly entry: string) {}

  tryBundle(outputDir: string): boolean {
    buildSync(lambdaBuildOptions(this.entry, outputDir));
    return true;
  }
}

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
  readonly function: LambdaFunction;
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

    this.function = new LambdaFunction(this, 'Function', {
      // The bundle's folder is hashed (OUTPUT), never the project root it is built from.
      code: Code.fromAsset(PROJECT_ROOT, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          local: new LocalBundle(`functions/${props.name}.ts`),
          // Required by the CDK, never run: local bundling always succeeds or fails the synth
          // (esbuild is a dependency of this project; no Docker fallback, bundling works offline).
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
        },
      }),
      handler: 'index.handler',
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
