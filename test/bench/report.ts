/**
 * What a benchmark run reports: figures (a measured value, its unit, and its budget when the issue
 * sets one), the machine they came from, one printed table, and the same as JSON.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { dirname } from 'node:path';

export interface Budget {
  /** The value must be at most this. */
  max: number;
  /**
   * Why the budget holds on a busy host as on a quiet one (docs/performance.md lists them all):
   * - `ratio`: the value is a time divided by a baseline measured in the same run, interleaved with
   *   it (bare paging, a bare HTTP round trip, a floor of waits), so what slows both cancels;
   * - `median`: a time, the median of several runs, so one slow run does not break it;
   * - `count`: no time at all (requests, messages, bytes, items, MB): the host's speed does not
   *   change it;
   * - `percentile`: a wait made mostly of the schedule (match-to-chat latency: the p99 of hundreds
   *   of events over 30 cycles), where the host's speed is a few seconds of 90.
   */
  holds?: 'ratio' | 'median' | 'count' | 'percentile';
  /** What the figure aims at, below the budget: printed beside it, never failed on. */
  goal?: number;
}

export interface Figure {
  /** Which of the measurements it belongs to. */
  section:
    | 'drain'
    | 'requests'
    | 'memory'
    | 'coldstart'
    | 'delivery'
    | 'api'
    | 'history'
    | 'scale'
    | 'slackapp'
    | 'identity'
    | 'latency'
    | 'cost';
  /** Stable key, e.g. `drain.ratio`. */
  id: string;
  label: string;
  value: number;
  unit: string;
  budget?: Budget;
  /** Set when there is a budget. */
  pass?: boolean;
  /** A related figure or how it was measured, in a few words (the table's last column). */
  detail?: string;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  os: string;
}

export function machine(): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${release()}`,
  };
}

export function figure(f: Omit<Figure, 'pass'>): Figure {
  return f.budget ? { ...f, pass: f.value <= f.budget.max } : f;
}

function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  const digits =
    Number.isInteger(value) && unit !== 'x' ? 0 : Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = value.toFixed(digits);
  return unit === '' || unit === 'x' ? `${text}${unit}` : `${text} ${unit}`;
}

/** How a budget holds, and its goal: ` (ratio; goal 1.05x)`. */
function budgetNote(budget: Budget, unit: string): string {
  const notes = [
    ...(budget.holds ? [budget.holds] : []),
    ...(budget.goal === undefined ? [] : [`goal ${formatValue(budget.goal, unit)}`]),
  ];
  return notes.length ? ` (${notes.join('; ')})` : '';
}

/** One table, aligned columns, grouped by section. */
export function formatTable(figures: readonly Figure[], title: string): string {
  const rows = figures.map((f) => [
    f.label,
    formatValue(f.value, f.unit),
    f.budget ? `<= ${formatValue(f.budget.max, f.unit)}${budgetNote(f.budget, f.unit)}` : '',
    f.budget ? (f.pass ? 'pass' : 'FAIL') : '',
    f.detail ?? '',
  ]);
  const header = ['figure', 'value', 'budget', 'result', 'note'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 1 || i === 2 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [title, line(header).trimEnd(), rule];
  let section: string | undefined;
  figures.forEach((f, i) => {
    if (section !== undefined && f.section !== section) out.push('');
    section = f.section;
    out.push(line(rows[i] as string[]).trimEnd());
  });
  return out.join('\n');
}

/** One section of a run: how long it took, the host's 1-minute load around it, what it found left running. */
export interface SectionRun {
  name: string;
  seconds: number;
  loadBefore: number;
  loadAfter: number;
  /** Processes a section before left running, stopped before this one began (should be 0). */
  leftovers: number;
}

export interface Report {
  command: string;
  startedAt: string;
  durationS: number;
  machine: Machine;
  /** Whether the functions ran under their Lambda memory limit (procs.ts). */
  limits: string;
  sections: SectionRun[];
  passed: boolean;
  figures: Figure[];
  /** Everything measured on the way (runs, counts), per section. */
  raw: Record<string, unknown>;
}

export function writeReport(path: string, report: Report): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
