/**
 * The one real synth: esbuild bundles the five functions offline, as `cdk synth` does. Each
 * bundle is minified ESM with an external source map, leaves the AWS SDK to the runtime, stays
 * within its size budget, and loads: a child Node process imports it and gets a handler, its cold
 * start (config from the layer, secrets, clients) included.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { build, EXAMPLE_CONFIG, logicalId } from './harness.ts';

/** Minified, without the AWS SDK (provided by the Lambda runtime). */
const BUDGET_BYTES = 150 * 1024;
/**
 * The API: 150 KB until many tenants (a client per tenant for actions and lookups, the tenants in
 * status) made it 153 KB; 155 KB until the bundles are split.
 */
const API_BUDGET_BYTES = 155 * 1024;
/**
 * The workers deliver, so they hold every renderer: 148 KB, then 166 KB with Teams and PagerDuty,
 * then 177 KB with the clock correction, the shared quota probe and the text-safety rules, then
 * 202 KB with the Slack app (threads, follow-ups), finishing interrupted actions, and the work a
 * Slack request leaves for them; 219 KB with Jira, ServiceNow, Splunk and Sentinel; 225 KB with
 * Discord; 235 KB with many tenants. 240 KB, with their init still about half of its 150 ms
 * budget, until the bundle is split (each destination kind's code loaded only when the config has
 * one), which brings every bundle under 200 KB.
 */
const WORKER_BUDGET_BYTES = 240 * 1024;
const budgetOf = (name: string) =>
  name.startsWith('work-') ? WORKER_BUDGET_BYTES : name === 'api' ? API_BUDGET_BYTES : BUDGET_BYTES;

let outdir: string;
let template: Template;
const assetDir = (type: string, prefix: string, codeKey: 'Code' | 'Content') => {
  const resource = template.findResources(type)[logicalId(template, type, prefix)];
  const key = String(resource?.Properties[codeKey].S3Key);
  return join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
};

beforeAll(() => {
  const built = build({}, { bundle: true });
  outdir = built.outdir;
  template = Template.fromStack(built.stack);
  // The bundles import the AWS SDK from the runtime; here, from the project's node_modules.
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(outdir, 'node_modules'), 'dir');
}, 120_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const FUNCTIONS = [
  ['dispatch-events', 'EventsDispatcherFunction'],
  ['work-events', 'EventsWorkerFunction'],
  ['dispatch-credentials', 'CredentialsDispatcherFunction'],
  ['work-credentials', 'CredentialsWorkerFunction'],
  ['api', 'ApiFunction'],
] as const;

describe('real synth with esbuild', () => {
  it.each(FUNCTIONS)(
    '%s: minified ESM with a source map, the AWS SDK external, within its budget (150 KB; the API 155 KB, the workers 240 KB)',
    (name, prefix) => {
      const dir = assetDir('AWS::Lambda::Function', prefix, 'Code');
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      const size = statSync(join(dir, 'index.mjs')).size;
      console.info(`bundle ${name}: ${size} bytes (${(size / 1024).toFixed(1)} KiB)`);
      expect(size).toBeLessThanOrEqual(budgetOf(name));
      // ESM with `require` defined for the CommonJS dependencies that call it.
      expect(code.startsWith("import { createRequire as __alertsCreateRequire } from 'node:module';")).toBe(
        true,
      );
      // (Booleans, not toMatch: a failure would print the whole bundle.)
      expect(/export\{[^}]*\bas handler\b[^}]*\}/.test(code), 'exports handler').toBe(true);
      // Minified: long lines, not one statement per line (unminified code averages
      // about 40 characters a line; template literals keep their own line breaks).
      const lines = code.split('\n').length;
      expect(size / lines, `${lines} lines`).toBeGreaterThan(1000);
      expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
      const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8'));
      expect(map.sources.some((s: string) => s.endsWith(`functions/${name}.ts`))).toBe(true);
      // The runtime's SDK is loaded (with require, its one-file CommonJS build), not bundled.
      expect(/\("@aws-sdk\/client-dynamodb"\)/.test(code), 'requires the runtime SDK').toBe(true);
      // The dispatchers send to SQS with the runtime's client too, and the API (a Slack request's
      // work goes to the events worker); the workers do not load it.
      expect(/\("@aws-sdk\/client-sqs"\)/.test(code), 'requires the SQS client').toBe(
        name.startsWith('dispatch-') || name === 'api',
      );
      expect(map.sources.filter((s: string) => s.includes('node_modules/@aws-sdk/'))).toEqual([]);
    },
  );

  it('the config layer holds the validated config', () => {
    const dir = assetDir('AWS::Lambda::LayerVersion', 'AlertsConfig', 'Content');
    expect(readFileSync(join(dir, 'alerts.config.json'), 'utf8')).toBe(readFileSync(EXAMPLE_CONFIG, 'utf8'));
  });

  it.each(FUNCTIONS)(
    '%s: the bundle loads and builds its runtime at cold start, as Lambda would',
    (_name, prefix) => {
      const dir = assetDir('AWS::Lambda::Function', prefix, 'Code');
      const secrets = join(outdir, 'secrets.json');
      writeFileSync(
        secrets,
        JSON.stringify({
          apiToken: 'smoke-token',
          apiClients: { smoke: 'a'.repeat(64) },
          socSlackWebhook: 'https://hooks.slack.example/T000/B000/xyz',
          socSlackBotToken: 'xoxb-smoke-token',
          siemKey: 'smoke-signing-key',
          socTeamsWebhook: 'https://prod.environment.api.powerplatform.example/workflows/x',
          oncallRoutingKey: 'R0ut1ngKeyForTestsOnly0123456789',
          jiraApiToken: 'smoke-jira-token',
          servicenowPassword: 'smoke-servicenow-password',
          socDiscordWebhook: 'https://discord.example/api/webhooks/1/smoke',
          splunkHecToken: 'smoke-hec-token',
          sentinelClientSecret: 'smoke-entra-secret',
        }),
      );
      const layer = assetDir('AWS::Lambda::LayerVersion', 'AlertsConfig', 'Content');
      expect(existsSync(join(layer, 'alerts.config.json'))).toBe(true);
      const script = `const m = await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)}); console.log(typeof m.handler); process.exit(0);`;
      const out = execFileSync(
        process.execPath,
        ['--enable-source-maps', '--input-type=module', '-e', script],
        {
          env: {
            PATH: process.env.PATH,
            // What the stack sets, with local stand-ins for the layer mount and the secret.
            ALERTS_CONFIG: join(layer, 'alerts.config.json'),
            SECRETS_FILE: secrets,
            TABLE_NAME: 'smoke-table',
            // A dispatcher's; the others ignore it.
            STREAM_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/smoke-queue',
            AWS_REGION: 'us-east-1',
            LOG_LEVEL: 'error',
          },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(out.trim()).toBe('function');
    },
  );
});
