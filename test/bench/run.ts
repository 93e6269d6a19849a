/**
 * `npm run bench [-- --out <file>] [--only <sections>]`: the benchmark suite of the performance
 * issue, side by side in one run: drain overhead and DynamoDB requests per item (drain), memory,
 * cold start, delivery, API, a stream's first walk over a long history (history), and many
 * streams drained by concurrent workers under the upstream's rate limits (scale: `--scale-x N`
 * multiplies the limits, default 10; `--scale-load F` runs that share of the load), and a
 * credential digest to a Slack app as threads (slackapp), and what identity lookups cost a
 * credential cycle against none (identity). It prints
 * one table, writes the same figures as JSON (default bench-results/bench.json, git-ignored), and
 * exits 1 when a budget is broken (2 on a usage error).
 *
 * Each section runs in a bench process of its own (SECTION_CHILD) and starts its own dynalite and
 * emulator processes; the product runs in bench workers (worker.ts), bundled first as the CDK
 * bundles our Lambda functions. Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { API_MEMORY_MB, POLLER_MEMORY_MB } from '../../infra/function.ts';
import type { Optimisations } from '../../lib/runtime.ts';
import { bundleLikeLambda } from './bundle.ts';
import { measureApi } from './measure-api.ts';
import { measureColdStart } from './measure-coldstart.ts';
import { measureCost } from './measure-cost.ts';
import { measureDelivery } from './measure-delivery.ts';
import { measureDrain } from './measure-drain.ts';
import { measureHistory } from './measure-history.ts';
import { measureIdentity } from './measure-identity.ts';
import { measureLatency } from './measure-latency.ts';
import { measureMemory } from './measure-memory.ts';
import { measureScale, type ScaleOptions } from './measure-scale.ts';
import { measureSlackApp } from './measure-slack-app.ts';
import { memoryLimited, ROOT, removeCgroups, stopLeftovers, WORKER_BUNDLE } from './procs.ts';
import { type Figure, formatTable, machine, type Report, type SectionRun, writeReport } from './report.ts';
import { round } from './stats.ts';

/**
 * What `--without` can turn off (lib/runtime.ts Optimisations), to measure each one's worth; and
 * the console's alert index, to measure its cost.
 */
const SWITCHES = ['packs', 'claimMark', 'inline', 'pipeline', 'alertIndex'] as const;
let without: Optimisations = {};
let scale: ScaleOptions = { multiplier: 10, load: 1 };

const SECTIONS = {
  drain: (log: (line: string) => void) => measureDrain(log, without),
  memory: (log: (line: string) => void) => measureMemory(log),
  coldstart: () => measureColdStart(),
  delivery: () => measureDelivery(),
  api: () => measureApi(),
  history: (log: (line: string) => void) => measureHistory(log),
  scale: (log: (line: string) => void) => measureScale(log, scale),
  slackapp: (log: (line: string) => void) => measureSlackApp(log),
  identity: (log: (line: string) => void) => measureIdentity(log),
  latency: (log: (line: string) => void) => measureLatency(log),
  cost: (log: (line: string) => void) => measureCost(log, scale),
} as const;
type Section = keyof typeof SECTIONS;

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run bench -- [--out <file.json>] [--only ${Object.keys(SECTIONS).join(',')}] [--without ${SWITCHES.join(',')}] [--scale-x N] [--scale-load F]\n`,
  );
  process.exit(2);
}

/**
 * Set in the process that runs one section for the run (sectionInChild). Each section runs in a
 * bench process of its own, so none inherits what the ones before left in the bench's process.
 * That process is the one thing a section shared with the sections before it (each starts and
 * stops its own dynalite, emulator and workers, on tables of its own): the scale section hands its
 * 401 jobs to the workers one at a time from it and takes their webhooks in it, so a pause of
 * this process (collecting a heap grown over six sections) leaves the rate tiers idle. Its sweep
 * measured 1.16 in a full run against 1.13 alone (issue 48).
 */
const SECTION_CHILD = process.env.BENCH_SECTION_CHILD === '1';

/** Runs `name` in a bench process of its own (this script, BENCH_SECTION_CHILD=1); its report. */
async function sectionInChild(
  name: Section,
  values: { without?: string; 'scale-x'?: string; 'scale-load'?: string },
): Promise<Report> {
  const part = join(tmpdir(), `exposure-alerts-bench-${process.pid}-${name}.json`);
  const args = [
    ...process.execArgv,
    process.argv[1] as string,
    '--only',
    name,
    '--out',
    part,
    ...(values.without ? ['--without', values.without] : []),
    ...(values['scale-x'] ? ['--scale-x', values['scale-x']] : []),
    ...(values['scale-load'] ? ['--scale-load', values['scale-load']] : []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, BENCH_SECTION_CHILD: '1' },
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the ${name} section failed (exit ${code}); its output is above`);
  try {
    return JSON.parse(readFileSync(part, 'utf8')) as Report;
  } finally {
    rmSync(part, { force: true });
  }
}

async function main(): Promise<number> {
  let values: { out?: string; only?: string; without?: string; 'scale-x'?: string; 'scale-load'?: string };
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' },
        only: { type: 'string' },
        without: { type: 'string' },
        'scale-x': { type: 'string' },
        'scale-load': { type: 'string' },
      },
    }));
  } catch (error) {
    usage((error as Error).message);
  }
  const multiplier = Number(values['scale-x'] ?? 10);
  if (!Number.isInteger(multiplier) || multiplier < 1) usage('--scale-x must be a whole number, 1 or more');
  const load = Number(values['scale-load'] ?? 1);
  if (!(load > 0 && load <= 1)) usage('--scale-load must be a number above 0, at most 1');
  scale = { multiplier, load };
  for (const name of values.without?.split(',').map((s) => s.trim()) ?? []) {
    if (!(SWITCHES as readonly string[]).includes(name))
      usage(`unknown --without switch ${JSON.stringify(name)}`);
    without = { ...without, [name]: false };
  }
  const only = values.only?.split(',').map((s) => s.trim()) ?? Object.keys(SECTIONS);
  for (const name of only) if (!(name in SECTIONS)) usage(`unknown section ${JSON.stringify(name)}`);
  const out = resolve(values.out ?? 'bench-results/bench.json');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = Date.now();
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  if (!SECTION_CHILD) {
    log('bench: bundling the bench worker as the CDK bundles a Lambda function');
    await bundleLikeLambda(resolve(ROOT, 'test/bench/worker.ts'), WORKER_BUNDLE);
  }
  const limits = [POLLER_MEMORY_MB, API_MEMORY_MB].every(memoryLimited)
    ? `functions run under their Lambda memory (${POLLER_MEMORY_MB} / ${API_MEMORY_MB} MB cgroups)`
    : 'NO memory cgroup could be made here: functions run unlimited, unlike on Lambda (memory figures overstate)';
  if (!SECTION_CHILD) log(`bench: ${limits}`);
  const figures: Figure[] = [];
  const raw: Record<string, unknown> = {};
  const sections: SectionRun[] = [];
  for (const name of only as Section[]) {
    if (!SECTION_CHILD) {
      // Each section in a bench process of its own (see SECTION_CHILD).
      const part = await sectionInChild(name, values);
      figures.push(...part.figures);
      raw[name] = part.raw[name];
      sections.push(...part.sections);
      continue;
    }
    const t0 = Date.now();
    const loadBefore = round(loadavg()[0] as number, 2);
    log(`bench: ${name} (1-minute load ${loadBefore})`);
    const result = await SECTIONS[name](log);
    figures.push(...result.figures);
    raw[name] = result.raw;
    const seconds = round((Date.now() - t0) / 1000, 1);
    const loadAfter = round(loadavg()[0] as number, 2);
    // What the section left running (it stops its own; one that failed half-way may not).
    const leftovers = await stopLeftovers();
    if (leftovers) log(`bench: stopped ${leftovers} processes ${name} left running`);
    sections.push({ name, seconds, loadBefore, loadAfter, leftovers });
    log(`bench: ${name} took ${seconds} s (1-minute load ${loadAfter})`);
  }
  const host = machine();
  const passed = figures.every((f) => f.pass !== false);
  const durationS = round((Date.now() - started) / 1000, 1);
  const report: Report = {
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    startedAt: new Date(started).toISOString(),
    durationS,
    machine: host,
    limits,
    sections,
    passed,
    figures,
    raw,
  };
  writeReport(out, report);
  if (SECTION_CHILD) return 0;
  const off = Object.keys(without);
  const title = `exposure-alerts bench: ${host.cpu}, ${host.cores} cores, ${host.memoryGb} GB, Node ${host.node}; ${limits}; ${durationS} s${off.length ? `; WITHOUT ${off.join(', ')}` : ''}`;
  process.stdout.write(`\n${formatTable(figures, title)}\n\n`);
  const broken = figures.filter((f) => f.pass === false);
  process.stdout.write(
    broken.length
      ? `${broken.length} budget${broken.length > 1 ? 's' : ''} broken: ${broken.map((f) => f.id).join(', ')}\n`
      : 'every budget holds\n',
  );
  process.stdout.write(`figures written to ${out}\n`);
  return passed ? 0 : 1;
}

main().then(
  (code) => {
    removeCgroups();
    process.exit(code);
  },
  (error: unknown) => {
    removeCgroups();
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
