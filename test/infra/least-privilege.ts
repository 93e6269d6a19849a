/**
 * Least privilege, read from the template: each role holds exactly the statements its function
 * needs, on exactly its resources. The workers and the API read only their own secret (a
 * dispatcher none); a dispatcher reads stream items only and sends to its own stream queue only; a worker consumes its own queue only;
 * the API touches audit items, silences and the rate governor's item, reads what status needs (read
 * only, and on the index counts only); nothing can delete the table; the
 * API function cannot invoke anything; no role carries a managed policy. (Which table actions the
 * code really uses is grants.test.ts.) Run by stack.test.ts, in its process and on its synth.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  API_ACTION_ACTIONS,
  API_GOVERNOR_ACTIONS,
  API_IDEMPOTENCY_ACTIONS,
  API_INDEX_ACTIONS,
  API_SILENCE_ACTIONS,
  API_STATUS_ACTIONS,
  API_TABLE_ACTIONS,
  API_TEST_PACE_ACTIONS,
  DISPATCHER_TABLE_ACTIONS,
  POLLER_INDEX_ACTIONS,
  POLLER_TABLE_ACTIONS,
  WORKER_QUEUE_ACTIONS,
} from '../../infra/stack.ts';
import { actionsOf, logicalId, statementsOf, template } from './harness.ts';

let t: Template;
beforeAll(() => {
  t = template();
});

const arn = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
/** Statements compared as a set: their order in the policy carries no meaning. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, canonical(v)]),
        )
      : value;
const bySet = (statements: unknown[]) => statements.map((s) => JSON.stringify(canonical(s))).sort();
const XRAY = {
  Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
  Effect: 'Allow',
  Resource: '*',
};

const secretRead = () => ({
  Action: 'secretsmanager:GetSecretValue',
  Effect: 'Allow',
  Resource: { Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret') },
});
const logsOf = (prefix: string) => ({
  Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
  Effect: 'Allow',
  Resource: arn(logicalId(t, 'AWS::Logs::LogGroup', prefix)),
});
const LABELS = ['Events', 'Credentials'] as const;
const ROLES = [
  'EventsDispatcherRole',
  'EventsWorkerRole',
  'CredentialsDispatcherRole',
  'CredentialsWorkerRole',
  'ApiRole',
];

describe('dispatcher roles', () => {
  it.each(LABELS)(
    '%sDispatcherRole holds exactly: its log group, tracing, its dead-letter queue, BatchGetItem on stream items, PutItem on dispatch items, sending to its stream queue (no secret)',
    (label) => {
      const table = logicalId(t, 'AWS::DynamoDB::Table', 'Table');
      expect(bySet(statementsOf(t, `${label}DispatcherRole`))).toEqual(
        bySet([
          logsOf(`${label}DispatcherLogs`),
          XRAY,
          // The asynchronous invocations' on-failure destination.
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::SQS::Queue', `${label}DeadLetterQueue`)),
          },
          {
            Action: DISPATCHER_TABLE_ACTIONS[0],
            Effect: 'Allow',
            Resource: arn(table),
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['stream#*'] } },
          },
          // The heartbeat's dispatch, which its workers count the jobs against.
          {
            Action: 'dynamodb:PutItem',
            Effect: 'Allow',
            Resource: arn(table),
            Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['heartbeat#*'] } },
          },
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::SQS::Queue', `${label}StreamQueue`)),
          },
        ]),
      );
    },
  );
});

describe('worker roles', () => {
  it.each(LABELS)(
    '%sWorkerRole holds exactly: its log group, tracing, the secret, the table, consuming its stream queue',
    (label) => {
      const table = logicalId(t, 'AWS::DynamoDB::Table', 'Table');
      expect(bySet(statementsOf(t, `${label}WorkerRole`))).toEqual(
        bySet([
          logsOf(`${label}WorkerLogs`),
          XRAY,
          secretRead(),
          { Action: [...POLLER_TABLE_ACTIONS], Effect: 'Allow', Resource: arn(table) },
          {
            Action: POLLER_INDEX_ACTIONS[0],
            Effect: 'Allow',
            Resource: { 'Fn::Join': ['', [arn(table), '/index/gsi1']] },
          },
          // What the event source does with the queue, and nothing it does not (no
          // ChangeMessageVisibility, GetQueueUrl or SendMessage).
          {
            Action: [...WORKER_QUEUE_ACTIONS],
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::SQS::Queue', `${label}StreamQueue`)),
          },
        ]),
      );
    },
  );
});

describe('every function role', () => {
  it('reads only its own secret, by its exact ARN (no wildcard); a dispatcher reads none', () => {
    for (const role of ROLES) {
      const secretStatements = statementsOf(t, role).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
      );
      if (role.endsWith('DispatcherRole')) {
        expect(secretStatements).toEqual([]);
        continue;
      }
      expect(secretStatements).toHaveLength(1);
      expect(actionsOf(secretStatements[0]!)).toEqual(['secretsmanager:GetSecretValue']);
      expect(secretStatements[0]?.Resource).toEqual({
        Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret'),
      });
    }
  });
});

describe('API role', () => {
  it('holds exactly: its log group, tracing, the secret, audit items, silences, actions on events, Idempotency-Key records, status reads (counts only on the index), the governor, the console’s reads, pointers, test pace and dead ids (ids only on the index)', () => {
    const table = arn(logicalId(t, 'AWS::DynamoDB::Table', 'Table'));
    expect(bySet(statementsOf(t, 'ApiRole'))).toEqual(
      bySet([
        logsOf('ApiLogs'),
        XRAY,
        secretRead(),
        {
          Action: [...API_TABLE_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['audit#*'] } },
        },
        {
          Action: [...API_SILENCE_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['silence'] } },
        },
        {
          Action: [...API_ACTION_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['action#*', 'flags#*', 'dlv#*', 'fu#*'] },
          },
        },
        {
          Action: [...API_IDEMPOTENCY_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['idem#*'] } },
        },
        {
          Action: API_STATUS_ACTIONS[0],
          Effect: 'Allow',
          Resource: table,
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['catalog', 'quota', 'stream#*', 'dest#*'] },
          },
        },
        {
          Action: API_INDEX_ACTIONS[0],
          Effect: 'Allow',
          Resource: { 'Fn::Join': ['', [table, '/index/gsi1']] },
          Condition: { StringEquals: { 'dynamodb:Select': 'COUNT' } },
        },
        {
          Action: [...API_GOVERNOR_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['governor'] } },
        },
        // The console: the alert index read, actions' pointers written, tests paced, dead ids found.
        {
          Action: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
          Effect: 'Allow',
          Resource: table,
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['alerts#*', 'alert#*', 'acted#*'] },
          },
        },
        {
          Action: 'dynamodb:BatchWriteItem',
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['acted#*'] } },
        },
        {
          Action: [...API_TEST_PACE_ACTIONS],
          Effect: 'Allow',
          Resource: table,
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['dtest#*'] } },
        },
        {
          Action: 'dynamodb:Query',
          Effect: 'Allow',
          Resource: { 'Fn::Join': ['', [table, '/index/gsi1']] },
          Condition: {
            StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['id'] },
          },
        },
      ]),
    );
  });

  it('cannot invoke the dispatchers or workers, or any function', () => {
    const lambdaActions = statementsOf(t, 'ApiRole')
      .flatMap(actionsOf)
      .filter((a) => /^lambda:|^\*$/.test(a));
    expect(lambdaActions).toEqual([]);
  });
});

describe('schedule roles', () => {
  it.each([
    ['EventsScheduleRole', 'EventsDispatcherFunction', 'EventsDeadLetterQueue'],
    ['CredentialsScheduleRole', 'CredentialsDispatcherFunction', 'CredentialsDeadLetterQueue'],
  ])(
    '%s may invoke its dispatcher (unqualified only) and dead-letter to its queue, nothing else',
    (role, fn, queue) => {
      expect(bySet(statementsOf(t, role))).toEqual(
        bySet([
          {
            Action: 'lambda:InvokeFunction',
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::Lambda::Function', fn)),
          },
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::SQS::Queue', queue)),
          },
        ]),
      );
      const trust =
        t.findResources('AWS::IAM::Role')[logicalId(t, 'AWS::IAM::Role', role)]?.Properties
          .AssumeRolePolicyDocument.Statement;
      expect(trust).toEqual([
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ]);
    },
  );
});

describe('the whole stack', () => {
  it('nothing can delete the table or its items, and the table is retained and deletion-protected', () => {
    const all = statementsOf(t, '').flatMap(actionsOf);
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((a) => /^dynamodb:(Delete|\*)|^dynamodb:\*$|^\*$/.test(a))).toEqual([]);
    const table = t.findResources('AWS::DynamoDB::Table')[logicalId(t, 'AWS::DynamoDB::Table', 'Table')];
    expect(table?.DeletionPolicy).toBe('Retain');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(true);
  });

  it('no role carries a managed policy, and only X-Ray is granted on Resource *', () => {
    for (const role of Object.values(t.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.Policies).toBeUndefined();
    }
    const starred = statementsOf(t, '').filter((s) => JSON.stringify(s.Resource).includes('*'));
    expect(starred.flatMap(actionsOf).sort()).toEqual(
      ROLES.flatMap(() => ['xray:PutTelemetryRecords', 'xray:PutTraceSegments']).sort(),
    );
  });

  it('only the API function is publicly invocable, and only through its Function URL', () => {
    const permissions = Object.values(t.findResources('AWS::Lambda::Permission'));
    const api = arn(logicalId(t, 'AWS::Lambda::Function', 'ApiFunction'));
    expect(permissions.map((p) => p.Properties)).toEqual([
      { Action: 'lambda:InvokeFunctionUrl', FunctionName: api, FunctionUrlAuthType: 'NONE', Principal: '*' },
      { Action: 'lambda:InvokeFunction', FunctionName: api, InvokedViaFunctionUrl: true, Principal: '*' },
    ]);
  });
});
