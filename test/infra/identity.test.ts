/**
 * The stack with identity providers in its config: the API may Query the providers' state partition
 * (`idp`) and nothing more of identity, an alarm watches IdentityProviderRefused, and the dashboard
 * shows lookups, failures, refusals and verdicts. Without identity, none of it is there. The alarm
 * watches what the code emits: the credentials worker runs for real (functions/worker.ts, the
 * emulator, dynalite) against an Okta stand-in that refuses its token, and its EMF lines must
 * publish the alarm's exact (metric, dimensions).
 *
 * The providers' credentials have a secret of their own: the workers read it (IDENTITY_SECRET_ID),
 * the API's role has no GetSecretValue on it nor on any pattern that matches it, whether the stack
 * creates both secrets or is given them by name or ARN (`existingIdentitySecretName`).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkerHandler } from '../../functions/worker.ts';
import { API_IDENTITY_STATUS_ACTIONS } from '../../infra/stack.ts';
import { VERDICTS } from '../../lib/identity/words.ts';
import { METRICS_NAMESPACE } from '../../lib/metrics.ts';
import { context, lambdaVariables, sqsRecord, withEnvironment } from '../functions/lambda.ts';
import { useDynalite } from '../helpers/dynamo.ts';
import { useEmulator } from '../helpers/emulator.ts';
import { standIn } from '../helpers/stand-in.ts';
import { actionsOf, logicalId, statementsOf, template } from './harness.ts';

const emu = useEmulator({ eventsPerTenant: 5, credentials: 30 });
const db = useDynalite();

const providers = {
  corp: {
    type: 'entra',
    tenantId: '11111111-2222-3333-4444-555555555555',
    clientId: 'app-1',
    clientSecret: { secret: 'corpSecret' },
    domains: ['acme.com'],
  },
};
const config = (oktaUrl = 'https://acme.okta.com') => ({
  sources: { credentials: { domains: ['acme.test'], lookback: 'P60D', pageSize: 20 } },
  destinations: { local: { type: 'console' } },
  routes: [{ name: 'all', to: ['local'] }],
  identity: {
    providers: {
      shop: { type: 'okta', orgUrl: oktaUrl, token: { secret: 'shopToken' }, domains: ['acme.test'] },
    },
  },
  tenants: [{ id: 7, name: 'Globex', identity: { providers } }],
});

let withIdentity: ReturnType<typeof template>;
let configPath: string;
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ea-infra-identity-'));
  configPath = join(dir, 'alerts.config.json');
  await writeFile(configPath, JSON.stringify(config()));
  withIdentity = template({ alertsConfig: configPath });
}, 60_000);

type Alarm = { MetricName?: string; Namespace?: string; Dimensions?: { Name: string; Value: unknown }[] };
const alarmsOf = (t: ReturnType<typeof template>) =>
  Object.values(t.findResources('AWS::CloudWatch::Alarm')).map(
    (a) => a.Properties as Alarm & Record<string, unknown>,
  );

describe('the stack with identity providers', () => {
  it("the API may Query the providers' state partition, read only, and only with identity configured", () => {
    const table = { 'Fn::GetAtt': [logicalId(withIdentity, 'AWS::DynamoDB::Table', 'Table'), 'Arn'] };
    const identity = statementsOf(withIdentity, 'ApiRole').filter((s) =>
      JSON.stringify(s.Condition ?? {}).includes('"idp"'),
    );
    expect(identity).toEqual([
      {
        Action: API_IDENTITY_STATUS_ACTIONS[0],
        Effect: 'Allow',
        Resource: table,
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['idp'] } },
      },
    ]);
    expect(API_IDENTITY_STATUS_ACTIONS).toEqual(['dynamodb:Query']);
    // No other role reads it. (Without identity, least-privilege.ts holds the API to its
    // exact statements, this one not among them.)
    for (const role of ['EventsWorkerRole', 'CredentialsWorkerRole', 'EventsDispatcherRole'])
      expect(JSON.stringify(statementsOf(withIdentity, role))).not.toContain('"idp"');
  });

  it('an alarm on IdentityProviderRefused of the credentials worker notifies the topic', () => {
    const topic = { Ref: logicalId(withIdentity, 'AWS::SNS::Topic', 'AlarmTopic') };
    const refused = alarmsOf(withIdentity).filter((a) => a.MetricName === 'IdentityProviderRefused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [{ Name: 'service', Value: 'poll-credentials' }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic],
      OKActions: [topic],
    });
    expect(String(refused[0]?.AlarmDescription)).toContain('identity test');
  });

  it('the dashboard shows lookups, failures and refusals per provider (every scope), and each verdict', () => {
    const body = (t: ReturnType<typeof template>) =>
      JSON.stringify(
        Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
      );
    const shown = body(withIdentity);
    for (const provider of ['shop', 'corp'])
      for (const metric of ['IdentityLookups', 'IdentityLookupFailures', 'IdentityProviderRefused'])
        expect(shown).toContain(`\\"${metric}\\",\\"provider\\",\\"${provider}\\"`);
    for (const verdict of VERDICTS)
      expect(shown).toContain(
        `\\"IdentityVerdicts\\",\\"service\\",\\"poll-credentials\\",\\"verdict\\",\\"${verdict}\\"`,
      );
  });
});

describe('the alarm watches what the worker emits', () => {
  it('a credentials worker whose Okta refuses its token publishes IdentityProviderRefused with the alarm’s dimensions', async () => {
    const auth: (string | undefined)[] = [];
    const okta = await standIn((req, _body, res) => {
      auth.push(req.headers.authorization);
      // Okta's answer to a token it does not know, whatever is asked.
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errorCode: 'E0000011', errorSummary: 'Invalid token provided' }));
    });
    const dir = await mkdtemp(join(tmpdir(), 'ea-infra-identity-run-'));
    const secrets = join(dir, 'secrets.json');
    await writeFile(secrets, JSON.stringify({ shopToken: 'okta-token-under-test', corpSecret: 'x' }));
    const { tenants: _, ...topOnly } = config(okta.url);
    const vars = await lambdaVariables({
      apiUrl: emu.url,
      dynamodbEndpoint: db.endpoint,
      table: await db.table(),
      config: topOnly,
      extra: { SECRETS_FILE: secrets },
    });
    const lines: string[] = [];
    await withEnvironment(vars, async () => {
      const handler = await createWorkerHandler('credentials', { emfWrite: (line) => lines.push(line) });
      const record = sqsRecord({ kind: 'credentials', stream: 'credentials:acme.test' });
      expect(await handler({ Records: [record] }, context())).toEqual({ batchItemFailures: [] });
    });
    const published = lines.flatMap((line) => {
      const body = JSON.parse(line) as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      };
      return body._aws.CloudWatchMetrics.flatMap((d) =>
        d.Dimensions.flatMap((set) =>
          d.Metrics.map((m) => `${m.Name} ${set.map((k) => `${k}=${String(body[k])}`).join(',')}`),
        ),
      );
    });
    const alarm = alarmsOf(withIdentity).find((a) => a.MetricName === 'IdentityProviderRefused');
    const watched = `IdentityProviderRefused ${(alarm?.Dimensions ?? []).map((d) => `${d.Name}=${String(d.Value)}`).join(',')}`;
    expect(auth.length).toBeGreaterThan(0);
    expect(new Set(auth)).toEqual(new Set(['SSWS okta-token-under-test']));
    expect(published).toContain(watched);
    expect(published).toContain('IdentityLookups service=poll-credentials,provider=shop');
    expect(published).toContain('IdentityVerdicts service=poll-credentials,verdict=unknown');
    expect(lines.join('\n')).not.toContain('okta-token-under-test');
  }, 60_000);
});

const WORKERS = ['EventsWorker', 'CredentialsWorker'] as const;
const ACCOUNT = { 'AWS::Partition': 'aws', 'AWS::Region': 'eu-west-1', 'AWS::AccountId': '123456789012' };

/** A policy's resource as IAM sees it in one account, or `<Ref id>` for a resource of the stack. */
function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (v.Ref) return ACCOUNT[v.Ref as keyof typeof ACCOUNT] ?? `<Ref ${v.Ref}>`;
  if (v['Fn::Join']) return v['Fn::Join'][1].map(rendered).join(v['Fn::Join'][0]);
  return `<${JSON.stringify(value)}>`;
}
/** IAM's wildcards: `*` any run of characters, `?` one. */
const globMatches = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\/]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(value);

/** The resources of `role`'s statements that allow secretsmanager:GetSecretValue, however written. */
function secretReads(t: ReturnType<typeof template>, role: string): string[] {
  return statementsOf(t, `${role}Role`)
    .filter(
      (s) =>
        s.Effect === 'Allow' && actionsOf(s).some((a) => globMatches(a, 'secretsmanager:GetSecretValue')),
    )
    .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]).map(rendered));
}
const functionEnv = (t: ReturnType<typeof template>, prefix: string) =>
  (t.toJSON().Resources[logicalId(t, 'AWS::Lambda::Function', `${prefix}Function`)].Properties.Environment
    .Variables ?? {}) as Record<string, unknown>;

describe("the identity providers' own secret", () => {
  it('is created empty and kept on teardown, read by each worker beside the main secret, and never by the API', () => {
    const t = withIdentity;
    const identity = logicalId(t, 'AWS::SecretsManager::Secret', 'IdentitySecret');
    const main = logicalId(t, 'AWS::SecretsManager::Secret', 'Secret');
    const resource = t.toJSON().Resources[identity];
    expect(resource.Properties.SecretString).toBe('{}');
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
    expect(resource.Properties.Description).toContain('corpSecret, shopToken');
    for (const worker of WORKERS) {
      expect(secretReads(t, worker).sort()).toEqual([`<Ref ${identity}>`, `<Ref ${main}>`].sort());
      expect(functionEnv(t, worker).IDENTITY_SECRET_ID).toEqual({ Ref: identity });
    }
    expect(secretReads(t, 'Api')).toEqual([`<Ref ${main}>`]);
    for (const role of ['Api', 'EventsDispatcher', 'CredentialsDispatcher']) {
      expect(JSON.stringify(statementsOf(t, `${role}Role`))).not.toContain(identity);
      expect(functionEnv(t, role).IDENTITY_SECRET_ID).toBeUndefined();
    }
  });

  it('outputs IdentitySecretArn, naming its keys; SecretKeys no longer lists them', () => {
    const outputs = withIdentity.toJSON().Outputs as Record<string, { Value: unknown; Description?: string }>;
    expect(outputs.IdentitySecretArn?.Value).toEqual({
      Ref: logicalId(withIdentity, 'AWS::SecretsManager::Secret', 'IdentitySecret'),
    });
    expect(outputs.IdentitySecretArn?.Description).toContain('corpSecret, shopToken');
    expect(outputs.SecretKeys?.Value).toBe('apiToken or apiKey, apiClients');
  });

  it('existing secrets by name: the API may read no ARN the identity secret can have; each worker reads both', () => {
    const t = template({
      alertsConfig: configPath,
      existingSecretName: 'ops/exposure-alerts',
      existingIdentitySecretName: 'ops/exposure-alerts-identity',
    });
    t.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const arn = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;
    const identityArn = arn('ops/exposure-alerts-identity');
    expect(secretReads(t, 'Api').length).toBe(1);
    expect(secretReads(t, 'Api').filter((r) => globMatches(r, identityArn))).toEqual([]);
    expect(secretReads(t, 'Api').some((r) => globMatches(r, arn('ops/exposure-alerts')))).toBe(true);
    for (const worker of WORKERS) {
      expect(secretReads(t, worker).some((r) => globMatches(r, identityArn))).toBe(true);
      expect(secretReads(t, worker).some((r) => globMatches(r, arn('ops/exposure-alerts')))).toBe(true);
      expect(functionEnv(t, worker).IDENTITY_SECRET_ID).toBe('ops/exposure-alerts-identity');
    }
    expect(functionEnv(t, 'Api').IDENTITY_SECRET_ID).toBeUndefined();
    const outputs = t.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(rendered(outputs.IdentitySecretArn?.Value)).toBe(
      'arn:aws:secretsmanager:eu-west-1:123456789012:secret:ops/exposure-alerts-identity',
    );
  });

  it('an existing identity secret by complete ARN is granted exactly, to the workers only', () => {
    const identityArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:idp-creds-Zy12Xw';
    const t = template({ alertsConfig: configPath, existingIdentitySecretName: identityArn });
    for (const worker of WORKERS) expect(secretReads(t, worker)).toContain(identityArn);
    expect(secretReads(t, 'Api').filter((r) => globMatches(r, identityArn))).toEqual([]);
    expect(JSON.stringify(statementsOf(t, 'ApiRole'))).not.toContain('idp-creds');
  });

  it('without identity providers and unnamed, there is none (and no IDENTITY_SECRET_ID, no output)', () => {
    const t = template();
    expect(Object.keys(t.findResources('AWS::SecretsManager::Secret'))).toHaveLength(1);
    expect(Object.keys(t.toJSON().Outputs)).not.toContain('IdentitySecretArn');
    for (const worker of WORKERS) expect(functionEnv(t, worker).IDENTITY_SECRET_ID).toBeUndefined();
  });
});
