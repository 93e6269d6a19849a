/**
 * One poll cycle of a kind (`events`: the tenant stream and every identifier group;
 * `credentials`: every configured domain): each stream in turn (stream.ts), then one delivery pass
 * (deliver/pass.ts). New webhook deliveries of exclusive streams are sent while polling
 * (deliver/inline.ts); the pass sends everything else (digests, paced destinations, retries) and
 * what inline delivery handed over. The active silences are read once, at the cycle's start, and
 * every item of the cycle is routed with them. The exit code follows
 * docs/cli.md: 3 when the upstream rejected the credentials, 1 when a stream failed for another
 * reason, 0 otherwise (a skipped or rate-limited stream resumes next time). Inline delivery and the
 * heartbeat load only for a cycle that uses them.
 *
 * Longer than 300 lines: one cycle's order (silences, tenants, the quota gate, each stream's share,
 * the pass) reads best in one function, with its summary and exit code beside it.
 */
import { runDeliveryPass } from '../deliver/pass.ts';
import type {
  DeliverDeps,
  DeliveryPassOptions,
  DeliverySummary,
  DestinationResult,
} from '../deliver/types.ts';
import { kindOf } from '../destinations/kinds.ts';
import { lazily } from '../lazy.ts';
import type { AlertsConfig } from '../rules/config.ts';
import { withSilences } from '../rules/silences.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { Pinger } from './heartbeat.ts';
import { type TenantRef, tenantOfStream } from './ids.ts';
import type { QuotaGate, QuotaState } from './quota.ts';
import { pollStream } from './stream.ts';
import { type PollKind, streamsFor, type UpstreamFor } from './streams.ts';
import { inTurn } from './turn.ts';
import { type PollBudget, type PollDeps, type StreamResult, zeroCounts } from './types.ts';

export interface CycleSummary {
  kind: PollKind;
  streams: StreamResult[];
  delivery: DeliverySummary;
  exitCode: 0 | 1 | 3;
}

export interface CycleDeps {
  config: AlertsConfig;
  upstream: UpstreamClient;
  /** The client of each `tenants` entry (runtime.ts); the top level's for every stream without. */
  upstreamFor?: UpstreamFor;
  /** Refuses, once a run, a config naming tenants its credentials cannot act for (runtime.ts). */
  checkTenants?: () => Promise<void>;
  poll: PollDeps;
  deliver: DeliverDeps;
  /**
   * The delivery pass that ends the cycle; `runDeliveryPass` by default. `npm start` runs both
   * kinds of cycle in one process and gives them one shared, serialised pass, so they do not meet
   * each other's destination leases.
   */
  pass?: (options: DeliveryPassOptions) => Promise<DeliverySummary>;
  /** Send new webhook deliveries of exclusive streams while polling (default true; the bench turns it off). */
  inline?: boolean;
  /** The global-search quota: credential polling pauses below `upstream.quotaReserve` (quota.ts). */
  quota?: QuotaGate;
  /** A warning the operator must see (the log by default). */
  warn?: (text: string) => void;
  /** The heartbeat of a kind (heartbeat.ts), when one is configured and this run's cycles ping it. */
  heartbeat?: (kind: PollKind) => Pinger | undefined;
  /** A tenant's credentials were refused (reported once: tenants.ts); undefined is the top level. */
  onRefused?: (tenant: TenantRef | undefined, message: string) => Promise<void>;
  /** A tenant's stream was polled to its end: a refusal reported before is over. */
  onAccepted?: (tenant: TenantRef | undefined) => Promise<void>;
  /** Stores what `status` needs of the config (state/catalog.ts); runtime.ts does it once a run. */
  publish?: () => Promise<void>;
}

/** Loaded by a cycle that can send inline: an exclusive stream, a destination whose kind takes it. */
const inlineDelivery = lazily('inline delivery (deliver/inline.ts)', () => import('../deliver/inline.ts'));

/** Loaded by the cycles of a config with a heartbeat. */
const heartbeat = lazily('the heartbeat (poll/heartbeat.ts)', () => import('./heartbeat.ts'));

/** Time kept back from polling for the delivery pass, when the budget allows. */
export const DELIVERY_RESERVE_MS = 20_000;
/** No page is started this close to the polling deadline (less for a small budget). */
export const PAGE_RESERVE_MS = 5_000;

/** No stream gets less than this of a cycle's time (about a page at the search tier's 1/s). */
export const MIN_STREAM_SLICE_MS = 5_000;

/**
 * The streams of `kind`, in turn (turn.ts): the order a cycle visits them in. With `only` (a
 * worker's jobs), only those streams' states are read: a worker handed one stream of 400 reads one
 * state, not 400 (on demand, the reads of every job grew with the square of the streams).
 */
export function streamsInTurn(
  deps: Pick<CycleDeps, 'config' | 'upstream' | 'upstreamFor' | 'poll'>,
  kind: PollKind,
  only?: ReadonlySet<string>,
) {
  const specs = streamsFor(deps.config, kind, deps.upstreamFor ?? deps.upstream);
  return inTurn(only ? specs.filter((s) => only.has(s.id)) : specs, (spec) => spec.id, deps.poll.streams);
}

export interface CycleOptions {
  /** Only these streams (a worker handed them by a dispatcher); default every stream of the kind. */
  streams?: readonly string[];
  /** Told of each stream's result as soon as it is known (the CLI shows progress with it). */
  onStream?: (result: StreamResult) => void;
}

export async function runPollCycle(
  deps: CycleDeps,
  kind: PollKind,
  budget: PollBudget,
  options: CycleOptions = {},
): Promise<CycleSummary> {
  const beat = deps.heartbeat?.(kind);
  if (!beat) return cycle(deps, kind, budget, options);
  return (await heartbeat()).withHeartbeat(beat, kind, () => cycle(deps, kind, budget, options));
}

async function cycle(
  deps: CycleDeps,
  kind: PollKind,
  budget: PollBudget,
  options: CycleOptions,
): Promise<CycleSummary> {
  const streams: StreamResult[] = [];
  const done = (result: StreamResult) => {
    streams.push(result);
    options.onStream?.(result);
  };
  const total = budget.deadline - deps.poll.clock.now();
  // Poll until the delivery reserve, but never give polling less than half the budget; and stop
  // starting pages a little before that (a quarter of a small budget), to write what was fetched.
  const pollDeadline = budget.deadline - Math.min(DELIVERY_RESERVE_MS, Math.max(0, total / 2));
  const { clock } = deps.poll;
  const notPolledSince = budget.notPolledSince ?? new Date(clock.now()).toISOString();
  let delivery: DeliverySummary;
  // Its own 30 seconds of identity lookups (docs/identity.md).
  const identity = kind === 'credentials' ? deps.poll.identity?.cycle() : undefined;
  try {
    // Read once, at the start: a silence made or ended during the cycle counts from the next one.
    const silences = (await deps.poll.silences?.active()) ?? [];
    const poll: PollDeps = {
      ...deps.poll,
      route: withSilences(deps.poll.route, silences),
      ...(identity ? { identityCycle: identity } : {}),
    };
    await deps.publish?.();
    await deps.checkTenants?.();
    const only = options.streams ? new Set(options.streams) : undefined;
    let turn = await streamsInTurn(deps, kind, only);
    const inline =
      deps.inline !== false &&
      turn.some((spec) => spec.exclusive) &&
      [...deps.deliver.destinations.values()].some((d) => kindOf(d.type).inline)
        ? new (await inlineDelivery()).InlineDelivery(deps.deliver)
        : undefined;
    const reserve = deps.config.upstream.quotaReserve;
    const gate = kind === 'credentials' && turn.length ? await quotaGate(deps, reserve) : 'open';
    if (gate !== 'open') {
      const paused = turn.slice(gate === 'probe' ? 1 : 0);
      for (const spec of paused) done(pausedResult(spec.id, deps.quota?.latest()?.remaining, reserve));
      turn = turn.slice(0, gate === 'probe' ? 1 : 0);
    }
    // A tenant whose credentials are refused is skipped for the rest of the cycle; the others go on.
    const refused = new Set<number | undefined>();
    // Reported beside the polling, not in its way: a slow ops destination holds no tenant back.
    const reports: Promise<void>[] = [];
    for (const [i, spec] of turn.entries()) {
      const now = clock.now();
      // The rest waited longest next time: they come first then.
      if (now >= pollDeadline || budget.stop?.aborted) break;
      if (refused.has(spec.tenant?.id)) {
        done(refusedResult(spec.id));
        continue;
      }
      if (kind === 'credentials' && gate === 'open' && deps.quota?.below(reserve)) {
        for (const rest of turn.slice(i))
          done(pausedResult(rest.id, deps.quota.latest()?.remaining, reserve));
        break;
      }
      // Each stream gets its share of what is left, so one with a backlog takes its turn and
      // yields (status budget; it resumes from its cursor) instead of keeping the others waiting.
      const slice = Math.max(MIN_STREAM_SLICE_MS, (pollDeadline - now) / (turn.length - i));
      const deadline = Math.min(pollDeadline, now + slice);
      // A probe of the quota reads one page: no second page is started.
      const reserveMs =
        gate === 'probe'
          ? Number.POSITIVE_INFINITY
          : (budget.reserveMs ?? Math.min(PAGE_RESERVE_MS, Math.max(0, (deadline - now) / 4)));
      const result = await pollStream(
        poll,
        spec,
        { ...budget, deadline, reserveMs, notPolledSince, ownShare: deadline < pollDeadline },
        inline,
      );
      done(result);
      if (result.status === 'unauthorized') {
        // Every other stream of its tenant would meet the same refusal.
        refused.add(spec.tenant?.id);
        if (deps.onRefused)
          reports.push(
            deps.onRefused(spec.tenant, result.error?.message ?? 'refused').catch((error: unknown) =>
              // Not marked reported: the next cycle that meets the refusal reports it.
              deps.poll.logger.warn('could not report a refused tenant; the next cycle tries again', {
                error,
              }),
            ),
          );
      } else if (result.status === 'done') await deps.onAccepted?.(spec.tenant);
      // A stream that outlasted its share stopped only itself. Only the governor's word that no
      // turn is left before the polling deadline ends the cycle early: the rest go first next time.
      if (result.nextTurnAt !== undefined && result.nextTurnAt > pollDeadline) break;
    }
    await Promise.all(reports);
    await identity?.finish();
    tenantLag(deps, streams);
    delivery = withInline(
      await (deps.pass ?? ((options) => runDeliveryPass(deps.deliver, options)))({
        deadline: budget.sendsStartBy ?? budget.deadline,
        ...(budget.stop ? { stop: budget.stop } : {}),
      }),
      inline?.results() ?? [],
    );
    // The automatic responses decided this cycle, now that their alerts went out.
    await identity?.respond();
  } finally {
    // Even a cycle that throws (DynamoDB unreachable, say) reports what it measured.
    deps.poll.metrics.flush();
    if (kind === 'credentials') await deps.quota?.save();
  }
  return { kind, streams, delivery, exitCode: exitCodeOf(streams, delivery) };
}

/**
 * A cycle's exit code (docs/cli.md): 3 only when every tenant of the cycle was refused
 * (one refused tenant stops only itself), 1 when a stream or a destination's pass failed, else 0.
 */
export function exitCodeOf(streams: readonly StreamResult[], delivery: DeliverySummary): 0 | 1 | 3 {
  const tenants = new Set(streams.map((s) => tenantOfStream(s.stream)));
  const refused = new Set(
    streams.filter((s) => s.status === 'unauthorized').map((s) => tenantOfStream(s.stream)),
  );
  if (refused.size > 0 && refused.size === tenants.size) return 3;
  return streams.some((s) => s.status === 'failed') ||
    delivery.destinations.some((d) => d.status === 'failed')
    ? 1
    : 0;
}

/** Whether credential polling goes on: one warning (and the metric) when it pauses. */
async function quotaGate(deps: CycleDeps, reserve: number): Promise<QuotaState> {
  if (!deps.quota) return 'open';
  const state = await deps.quota.check(reserve);
  const remaining = deps.quota.latest()?.remaining;
  if (state !== 'open' && remaining !== undefined) {
    deps.poll.metrics.gauge('GlobalSearchQuotaRemaining', remaining);
    (deps.warn ?? ((text: string) => deps.poll.logger.warn(text)))(
      `credential polling is paused: ${remaining} global searches left, below upstream.quotaReserve ${reserve}${state === 'probe' ? '; one page is read to see whether the quota came back' : ''}`,
    );
  }
  return state;
}

/**
 * Each `tenants` entry's poll lag: the largest of its streams' this cycle (PollLagSeconds with a
 * `tenant` dimension), for the dashboard's per-tenant widget.
 */
function tenantLag(deps: Pick<CycleDeps, 'poll'>, streams: readonly StreamResult[]): void {
  const worst = new Map<number, number>();
  for (const s of streams) {
    const tenant = tenantOfStream(s.stream);
    if (tenant === undefined || s.lagSeconds === undefined) continue;
    worst.set(tenant, Math.max(worst.get(tenant) ?? 0, s.lagSeconds));
  }
  for (const [tenant, lag] of worst)
    deps.poll.metrics.gauge('PollLagSeconds', lag, 'Seconds', { tenant: String(tenant) });
}

function refusedResult(stream: string): StreamResult {
  return {
    stream,
    status: 'unauthorized',
    pages: 0,
    ...zeroCounts(),
    error: {
      code: 'unauthorized',
      message: 'not polled: the upstream refused this tenant’s credentials earlier in this cycle',
    },
  };
}

function pausedResult(stream: string, remaining: number | undefined, reserve: number): StreamResult {
  return {
    stream,
    status: 'paused',
    pages: 0,
    ...zeroCounts(),
    error: {
      code: 'quota_reserve',
      message: `${remaining ?? 'few'} global searches left, below upstream.quotaReserve ${reserve}`,
    },
  };
}

/** The pass's summary with what was delivered inline added in, per destination. */
function withInline(pass: DeliverySummary, inline: DestinationResult[]): DeliverySummary {
  const destinations = pass.destinations.map((d) => {
    const early = inline.find((i) => i.destination === d.destination);
    return early
      ? {
          ...d,
          messages: d.messages + early.messages,
          sent: d.sent + early.sent,
          retrying: d.retrying + early.retrying,
        }
      : d;
  });
  for (const early of inline) {
    if (!destinations.some((d) => d.destination === early.destination)) destinations.push(early);
  }
  const sum = (key: 'sent' | 'retrying') => inline.reduce((n, i) => n + i[key], 0);
  return { ...pass, destinations, sent: pass.sent + sum('sent'), retrying: pass.retrying + sum('retrying') };
}
