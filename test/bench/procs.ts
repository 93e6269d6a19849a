/**
 * The processes a benchmark runs beside the product: dynalite and the upstream emulator each in a
 * child process of their own (so the measured process holds only the product), and bench workers
 * (a child running one scenario against them, reporting over IPC).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import type { RateStats } from '../../lib/emulator/limits.ts';
import { createDynamoClient, ensureTable } from '../../lib/state/table.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The processes this module started that are still running (stopLeftovers). */
const running = new Set<ChildProcess>();

function tracked(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves with the first match of `pattern` in the child's output, or rejects when it exits first. */
function waitForLine(
  child: ChildProcess,
  pattern: RegExp,
  what: string,
  timeoutMs = 30_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = pattern.exec(seen);
      if (match) {
        cleanup();
        resolve(match[1] ?? match[0]);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${what} exited (code ${code}) before it was ready: ${seen.slice(-500)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what} was not ready within ${timeoutMs} ms: ${seen.slice(-500)}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', onExit);
  });
}

/** dynalite in its own process, in memory. */
export async function startDynaliteProcess(): Promise<Child> {
  const port = await freePort();
  const child = tracked(
    spawn(
      process.execPath,
      [
        ...(process.env.BENCH_DYNALITE_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []),
        join(ROOT, 'node_modules/dynalite/cli.js'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--createTableMs',
        '0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  await waitForLine(child, /listening at/i, 'dynalite');
  const url = `http://127.0.0.1:${port}`;
  // SIGINT lets a profiled dynalite (BENCH_DYNALITE_NODE_OPTIONS=--cpu-prof) write its profile.
  return { url, process: child, stop: () => stopChild(child, 'SIGINT') };
}

/** Creates a fresh table in a dynalite and returns its name. */
export async function createTable(endpoint: string, name: string): Promise<string> {
  const client = createDynamoClient({ endpoint });
  try {
    await ensureTable(client, name);
  } finally {
    client.destroy();
  }
  return name;
}

export interface EmulatorProcess extends Child {
  token: string;
  /** PUT /_emulator/settings. */
  settings(body: Record<string, unknown>): Promise<unknown>;
  /** POST /_emulator/credentials: appends `count` credentials of one domain, in slices; their ids. */
  appendCredentials(count: number, domain: string): Promise<number[]>;
  /** GET /_emulator/rate: per organization and tier, arrivals, admitted, 429s, the most in any second. */
  rateStats(): Promise<RateStats>;
  /** DELETE /_emulator/rate: forgets the rate stats and their windows. */
  resetRateStats(): Promise<void>;
  /** GET /_emulator/requests: the request log (the last 20,000), oldest first. */
  requests(): Promise<{ at: string; endpoint: string; status: number }[]>;
  /** DELETE /_emulator/requests. */
  clearRequests(): Promise<void>;
}

/** The emulator through its CLI (`exposure-alerts emulator`), on a free port. */
export async function startEmulatorProcess(options: {
  seed?: number;
  events?: number;
  /**
   * Per tenant, old content matched in the hours before the emulator's start (`--late-matches`);
   * the emulator's default (3) when unset. 0 leaves a feed of exactly `events`, for exact counts.
   */
  lateMatches?: number;
  credentials?: number;
  latencyMs?: number;
  /** Identifier groups per tenant (`--groups`); the emulator's default (2) when unset. */
  groups?: number;
  /** Global searches each organization has left this month (`--quota`). */
  quota?: number;
  /** The rate tiers the emulator enforces (`--basic-per-second`, `--search-per-second`); unlimited when unset. */
  rateLimits?: { basicPerSecond: number; searchPerSecond: number };
}): Promise<EmulatorProcess> {
  const child = tracked(
    spawn(
      process.execPath,
      [
        join(ROOT, 'dist/exposure-alerts.mjs'),
        'emulator',
        '--port',
        '0',
        '--seed',
        String(options.seed ?? 42),
        '--latency-ms',
        String(options.latencyMs ?? 0),
        '--events',
        String(options.events ?? 120),
        '--credentials',
        String(options.credentials ?? 0),
        ...(options.lateMatches !== undefined ? ['--late-matches', String(options.lateMatches)] : []),
        ...(options.groups !== undefined ? ['--groups', String(options.groups)] : []),
        ...(options.quota !== undefined ? ['--quota', String(options.quota)] : []),
        ...(options.rateLimits
          ? [
              '--basic-per-second',
              String(options.rateLimits.basicPerSecond),
              '--search-per-second',
              String(options.rateLimits.searchPerSecond),
            ]
          : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    ),
  );
  const banner = await waitForLine(child, /listening on [\s\S]*EXPOSURE_API_TOKEN=\S+\s/, 'emulator');
  const url = /listening on (http:\/\/\S+)/.exec(banner)?.[1] as string;
  const token = /EXPOSURE_API_TOKEN=(\S+)/.exec(banner)?.[1] as string;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`emulator ${method} ${path}: HTTP ${res.status}`);
    return res.status === 204 ? undefined : res.json();
  };
  return {
    url,
    token,
    process: child,
    stop: () => stopChild(child),
    settings: (body) => call('PUT', '/_emulator/settings', body),
    appendCredentials: async (count, domain) => {
      const ids: number[] = [];
      for (let left = count; left > 0; left -= 10_000) {
        const out = (await call('POST', '/_emulator/credentials', {
          count: Math.min(left, 10_000),
          domain,
        })) as { added: number[] };
        ids.push(...out.added);
      }
      return ids;
    },
    rateStats: async () => (await call('GET', '/_emulator/rate')) as RateStats,
    resetRateStats: async () => {
      await call('DELETE', '/_emulator/rate');
    },
    requests: async () =>
      (
        (await call('GET', '/_emulator/requests')) as {
          requests: { at: string; endpoint: string; status: number }[];
        }
      ).requests,
    clearRequests: async () => {
      await call('DELETE', '/_emulator/requests');
    },
  };
}

/**
 * Lambda runs a function in a sandbox whose memory limit is the function's memory, and its Node.js
 * runtime starts node with heap flags from that memory (lambdaNodeFlags). So every process that
 * stands for one of our functions runs in a memory cgroup of the function's memory, one cgroup
 * per process as one sandbox per function (a worker beside it, of this bench or of another run on
 * the machine, must not eat into its memory), with those flags and no NODE_OPTIONS (the default
 * deployment's). Where no cgroup can be made (not root, no memory controller), processes run
 * unlimited and the figures say so.
 */
const cgroups = new Map<number, string | undefined>();
/** The per-process cgroups made by this run, removed at its end. */
const made: string[] = [];
let spawned = 0;

/**
 * The flags Lambda's Node.js runtime (its bootstrap script) starts node with for a function of
 * `memorySize` MB: a tenth of the memory for the young generation (half of it a semi-space), the
 * rest for the old one; gc exposed; 80 KB of HTTP headers.
 */
export function lambdaNodeFlags(memorySize: number): string[] {
  const newSpace = Math.floor(memorySize / 10);
  return [
    '--expose-gc',
    '--max-http-header-size=81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memorySize - newSpace}`,
  ];
}

function makeMemoryCgroup(memorySize: number, suffix = ''): string | undefined {
  const bytes = String(memorySize * 1024 * 1024);
  const name = `exposure-alerts-bench-${memorySize}m${suffix}`;
  const v1 = '/sys/fs/cgroup/memory';
  const v2 = '/sys/fs/cgroup';
  try {
    if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
      mkdirSync(join(v1, name), { recursive: true });
      writeFileSync(join(v1, name, 'memory.limit_in_bytes'), bytes);
      return join(v1, name, 'cgroup.procs');
    }
    if (readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8').includes('memory')) {
      mkdirSync(join(v2, name), { recursive: true });
      writeFileSync(join(v2, name, 'memory.max'), bytes);
      return join(v2, name, 'cgroup.procs');
    }
  } catch {
    // Not allowed here: run unlimited.
  }
  return undefined;
}

/** Whether processes of a function of `memorySize` MB run under that memory limit here. */
export function memoryLimited(memorySize: number): boolean {
  if (!cgroups.has(memorySize)) cgroups.set(memorySize, makeMemoryCgroup(memorySize));
  return cgroups.get(memorySize) !== undefined;
}

/**
 * The command that runs `node <nodeArgs>` as Lambda would for a function of `memorySize` MB: in
 * its memory cgroup (a shell joins it, then becomes node, keeping stdio and the IPC channel).
 */
export function asLambda(memorySize: number, nodeArgs: string[]): { command: string; args: string[] } {
  const procs = memoryLimited(memorySize)
    ? makeMemoryCgroup(memorySize, `-${process.pid}-${++spawned}`)
    : undefined;
  if (procs) made.push(procs);
  const args = [...lambdaNodeFlags(memorySize), ...nodeArgs];
  return procs
    ? {
        command: '/bin/sh',
        args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, process.execPath, ...args],
      }
    : { command: process.execPath, args };
}

/** Removes the cgroups made by this run (only empty ones can go; the rest stay for the next run). */
export function removeCgroups(): void {
  for (const procs of [...cgroups.values(), ...made.splice(0)]) {
    if (!procs) continue;
    try {
      rmdirSync(dirname(procs));
    } catch {
      // still in use, or not ours to remove
    }
  }
  cgroups.clear();
}

/** Messages a worker sends back. */
export type WorkerMessage =
  | { type: 'ready'; data?: unknown }
  | { type: 'result'; data: unknown }
  | { type: 'error'; message: string };

export interface Worker {
  process: ChildProcess;
  /** What the worker answered to `init`. */
  ready: unknown;
  /** Sends a job and resolves with its `result`. */
  request<T>(message: unknown): Promise<T>;
  /** Like `request`, but several may be in flight at once: each is sent and answered with an id. */
  call<T>(message: object): Promise<T>;
  stop(): Promise<void>;
}

/** Where run.ts writes the bundled worker (bundle.ts, as a Lambda function is bundled). */
export const WORKER_BUNDLE = join(ROOT, 'bench-results', 'bundles', 'bench-worker.mjs');

/**
 * A bench worker (worker.ts) running one scenario; `init` is its first message. It runs the bundle
 * at WORKER_BUNDLE with plain node, or the sources through tsx when BENCH_WORKER_TSX=1.
 * BENCH_WORKER_NODE_OPTIONS adds node flags, e.g. `--cpu-prof --cpu-prof-dir=bench-results/prof`.
 */
export async function startWorker(
  scenario: string,
  init: unknown,
  options: { memorySize: number; nodeOptions?: string[] },
): Promise<Worker> {
  const tsx = process.env.BENCH_WORKER_TSX === '1';
  const { command, args } = asLambda(options.memorySize, [
    ...(tsx ? ['--import', 'tsx'] : []),
    ...(options.nodeOptions ?? []),
    ...(process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? []),
    tsx ? join(ROOT, 'test/bench/worker.ts') : WORKER_BUNDLE,
    scenario,
  ]);
  const child = tracked(
    spawn(command, args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    }),
  );
  const next = () =>
    new Promise<WorkerMessage>((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`bench worker ${scenario} exited (code ${code})`));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
    });
  const request = async <T>(message: unknown): Promise<T> => {
    const answer = next();
    child.send(message as object);
    const got = await answer;
    if (got.type === 'error') throw new Error(`bench worker ${scenario}: ${got.message}`);
    return got.data as T;
  };
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  child.on('message', (message: WorkerMessage & { id?: number }) => {
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id as number);
    if (message.type === 'error') waiting.reject(new Error(`bench worker ${scenario}: ${message.message}`));
    else waiting.resolve('data' in message ? message.data : undefined);
  });
  child.on('exit', (code) => {
    for (const waiting of pending.values())
      waiting.reject(new Error(`bench worker ${scenario} exited (code ${code})`));
    pending.clear();
  });
  const call = <T>(message: object): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...message, id });
    });
  const stop = async () => {
    // Disconnecting lets the worker exit on its own (and write a --cpu-prof profile); then force it.
    if (child.connected) {
      const exited = once(child, 'exit');
      child.disconnect();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
    await stopChild(child);
  };
  let ready: unknown;
  try {
    ready = await request({ type: 'init', data: init });
  } catch (error) {
    await stop();
    throw error;
  }
  return { process: child, ready, request, call, stop };
}

/**
 * Stops what a section left running (its workers, dynalite, the emulator: a section stops its
 * own, but one that failed half-way may not), so the next section's figures do not pay for it.
 * Returns how many it had to stop.
 */
export async function stopLeftovers(): Promise<number> {
  const left = [...running];
  await Promise.all(left.map((child) => stopChild(child)));
  return left.length;
}

/** Deletes a table (dynalite drops its items), so a long bench keeps dynalite's heap small. */
export async function deleteTable(endpoint: string, name: string): Promise<void> {
  const client = createDynamoClient({ endpoint });
  try {
    await client.send(new DeleteTableCommand({ TableName: name }));
  } finally {
    client.destroy();
  }
}
