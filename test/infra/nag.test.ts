/**
 * cdk-nag's AwsSolutions and Serverless packs run inside every synth of the app (defineApp adds
 * them). Here: zero unacknowledged findings, every acknowledgement is one we reviewed and carries
 * a written reason, and a new finding does fail synth, even one acknowledged by its short id.
 */

import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { build, EXAMPLE_CONFIG, type NagReport, nagReport } from './harness.ts';

const FUNCTIONS = ['EventsDispatcher', 'EventsWorker', 'CredentialsDispatcher', 'CredentialsWorker', 'Api'];

let report: NagReport;
beforeAll(() => {
  // Without the CDK's CloudFormation rules: their engine took 9 of this file's 17 CPU seconds. The
  // one real synth (synth.test.ts) runs them, on this same context, and checks its report too.
  const built = build({ alarmEmail: 'oncall@example.com' });
  Template.fromStack(built.stack);
  report = nagReport(built.outdir);
});

describe('cdk-nag', () => {
  it('runs both packs, with no unacknowledged finding', () => {
    expect(report.pluginReports.map((p) => [p.pluginName, p.conclusion, p.violations])).toEqual([
      ['AwsSolutions', 'success', []],
      ['Serverless', 'success', []],
    ]);
  });

  it('acknowledges exactly the reviewed findings, each with a written reason', () => {
    const acknowledged = report.pluginReports.flatMap((p) =>
      p.suppressedViolations.map((v) => {
        expect(v.reason.length, `${v.acknowledgedId} needs a reason`).toBeGreaterThan(60);
        return `${v.acknowledgedId} @ ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`;
      }),
    );
    expect(acknowledged.sort()).toEqual(
      [
        'AwsSolutions::AwsSolutions-SMG4 @ ExposureAlerts/Secret/Resource',
        ...FUNCTIONS.map(
          (f) =>
            `AwsSolutions::AwsSolutions-IAM5[Resource::*] @ ExposureAlerts/${f}/Role/DefaultPolicy/Resource`,
        ),
        'Serverless::Serverless-SQSRedrivePolicy @ ExposureAlerts/EventsDeadLetterQueue/Resource',
        'Serverless::Serverless-SQSRedrivePolicy @ ExposureAlerts/CredentialsDeadLetterQueue/Resource',
        ...FUNCTIONS.map((f) => `Serverless::Serverless-LambdaDLQ @ ExposureAlerts/${f}/Function/Resource`),
        // SQS event sources take no on-failure destination; the stream queues' redrive does that.
        'Serverless::Serverless-LambdaEventSourceMappingDestination @ ExposureAlerts/EventsWorker/Function/StreamQueue/Resource',
        'Serverless::Serverless-LambdaEventSourceMappingDestination @ ExposureAlerts/CredentialsWorker/Function/StreamQueue/Resource',
        'Serverless::Serverless-SNSRedrivePolicy @ ExposureAlerts/AlarmTopic/oncall@example.com/Resource',
      ].sort(),
    );
  });

  it('with identity providers, their own secret is acknowledged as the main one is, and nothing else is new', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ea-nag-identity-'));
    const alertsConfig = join(dir, 'alerts.config.json');
    const example = JSON.parse(readFileSync(EXAMPLE_CONFIG, 'utf8')) as Record<string, unknown>;
    const okta = { type: 'okta', orgUrl: 'https://acme.okta.com', token: { secret: 'oktaApiToken' } };
    await writeFile(
      alertsConfig,
      JSON.stringify({ ...example, identity: { providers: { shop: { ...okta, domains: ['acme.io'] } } } }),
    );
    const built = build({ alertsConfig });
    Template.fromStack(built.stack);
    const identity = nagReport(built.outdir);
    expect(identity.pluginReports.map((p) => [p.pluginName, p.conclusion, p.violations])).toEqual([
      ['AwsSolutions', 'success', []],
      ['Serverless', 'success', []],
    ]);
    const secrets = identity.pluginReports.flatMap((p) =>
      p.suppressedViolations
        .filter((v) => v.violatingConstructs.some((c) => /Secret\//.test(c.constructPath)))
        .map((v) => `${v.acknowledgedId} @ ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`),
    );
    expect(secrets.sort()).toEqual([
      'AwsSolutions::AwsSolutions-SMG4 @ ExposureAlerts/IdentitySecret/Resource',
      'AwsSolutions::AwsSolutions-SMG4 @ ExposureAlerts/Secret/Resource',
    ]);
  }, 60_000);

  it('fails synth on a new finding', () => {
    const { stack } = build();
    new Queue(stack, 'Unreviewed');
    let message = '';
    try {
      Template.fromStack(stack);
    } catch (error) {
      message = (error as Error).message;
    }
    // Both packs catch it: an unencrypted-in-transit queue (AwsSolutions) without a redrive (Serverless).
    expect(message).toMatch(/AwsSolutions-SQS4/);
    expect(message).toMatch(/Serverless-SQSRedrivePolicy/);
    expect(message).toMatch(/ExposureAlerts\/Unreviewed/);
  });

  it('every acknowledgement uses the full plugin-qualified id, so it shows in the report with its reason', () => {
    // A short id (`AwsSolutions-SQS3`) also silences cdk-nag 3, but the finding then vanishes from
    // validation-report.json, reason and all; the qualified id keeps it auditable.
    const { stack } = build({ alarmEmail: 'oncall@example.com', existingSecretName: '' });
    const ids = stack.node
      .findAll()
      .flatMap((c) => c.node.metadata)
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.keys(m.data as Record<string, string>));
    expect(ids.length).toBeGreaterThanOrEqual(16);
    expect(ids.filter((id) => !/^(AwsSolutions::AwsSolutions|Serverless::Serverless)-/.test(id))).toEqual([]);
  });
});
