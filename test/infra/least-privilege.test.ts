/**
 * Least privilege, read from the template: each role holds exactly the statements its function
 * needs, on exactly its resources. The pollers read only their own secret; nothing can delete the
 * table; the API function cannot invoke anything; no role carries a managed policy.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_TABLE_ACTIONS, POLLER_INDEX_ACTIONS, POLLER_TABLE_ACTIONS } from '../../infra/stack.ts';
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

describe('poller roles', () => {
  it.each([
    ['PollEventsRole', 'PollEventsLogs', 'EventsDeadLetterQueue'],
    ['PollCredentialsRole', 'PollCredentialsLogs', 'CredentialsDeadLetterQueue'],
  ])(
    '%s holds exactly: its log group, tracing, its dead-letter queue, the secret, the table',
    (role, logs, queue) => {
      const table = logicalId(t, 'AWS::DynamoDB::Table', 'Table');
      expect(bySet(statementsOf(t, role))).toEqual(
        bySet([
          {
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::Logs::LogGroup', logs)),
          },
          XRAY,
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Resource: arn(logicalId(t, 'AWS::SQS::Queue', queue)),
          },
          {
            Action: 'secretsmanager:GetSecretValue',
            Effect: 'Allow',
            Resource: { Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret') },
          },
          { Action: [...POLLER_TABLE_ACTIONS], Effect: 'Allow', Resource: arn(table) },
          {
            Action: POLLER_INDEX_ACTIONS[0],
            Effect: 'Allow',
            Resource: { 'Fn::Join': ['', [arn(table), '/index/gsi1']] },
          },
        ]),
      );
    },
  );

  it('read only their own secret, by its exact ARN (no wildcard)', () => {
    for (const role of ['PollEventsRole', 'PollCredentialsRole']) {
      const secretStatements = statementsOf(t, role).filter((s) =>
        actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
      );
      expect(secretStatements).toHaveLength(1);
      expect(actionsOf(secretStatements[0]!)).toEqual(['secretsmanager:GetSecretValue']);
      expect(secretStatements[0]?.Resource).toEqual({
        Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret'),
      });
    }
  });
});

describe('API role', () => {
  it('holds exactly: its log group, tracing, the secret, and PutItem/Query on audit items', () => {
    expect(bySet(statementsOf(t, 'ApiRole'))).toEqual(
      bySet([
        {
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Effect: 'Allow',
          Resource: arn(logicalId(t, 'AWS::Logs::LogGroup', 'ApiLogs')),
        },
        XRAY,
        {
          Action: 'secretsmanager:GetSecretValue',
          Effect: 'Allow',
          Resource: { Ref: logicalId(t, 'AWS::SecretsManager::Secret', 'Secret') },
        },
        {
          Action: [...API_TABLE_ACTIONS],
          Effect: 'Allow',
          Resource: arn(logicalId(t, 'AWS::DynamoDB::Table', 'Table')),
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['audit#*'] } },
        },
      ]),
    );
  });

  it('cannot invoke the pollers, or any function', () => {
    const lambdaActions = statementsOf(t, 'ApiRole')
      .flatMap(actionsOf)
      .filter((a) => /^lambda:|^\*$/.test(a));
    expect(lambdaActions).toEqual([]);
  });
});

describe('schedule roles', () => {
  it.each([
    ['EventsScheduleRole', 'PollEventsFunction', 'EventsDeadLetterQueue'],
    ['CredentialsScheduleRole', 'PollCredentialsFunction', 'CredentialsDeadLetterQueue'],
  ])(
    '%s may invoke its poller (unqualified only) and dead-letter to its queue, nothing else',
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
      [
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
      ].sort(),
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
