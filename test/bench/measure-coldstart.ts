/**
 * 4. Cold start, per Lambda function: the size of its bundle (built as the CDK builds it, the AWS
 * SDK left out), and the time to import and initialise that bundle in a fresh Node process: from
 * the start of the import to its end, which builds the function's whole runtime at top level
 * (config, secrets, clients). Median of 10 processes, each started as Lambda starts ours (the node
 * flags of its Node.js runtime, no NODE_OPTIONS, the default `sourceMapTraces=off`; in a memory
 * cgroup of the function's memory: procs.ts) and with Lambda's environment: no DYNAMODB_ENDPOINT,
 * so no DescribeTable at init. Node's own start, before the import begins, is shown beside it.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_MEMORY_MB, DISPATCHER_MEMORY_MB, POLLER_MEMORY_MB } from '../../infra/function.ts';
// @ts-expect-error a plain JavaScript module of the stack (infra/lambda-bundle.mjs), shared with its build step
import { START_BUDGET_KB } from '../../infra/lambda-bundle.mjs';
import { bundleFunction } from './bundle.ts';
import { asLambda, ROOT, startEmulatorProcess } from './procs.ts';
import { type Figure, figure } from './report.ts';
import { median, round } from './stats.ts';

/** The functions the stack deploys (infra/stack.ts): per kind a worker and a dispatcher, and the API. */
export const FUNCTIONS = [
  'work-events',
  'work-credentials',
  'dispatch-events',
  'dispatch-credentials',
  'api',
] as const;
const RUNS = 10;
/**
 * What a function loads at start (index.mjs and its static chunks): every function within
 * infra/lambda-bundle.mjs's START_BUDGET_KB, the budget test/infra/synth.test.ts checks too.
 */
const MAX_BUNDLE_KB = START_BUDGET_KB;
/**
 * A function's import and initialise, within this multiple of the DynamoDB client's import alone
 * measured in the same run: absolute times on a shared machine say little (the SDK's import alone
 * took 91 ms on a quiet day and 184 ms on a busy one), the ratio does (work-events 1.13 before
 * issue 48 made its start smaller, 1.07 after).
 */
const MAX_INIT_RATIO = 1.2;

interface InitTiming {
  sinceProcessStartMs: number;
  importMs: number;
}

function runOnce(bundle: string, env: Record<string, string>, memorySize: number): Promise<InitTiming> {
  return new Promise((resolve, reject) => {
    const { command, args } = asLambda(memorySize, [join(ROOT, 'test/bench/init-runner.mjs'), bundle]);
    const child = spawn(command, args, {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    child.on('exit', (code) => {
      const line = /BENCH_INIT (\{.*\})/.exec(out)?.[1];
      if (code !== 0 || !line)
        reject(new Error(`${bundle} did not start (code ${code}): ${err.slice(-800)}`));
      else resolve(JSON.parse(line) as InitTiming);
    });
  });
}

export async function measureColdStart(): Promise<{ figures: Figure[]; raw: unknown }> {
  const dir = join(ROOT, 'bench-results', 'bundles');
  mkdirSync(dir, { recursive: true });
  const emu = await startEmulatorProcess({ events: 20 });
  try {
    // Nothing reaches DynamoDB during init (as on Lambda), so no table is needed.
    const table = 'exposure-alerts-coldstart';
    const token = 'bench-api-client-token';
    const secretsFile = join(dir, 'secrets.json');
    const configFile = join(dir, 'alerts.config.json');
    writeFileSync(
      secretsFile,
      JSON.stringify({
        apiClients: { bench: createHash('sha256').update(token).digest('hex') },
        siemKey: 'bench-signing-secret',
      }),
    );
    writeFileSync(
      configFile,
      JSON.stringify({
        sources: {
          tenantEvents: { lookback: 'PT24H' },
          credentials: { domains: ['acme.test'], lookback: 'P7D' },
        },
        destinations: {
          siem: { type: 'webhook', url: 'http://127.0.0.1:9/hook', signingSecret: { secret: 'siemKey' } },
        },
        routes: [{ name: 'everything', match: {}, to: ['siem'] }],
      }),
    );
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      TABLE_NAME: table,
      EXPOSURE_API_URL: emu.url,
      EXPOSURE_API_TOKEN: emu.token,
      SECRETS_FILE: secretsFile,
      ALERTS_CONFIG: configFile,
      LOG_LEVEL: 'info',
      // The dispatchers' queue (never reached during init).
      STREAM_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/exposure-alerts-streams',
    };
    const figures: Figure[] = [];
    const raw: Record<string, unknown> = {};
    // What every bundle loads first, for scale: the DynamoDB client package alone.
    const sdk: InitTiming[] = [];
    for (let i = 0; i < RUNS; i++) sdk.push(await runOnce('@aws-sdk/client-dynamodb', env, POLLER_MEMORY_MB));
    raw.sdk = sdk;
    figures.push(
      figure({
        section: 'coldstart',
        id: 'coldstart.sdkImportMs',
        label: `@aws-sdk/client-dynamodb as an ES module import alone (for scale), median of ${RUNS}`,
        value: round(median(sdk.map((r) => r.importMs)), 1),
        unit: 'ms',
        detail: `process start to imported: ${round(median(sdk.map((r) => r.sinceProcessStartMs)), 1)} ms`,
      }),
    );
    for (const name of FUNCTIONS) {
      const built = await bundleFunction(join(ROOT, 'functions', `${name}.ts`), join(dir, name));
      const bundle = built.index;
      const bytes = built.bytes;
      const runs: InitTiming[] = [];
      const memory =
        name === 'api'
          ? API_MEMORY_MB
          : name.startsWith('dispatch')
            ? DISPATCHER_MEMORY_MB
            : POLLER_MEMORY_MB;
      for (let i = 0; i < RUNS; i++) runs.push(await runOnce(bundle, env, memory));
      const sinceStart = median(runs.map((r) => r.sinceProcessStartMs));
      const init = median(runs.map((r) => r.importMs));
      const sdkMs = median(sdk.map((r) => r.importMs));
      raw[name] = { bytes, runs };
      figures.push(
        figure({
          section: 'coldstart',
          id: `coldstart.${name}.bundleKb`,
          label: `${name}: loaded at start, minified, AWS SDK excluded`,
          value: round(bytes / 1024, 1),
          unit: 'KB',
          budget: { max: MAX_BUNDLE_KB, holds: 'count' },
        }),
        figure({
          section: 'coldstart',
          id: `coldstart.${name}.initMs`,
          label: `${name}: import and initialise, median of ${RUNS}`,
          value: round(init, 1),
          unit: 'ms',
          detail: `process start to initialised: ${round(sinceStart, 1)} ms`,
        }),
        figure({
          section: 'coldstart',
          id: `coldstart.${name}.initRatio`,
          label: `${name}: import and initialise ÷ the SDK's import alone, same run`,
          value: round(init / sdkMs, 2),
          unit: 'x',
          budget: { max: MAX_INIT_RATIO, holds: 'ratio' },
        }),
      );
    }
    return { figures, raw };
  } finally {
    await emu.stop();
  }
}
