/**
 * docs/deploy.md's cost table, made from the committed baseline (cost-baseline.json) by the same
 * model and prices as the cost section (cost-model.ts, prices.ts), never copied by hand: the bill
 * at the defaults (the default stack polling the built-in demo config's sources), with the example
 * config, with no streams, for the scale world's 401 streams line by line, and per stream and
 * tenant. A config is billed for the streams the product would poll for it (lib/poll/streams.ts).
 *
 * The cost section checks the page against it on every run (`cost.docsTable`: lines apart, at most
 * 0) and writes it when the baseline is written (BENCH_COST_BASELINE=write) or when asked
 * (BENCH_COST_DOCS=write). After a change of the stack, the prices or the configs, with the same
 * measurements, `npx tsx test/bench/cost-docs.ts --write` rewrites it without running the scale
 * world (without `--write`, it says how many lines are apart and exits 1 if any).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../infra/alerts-config.ts';
import { streamsFor } from '../../lib/poll/streams.ts';
import { type AlertsConfig, parseConfig } from '../../lib/rules/config.ts';
import { demoConfig } from '../../lib/rules/demo-config.ts';
import type { UpstreamClient } from '../../lib/upstream/client.ts';
import {
  type Bill,
  bill,
  COST_KINDS,
  type Deployment,
  every,
  fmt,
  type Kind,
  type Measured,
  type StackShape,
  TENANT_STREAMS,
  tenantsDeployment,
} from './cost-model.ts';
import { PRICES_READ_ON, PRICES_REGION } from './prices.ts';
import { type Figure, figure } from './report.ts';
import { round } from './stats.ts';

export const DOCS_PATH = join(PROJECT_ROOT, 'docs', 'deploy.md');
/** The cost section's committed baseline (measure-cost.ts writes it). */
export const BASELINE_PATH = join(import.meta.dirname, 'cost-baseline.json');
export const EXAMPLE_CONFIG_PATH = 'infra/alerts.config.example.json';
const BEGIN =
  '<!-- The cost table: written by `npm run bench -- --only cost` from test/bench/cost-baseline.json (test/bench/cost-docs.ts); not by hand. -->';
const END = '<!-- End of the cost table. -->';

/** What the page says the baseline is: where and when it was measured. */
export interface BaselineNote {
  date: string;
  machine: string;
}

/** The streams of `config` as the pollers would list them, by kind and by `tenants` entry. */
export function deploymentOf(config: AlertsConfig): Deployment {
  // Only counted: no page is read, so no client is needed.
  const none = {} as UpstreamClient;
  const streams = {} as Record<Kind, number>;
  const entries = new Map<number, Record<Kind, number>>();
  for (const kind of COST_KINDS) {
    const specs = streamsFor(config, kind, none);
    streams[kind] = specs.length;
    for (const spec of specs) {
      if (!spec.tenant) continue;
      const entry = entries.get(spec.tenant.id) ?? { events: 0, credentials: 0 };
      entry[kind] += 1;
      entries.set(spec.tenant.id, entry);
    }
  }
  return { streams, tenants: [...entries.values()], destinations: Object.keys(config.destinations).length };
}

/** The two configs the page bills: the defaults (the built-in demo config's sources) and the example. */
export function docsConfigs(): Record<'defaults' | 'example', AlertsConfig> {
  const text = readFileSync(join(PROJECT_ROOT, EXAMPLE_CONFIG_PATH), 'utf8');
  return { defaults: demoConfig, example: parseConfig(text, EXAMPLE_CONFIG_PATH).config };
}

/** $0.48, $8.53, $17, $443: cents below $10. */
export const money = (usd: number) => (usd >= 10 ? `$${Math.round(usd)}` : `$${usd.toFixed(2)}`);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A config's streams in words: `3 event streams, 2 credential domains, 1 tenants entry`. */
function streamsText(d: Deployment): string {
  return [
    plural(d.streams.events, 'event stream'),
    plural(d.streams.credentials, 'credential domain'),
    ...(d.tenants.length ? [plural(d.tenants.length, '`tenants` entry', '`tenants` entries')] : []),
    plural(d.destinations, 'destination'),
  ].join(', ');
}

/** The lines of a bill as the page groups them: the large ones alone, the small ones together. */
function billRows(b: Bill): string[] {
  const line = (id: string) => {
    const found = b.lines.find((l) => l.id === id);
    if (!found) throw new Error(`cost docs: no ${id} line in the bill`);
    return found;
  };
  const sum = (...ids: string[]) => ids.reduce((n, id) => n + line(id).usd, 0);
  const lambda = line('lambda');
  const dynamo = line('dynamodb');
  return [
    `| CloudWatch custom metrics: ${fmt(line('metrics').quantity)} metric-months (a metric is billed for the hours it gets data) | ${money(sum('metrics'))} |`,
    `| Lambda (arm64): ${lambda.detail}, ${fmt(lambda.quantity)} GB-s | ${money(sum('lambda'))} |`,
    `| DynamoDB on demand: ${dynamo.detail} | ${money(sum('dynamodb'))} |`,
    `| X-Ray traces (active tracing, sampled): ${fmt(line('xray').quantity)} | ${money(sum('xray'))} |`,
    `| SQS: ${fmt(line('sqs').quantity)} requests | ${money(sum('sqs'))} |`,
    `| CloudWatch: ${plural(line('dashboards').quantity, 'dashboard')}, ${fmt(line('alarms').quantity)} alarms, logs (${fmt(line('logs').quantity)} GB) | ${money(sum('dashboards', 'alarms', 'logs'))} |`,
    `| Secrets Manager, Scheduler, DynamoDB storage | ${money(sum('secrets', 'scheduler', 'storage'))} |`,
  ];
}

/** The table and the lines around it that the bench writes in docs/deploy.md (between the markers). */
export function costTable(measured: Measured, stack: StackShape, note: BaselineNote): string {
  const configs = docsConfigs();
  const defaults = deploymentOf(configs.defaults);
  const example = deploymentOf(configs.example);
  const world: Deployment = {
    streams: { events: measured.kinds.events.streams, credentials: measured.kinds.credentials.streams },
    tenants: [],
    destinations: measured.destinations,
  };
  const streams = world.streams.events + world.streams.credentials;
  const here = bill(measured, stack, world);
  const empty = bill(measured, stack, { ...world, streams: { events: 0, credentials: 0 } }).total;
  const tiers = [1, 10, 100].map((n) => bill(measured, stack, tenantsDeployment(n, 1)));
  const [, ten, hundred] = tiers as [Bill, Bill, Bill];
  const tenantStreams = TENANT_STREAMS.events + TENANT_STREAMS.credentials;
  const slower = (b: Bill) =>
    b.intervalS.events > stack.intervalS.events || b.intervalS.credentials > stack.intervalS.credentials
      ? `, with events ${every(b.intervalS.events)} and credentials ${every(b.intervalS.credentials)}: what the shared rate allows`
      : '';
  const hundredLine = (id: string) => hundred.lines.find((l) => l.id === id)?.usd ?? 0;
  const k = measured.kinds;
  return [
    BEGIN,
    `Measured on ${note.machine}, on ${note.date}; billed at ${PRICES_REGION} list prices read on ${PRICES_READ_ON}, for the stack as \`cdk synth\` makes it (${plural(stack.alarms, 'alarm')}, ${plural(stack.dashboards, 'dashboard')}, ${plural(stack.secrets, 'secret')}, ${stack.tracing ? 'active tracing, ' : ''}events ${every(stack.intervalS.events)}, credentials ${every(stack.intervalS.credentials)}):`,
    '',
    '| what | a month |',
    '|---|---|',
    `| **at the defaults**: the stack as deployed, with a config like the built-in demo's (${streamsText(defaults)}) | **${money(bill(measured, stack, defaults).total)}** |`,
    `| **the example config** (\`${EXAMPLE_CONFIG_PATH}\`: ${streamsText(example)}) | **${money(bill(measured, stack, example).total)}** |`,
    `| the stack with no streams | ${money(empty)} |`,
    `| **the bench's scale world, ${streams} streams** (${world.streams.events} event streams ${every(here.intervalS.events)}, ${world.streams.credentials} credential domains ${every(here.intervalS.credentials)}), of which: | **${money(here.total)}** |`,
    ...billRows(here),
    `| per 100 streams (less the stack with no streams) | ${money(((here.total - empty) / streams) * 100)} |`,
    `| per tenant of ${tenantStreams} streams (${TENANT_STREAMS.events} event streams, ${TENANT_STREAMS.credentials} domains) | ${money((ten.total - empty) / 10)} |`,
    `| 1 / 10 / 100 tenants of ${tenantStreams} streams (extrapolated) | ${tiers.map((b) => money(b.total)).join(' / ')} |`,
    '',
    `A visit costs an event stream about ${Math.round(k.events.visit.writeUnits)} DynamoDB write units and a domain ${Math.round(k.credentials.visit.writeUnits)}; a new credential brings ${Math.round(k.credentials.streamMetricsPerItem)} metric-hours, a new event ${Math.round(k.events.streamMetricsPerItem)}. At 100 tenants the metrics are ${money(hundredLine('metrics'))} of the ${money(hundred.total)} (DynamoDB ${money(hundredLine('dynamodb'))})${slower(hundred)}.`,
    END,
  ].join('\n');
}

/** The page with `table` in place of what is between the markers. */
function withTable(page: string, table: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`cost docs: ${DOCS_PATH} lacks the cost table's markers`);
  return `${page.slice(0, start)}${table}${page.slice(end + END.length)}`;
}

/** The lines of the page's table that differ from `table` (0: the page says what the bench bills). */
export function linesApart(table: string, page = readFileSync(DOCS_PATH, 'utf8')): number {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) return Number.POSITIVE_INFINITY;
  const theirs = page.slice(start, end + END.length).split('\n');
  const ours = table.split('\n');
  let apart = Math.abs(theirs.length - ours.length);
  for (let i = 0; i < Math.min(theirs.length, ours.length); i++) if (theirs[i] !== ours[i]) apart += 1;
  return apart;
}

/** Writes `table` into docs/deploy.md between the markers. */
export function writeCostTable(table: string): void {
  writeFileSync(DOCS_PATH, withTable(readFileSync(DOCS_PATH, 'utf8'), table));
}

/**
 * The cost section's figures of the page: this run's bill at the defaults and with the example
 * config, and the page's table against the baseline's bill, written first when asked (the header).
 */
export function docsFigures(
  measured: Measured,
  stack: StackShape,
  baseline: (BaselineNote & { measured: Measured }) | undefined,
  log: (line: string) => void,
): Figure[] {
  const table = baseline ? costTable(baseline.measured, stack, baseline) : undefined;
  if (table && (process.env.BENCH_COST_BASELINE === 'write' || process.env.BENCH_COST_DOCS === 'write')) {
    writeCostTable(table);
    log(`  cost: the cost table of ${DOCS_PATH} written from the baseline`);
  }
  const configs = docsConfigs();
  const usd = (n: number) => round(n, n >= 100 ? 0 : 2);
  const billOf = (config: AlertsConfig) => {
    const d = deploymentOf(config);
    const b = bill(measured, stack, d);
    const metrics = b.lines.find((l) => l.id === 'metrics')?.usd ?? 0;
    return {
      b,
      detail: `${streamsText(d)}; events ${every(b.intervalS.events)}, credentials ${every(b.intervalS.credentials)}; metrics $${usd(metrics)}`,
    };
  };
  const defaults = billOf(configs.defaults);
  const example = billOf(configs.example);
  return [
    figure({
      section: 'cost',
      id: 'cost.defaults',
      label: "  at the defaults: a config like the built-in demo's",
      value: usd(defaults.b.total),
      unit: '$',
      detail: defaults.detail,
    }),
    figure({
      section: 'cost',
      id: 'cost.example',
      label: `  the example config (${EXAMPLE_CONFIG_PATH})`,
      value: usd(example.b.total),
      unit: '$',
      detail: example.detail,
    }),
    figure({
      section: 'cost',
      id: 'cost.docsTable',
      label: "  lines of docs/deploy.md's cost table apart from the baseline's bill",
      value: table ? linesApart(table) : Number.NaN,
      unit: '',
      budget: { max: 0, holds: 'count' },
      detail: table
        ? 'rewrite: BENCH_COST_DOCS=write npm run bench -- --only cost (or npx tsx test/bench/cost-docs.ts --write), and commit it'
        : 'no billable baseline to write the table from',
    }),
  ];
}

/** The table the committed baseline bills today (the stack synthesized as the cost section does). */
export async function baselineTable(): Promise<string> {
  const { stackShape } = await import('./cost-stack.ts');
  const baseline = JSON.parse(readFileSync(BASELINE_PATH, 'utf8')) as BaselineNote & { measured: Measured };
  return costTable(baseline.measured, stackShape(), baseline);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = await baselineTable();
  if (process.argv.includes('--write')) {
    writeCostTable(table);
    process.stdout.write(`cost docs: ${DOCS_PATH} written from the committed baseline\n`);
  } else {
    const apart = linesApart(table);
    process.stdout.write(
      `cost docs: ${apart} lines of ${DOCS_PATH} apart from the committed baseline's bill\n`,
    );
    process.exitCode = apart === 0 ? 0 : 1;
  }
}
