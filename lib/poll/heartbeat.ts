/**
 * The heartbeat (docs/configuration.md): a URL a monitoring service expects to hear from after
 * each poll cycle of a kind that ended well, so the alerter's own silence becomes an alert
 * elsewhere (a dead man's switch: healthchecks.io, Cronitor, Dead Man's Snitch).
 *
 * - `healthchecks` style (the default): GET `<url>/start` as a cycle begins, GET `<url>` when it
 *   ended well, POST a short `text/plain` summary to `<url>/fail` when it did not; `plain`: the
 *   success GET only.
 * - A cycle ended well when no stream failed and no tenant was refused: a stream done, stopped by
 *   the time budget, leased by another run, rate-limited or paused for quota ended well.
 * - A ping never delays or fails a cycle: one try, a 2-second timeout, not the upstream's rate
 *   (a plain request, no governor), its outcome logged at debug.
 *
 * - The URL is often a secret (anyone who has it can ping): a value from the secret object that
 *   is not an `https://` or `http://` URL is a configuration error at start, named by its path and
 *   secret, never printed; the redactor knows every form of it a log line could carry (log.ts).
 *
 * Locally (`npm start`, `poll … --once`) the cycle pings (cycle.ts); on AWS a dispatch and the jobs
 * it handed out are the cycle, and the workers ping (functions/worker.ts, state/heartbeat.ts).
 */
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { PollKind } from './streams.ts';
import type { StreamResult } from './types.ts';

/** One try, this long at most. */
export const PING_TIMEOUT_MS = 2_000;
/** The longest summary a failure ping carries. */
export const FAIL_SUMMARY_MAX = 2_000;

export interface Pinger {
  start(): Promise<void>;
  success(): Promise<void>;
  fail(summary: string): Promise<void>;
}

/**
 * What is wrong with a heartbeat value (`heartbeat.events` and the like): undefined when it is an
 * `https://` or `http://` URL with a host. The value itself is never in the answer: it may be a
 * secret, named instead by `what` (its path and secret name).
 *
 * @example
 * heartbeatProblem('heartbeat.events (secret "beat")', 'not-a-url/') // 'heartbeat.events (secret "beat"): …'
 */
export function heartbeatProblem(what: string, value: string): string | undefined {
  if (/^https?:\/\/[^\s/?#]/i.test(value) && URL.canParse(value)) return undefined;
  return `${what}: expected an https:// or http:// URL (the value is not shown: it may be a secret)`;
}

/** Pings `url` as `style` says; every ping one try of at most 2 s, any outcome only logged. */
export function pinger(
  url: string,
  style: 'healthchecks' | 'plain',
  deps: { fetch?: typeof fetch; logger: Logger },
): Pinger {
  const doFetch = deps.fetch ?? fetch;
  const base = url.replace(/\/+$/, '');
  const ping = async (what: string, target: string, init: RequestInit = {}) => {
    try {
      const res = await doFetch(target, { ...init, signal: AbortSignal.timeout(PING_TIMEOUT_MS) });
      await res.body?.cancel();
      deps.logger.debug('heartbeat ping sent', { ping: what, status: res.status });
    } catch (error) {
      deps.logger.debug('heartbeat ping failed; the cycle goes on', {
        ping: what,
        error:
          (error as Error)?.name === 'TimeoutError'
            ? `no answer within ${PING_TIMEOUT_MS} ms`
            : String(error),
      });
    }
  };
  const healthchecks = style === 'healthchecks';
  return {
    start: () => (healthchecks ? ping('start', `${base}/start`) : Promise.resolve()),
    success: () => ping('success', base),
    fail: (summary) =>
      healthchecks
        ? ping('fail', `${base}/fail`, {
            method: 'POST',
            headers: { 'Content-Type': 'text/plain; charset=utf-8' },
            body: summary.slice(0, FAIL_SUMMARY_MAX),
          })
        : Promise.resolve(),
  };
}

/**
 * Runs a cycle with its heartbeat: the start beside the work (never ahead of it), then, once the
 * work is over, success or the failure (a cycle that throws fails, with its error).
 */
export async function withHeartbeat<T extends { streams: readonly StreamResult[] }>(
  beat: Pinger | undefined,
  kind: PollKind,
  work: () => Promise<T>,
): Promise<T> {
  if (!beat) return work();
  const started = beat.start();
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await started;
    await beat.fail(`poll ${kind}: the cycle failed: ${describeError(error)}`);
    throw error;
  }
  await started;
  const outcome = cycleOutcome(kind, result.streams);
  await (outcome.well ? beat.success() : beat.fail(outcome.summary));
  return result;
}

/** Stream outcomes that make a cycle fail: a stream failed, or its tenant's credentials were refused. */
const FAILING = new Set(['failed', 'unauthorized']);

/** Whether a cycle's streams ended well, and what to say when they did not (one line each). */
export function cycleOutcome(
  kind: PollKind,
  streams: readonly StreamResult[],
): { well: boolean; summary: string } {
  const bad = streams.filter((s) => FAILING.has(s.status));
  if (!bad.length) return { well: true, summary: '' };
  const refused = bad.filter((s) => s.status === 'unauthorized').length;
  const lines = [
    `poll ${kind}: ${bad.length - refused} of ${streams.length} streams failed${refused ? `, ${refused} refused (their tenant's credentials)` : ''}`,
    ...bad.map((s) => `${s.stream}: ${s.status}${s.error ? ` (${s.error.code}: ${s.error.message})` : ''}`),
  ];
  return { well: false, summary: lines.join('\n') };
}
