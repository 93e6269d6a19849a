/**
 * The default stack's shape as the cost section bills it (cost-model.ts StackShape): the functions'
 * memory, the schedules, the event sources' concurrency, the alarms, dashboards, secrets, log
 * retention, point-in-time recovery and tracing, read from the template `npx cdk synth` makes with
 * the example alert config (test/infra/harness.ts: the same app, cdk-nag included, bundling
 * skipped), so the bill follows the stack when it changes.
 */
import { parseRate } from '../../infra/settings.ts';
import { template } from '../infra/harness.ts';
import type { Kind, StackShape } from './cost-model.ts';

/** The default stack's shape, from the template `cdk synth` makes with the example config. */
export function stackShape(): StackShape {
  const { Resources } = template().toJSON() as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  const of = (type: string) => Object.entries(Resources).filter(([, r]) => r.Type === type);
  const fn = (prefix: string) => {
    const found = of('AWS::Lambda::Function').find(([id]) => id.startsWith(prefix));
    if (!found) throw new Error(`cost: no function ${prefix}* in the template`);
    return { id: found[0], props: found[1].Properties };
  };
  const workers = { events: fn('EventsWorkerFunction'), credentials: fn('CredentialsWorkerFunction') };
  const dispatchers = {
    events: fn('EventsDispatcherFunction'),
    credentials: fn('CredentialsDispatcherFunction'),
  };
  const schedule = (prefix: string) => {
    const found = of('AWS::Scheduler::Schedule').find(([id]) => id.startsWith(prefix));
    return parseRate(prefix, String(found?.[1].Properties.ScheduleExpression));
  };
  const concurrency = (kind: Kind) => {
    const mapping = of('AWS::Lambda::EventSourceMapping').find(
      ([, r]) => (r.Properties.FunctionName as { Ref?: string })?.Ref === workers[kind].id,
    );
    return Number(
      (mapping?.[1].Properties.ScalingConfig as { MaximumConcurrency?: number })?.MaximumConcurrency,
    );
  };
  const functions = of('AWS::Lambda::Function');
  const table = of('AWS::DynamoDB::Table')[0]?.[1].Properties;
  return {
    workerMemoryMb: {
      events: Number(workers.events.props.MemorySize),
      credentials: Number(workers.credentials.props.MemorySize),
    },
    dispatcherMemoryMb: {
      events: Number(dispatchers.events.props.MemorySize),
      credentials: Number(dispatchers.credentials.props.MemorySize),
    },
    intervalS: { events: schedule('EventsSchedule'), credentials: schedule('CredentialsSchedule') },
    concurrency: { events: concurrency('events'), credentials: concurrency('credentials') },
    // The API reads the secret at its cold starts; the dispatchers read none (functions/dispatch.ts).
    otherSecretReaders: functions.filter(([id]) => id.startsWith('ApiFunction')).length,
    alarms: of('AWS::CloudWatch::Alarm').length,
    dashboards: of('AWS::CloudWatch::Dashboard').length,
    secrets: of('AWS::SecretsManager::Secret').length,
    logRetentionDays: Number(of('AWS::Logs::LogGroup')[0]?.[1].Properties.RetentionInDays),
    pitr: Boolean(
      (table?.PointInTimeRecoverySpecification as { PointInTimeRecoveryEnabled?: boolean })
        ?.PointInTimeRecoveryEnabled,
    ),
    tracing: functions.every(([, r]) => (r.Properties.TracingConfig as { Mode?: string })?.Mode === 'Active'),
  };
}
