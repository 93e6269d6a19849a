/**
 * The one real synth: esbuild bundles the five functions offline, as `cdk synth` does. Each
 * bundle is minified ESM with an external source map, leaves the AWS SDK to the runtime, stays
 * within its size budget, and loads: a child Node process imports it and gets a handler, its cold
 * start (config from the layer, secrets, clients) included. What the console's page costs the
 * API's start is checked here too, on the same bundle (a build of its own would cost an esbuild run).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
// @ts-expect-error a plain JavaScript module of the stack (infra/lambda-bundle.mjs), shared with its build step
import { START_BUDGET_KB } from '../../infra/lambda-bundle.mjs';
import { DESTINATION_TYPES } from '../../lib/destinations/kinds.ts';
import { build, EXAMPLE_CONFIG, logicalId, nagReport } from './harness.ts';

/**
 * What a function loads at its start, minified, without the AWS SDK (provided by the Lambda
 * runtime): `index.mjs` and the chunks it imports statically. The bundles are split
 * (infra/lambda-bundle.mjs): a destination kind's body (its renderers, notices and follow-ups)
 * is a chunk loaded when first used, as are the send path, the upstream's endpoints no poll calls,
 * the identity config's checks and the API's routes that only some requests take (the lists below).
 */
const BUDGET_BYTES = START_BUDGET_KB * 1024;

/** The files a function loads at its start, and their bytes: `index.mjs` and its static chunk imports. */
function loadedAtStart(dir: string): { files: string[]; bytes: number } {
  const files = ['index.mjs'];
  for (let i = 0; i < files.length; i++) {
    const code = readFileSync(join(dir, files[i] as string), 'utf8');
    // A static import of a chunk: `import{…}from"./chunk-X.mjs"` or `import"./chunk-X.mjs"` (a
    // dynamic one is `import("./chunk-X.mjs")`, loaded when first used).
    for (const m of code.matchAll(/import(?:\{[^}]*\}from|\*as \w+from)?"\.\/(chunk-[\w-]+\.mjs)"/g))
      if (!files.includes(m[1] as string)) files.push(m[1] as string);
  }
  return { files, bytes: files.reduce((n, f) => n + statSync(join(dir, f)).size, 0) };
}

/** The sources a function's bundle in `dir` loads at its start, and those in chunks it loads later. */
function sourcesByLoad(dir: string): { atStart: string[]; lazy: string[] } {
  const start = new Set(loadedAtStart(dir).files);
  const sourcesOf = (file: string) =>
    (JSON.parse(readFileSync(join(dir, `${file}.map`), 'utf8')) as { sources: string[] }).sources;
  return {
    atStart: [...start].flatMap(sourcesOf),
    lazy: readdirSync(dir)
      .filter((f) => /^chunk-.*\.mjs$/.test(f) && !start.has(f))
      .flatMap(sourcesOf),
  };
}

/** Each of `files` sits in a chunk loaded when first used, none at start. */
function expectLazy(files: readonly string[], atStart: string[], lazy: string[]): void {
  for (const file of files) {
    expect(
      lazy.some((s) => s.endsWith(file)),
      `${file} in a lazy chunk`,
    ).toBe(true);
    expect(
      atStart.some((s) => s.endsWith(file)),
      `${file} not at start`,
    ).toBe(false);
  }
}

let outdir: string;
let template: Template;
const assetDir = (type: string, prefix: string, codeKey: 'Code' | 'Content') => {
  const resource = template.findResources(type)[logicalId(template, type, prefix)];
  const key = String(resource?.Properties[codeKey].S3Key);
  return join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
};

beforeAll(() => {
  // With an alarm e-mail, as nag.test.ts synthesizes: the CloudFormation rules check that stack here.
  const built = build({ alarmEmail: 'oncall@example.com' }, { bundle: true, validate: true });
  outdir = built.outdir;
  template = Template.fromStack(built.stack);
  // The bundles import the AWS SDK from the runtime; here, from the project's node_modules.
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(outdir, 'node_modules'), 'dir');
}, 120_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const run = promisify(execFile);

const FUNCTIONS = [
  ['dispatch-events', 'EventsDispatcherFunction'],
  ['work-events', 'EventsWorkerFunction'],
  ['dispatch-credentials', 'CredentialsDispatcherFunction'],
  ['work-credentials', 'CredentialsWorkerFunction'],
  ['api', 'ApiFunction'],
] as const;

/**
 * The five cold starts, each in a child Node process as Lambda would load the bundle, started
 * together when the first is asked for (they wait on nothing but the machine): what each printed.
 */
let coldStarts: Map<string, Promise<string>> | undefined;
function coldStart(prefix: string): Promise<string> {
  coldStarts ??= new Map(FUNCTIONS.map(([, p]) => [p, loadInChild(p)]));
  return coldStarts.get(prefix) as Promise<string>;
}

function secretsFile(): string {
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
      socGoogleChatWebhook: 'https://chat.example/v1/spaces/AAAA/messages?key=k&token=t',
      socMattermostWebhook: 'https://mattermost.example/hooks/smoke',
      splunkHecToken: 'smoke-hec-token',
      sentinelClientSecret: 'smoke-entra-secret',
    }),
  );
  return secrets;
}

/** Imports the function's bundle in a child Node process and prints the type of its handler. */
async function loadInChild(prefix: string): Promise<string> {
  const dir = assetDir('AWS::Lambda::Function', prefix, 'Code');
  const layer = assetDir('AWS::Lambda::LayerVersion', 'AlertsConfig', 'Content');
  if (!existsSync(join(layer, 'alerts.config.json'))) throw new Error(`no alerts.config.json in ${layer}`);
  const script = `const m = await import(${JSON.stringify(pathToFileURL(join(dir, 'index.mjs')).href)}); console.log(typeof m.handler); process.exit(0);`;
  const { stdout } = await run(
    process.execPath,
    ['--enable-source-maps', '--input-type=module', '-e', script],
    {
      env: {
        PATH: process.env.PATH,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        // What the stack sets, with local stand-ins for the layer mount and the secret.
        ALERTS_CONFIG: join(layer, 'alerts.config.json'),
        SECRETS_FILE: secretsFile(),
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
  return stdout;
}

describe('real synth with esbuild', () => {
  it.each(FUNCTIONS)(
    `%s: minified ESM with a source map, the AWS SDK external, what it loads at start within ${START_BUDGET_KB} KB`,
    (name, prefix) => {
      const dir = assetDir('AWS::Lambda::Function', prefix, 'Code');
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      const size = statSync(join(dir, 'index.mjs')).size;
      const start = loadedAtStart(dir);
      console.info(`bundle ${name}: ${start.bytes} bytes at start (${(start.bytes / 1024).toFixed(1)} KiB)`);
      expect(start.bytes).toBeLessThanOrEqual(BUDGET_BYTES);
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
      // The runtime's SDK is loaded at start (with require, its one-file CommonJS build), not bundled:
      // from the handler's file or a chunk it imports statically.
      const atStart = start.files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
      expect(/\("@aws-sdk\/client-dynamodb"\)/.test(atStart), 'requires the runtime SDK').toBe(true);
      // The dispatchers send to SQS with the runtime's client too, and the API (a Slack request's
      // work goes to the events worker); the workers do not load it.
      expect(/\("@aws-sdk\/client-sqs"\)/.test(atStart), 'requires the SQS client').toBe(
        name.startsWith('dispatch-') || name === 'api',
      );
      expect(map.sources.filter((s: string) => s.includes('node_modules/@aws-sdk/'))).toEqual([]);
    },
  );

  it('a worker loads each destination kind, the follow-ups, the notices and the send path only when first used', () => {
    const dir = assetDir('AWS::Lambda::Function', 'EventsWorkerFunction', 'Code');
    const { atStart, lazy } = sourcesByLoad(dir);
    // Every kind's body and what it imports (its renderers, its follow-ups), and the notices' and
    // follow-ups' shared words: loaded when a message of the kind is first rendered or sent.
    const lazyFiles = [
      ...DESTINATION_TYPES.flatMap((kind) =>
        ['body.ts', 'render.ts', 'follow-up.ts']
          .map((file) => `lib/destinations/${kind}/${file}`)
          .filter((file) => existsSync(join(PROJECT_ROOT, file))),
      ),
      'lib/render/notice.ts',
      'lib/render/follow-up.ts',
      // A pass's send path, with its first message due; what only some configs or runs use (inline
      // delivery, the heartbeat, the quota, threads, Slack work); a stream's failures; the table's creation.
      ...['queue', 'settle', 'messages', 'thread', 'notify', 'inline', 'post'].map(
        (f) => `lib/deliver/${f}.ts`,
      ),
      ...['heartbeat', 'jobs-heartbeat', 'quota', 'failure', 'catalog'].map((f) => `lib/poll/${f}.ts`),
      ...['heartbeat', 'quota', 'thread-records', 'table-create'].map((f) => `lib/state/${f}.ts`),
      'lib/actions/worker-slack.ts',
      // The upstream endpoints no poll calls (lookups, toggles, event actions) and their schemas.
      'lib/upstream/other-endpoints.ts',
      'lib/upstream/schemas.ts',
      // The identity config's schema and checks, for a config with `identity`.
      ...['identity/schema', 'rules/schema', 'rules/config-identity'].map((f) => `lib/${f}.ts`),
      // A refused tenant's report, with the first refusal.
      'lib/poll/refused.ts',
    ];
    expectLazy(lazyFiles, atStart, lazy);
    // The faces are what every function loads at start.
    for (const kind of DESTINATION_TYPES)
      expect(
        atStart.some((s) => s.endsWith(`lib/destinations/${kind}/index.ts`)),
        `${kind}'s face at start`,
      ).toBe(true);
  });

  it('the API loads the upstream client, the Slack app, the OpenAPI document and account actions only when first used', () => {
    const dir = assetDir('AWS::Lambda::Function', 'ApiFunction', 'Code');
    const { atStart, lazy } = sourcesByLoad(dir);
    // Most requests read the table alone; these load with the first request that needs them.
    expectLazy(
      [
        'lib/upstream/client.ts',
        'lib/state/governor.ts',
        'lib/api/slack.ts',
        'lib/api/openapi-packed.ts',
        'lib/api/identity-requests.ts',
        'lib/actions/lookup.ts',
      ],
      atStart,
      lazy,
    );
  });

  it('the console page and its server load only with the first request for the page, never at the API’s start', () => {
    const dir = assetDir('AWS::Lambda::Function', 'ApiFunction', 'Code');
    const { atStart, lazy } = sourcesByLoad(dir);
    expectLazy(['lib/console/page-packed.ts', 'lib/console/page.ts'], atStart, lazy);
    // The routes themselves are at start (they are registered there), and are small.
    expect(atStart.some((s) => s.endsWith('lib/console/routes.ts'))).toBe(true);
  });

  it("the CDK's CloudFormation rules find nothing: the report lists only cdk-nag's two packs, both clean", () => {
    // A finding of theirs would be a third plugin here (nag.test.ts checks the packs' acknowledgements).
    expect(nagReport(outdir).pluginReports.map((p) => [p.pluginName, p.conclusion, p.violations])).toEqual([
      ['AwsSolutions', 'success', []],
      ['Serverless', 'success', []],
    ]);
  });

  it('the config layer holds the validated config', () => {
    const dir = assetDir('AWS::Lambda::LayerVersion', 'AlertsConfig', 'Content');
    expect(readFileSync(join(dir, 'alerts.config.json'), 'utf8')).toBe(readFileSync(EXAMPLE_CONFIG, 'utf8'));
  });

  it.each(FUNCTIONS)(
    '%s: the bundle loads and builds its runtime at cold start, as Lambda would',
    async (_name, prefix) => {
      expect((await coldStart(prefix)).trim()).toBe('function');
    },
  );
});
