/**
 * A destination for benchmarks: a real local HTTP server that answers at once and keeps only what
 * the figures need (arrival time, item keys per request, an item's identity verdict), so a backlog
 * of 100,000 items does not pile up bodies in memory. It runs in the orchestrating process, never
 * in the measured one. It answers as the service it stands for: 200 `ok` (Slack, webhooks), 202
 * with an empty body (a Teams Workflows URL), 202 with PagerDuty's JSON (its enqueue endpoint).
 * A Slack receiver names the events of its messages by the `uid` a single event's message shows,
 * and counts those a digest carries (it does not name them).
 */
import { standIn } from '../helpers/stand-in.ts';

export interface Arrival {
  /** ms since the epoch, when the request's body was fully read. */
  at: number;
  items: number;
}

export interface BenchReceiver {
  url: string;
  arrivals: Arrival[];
  /** Item keys seen (webhook bodies: `event:<uid>` / `credential:<id>`), with how often each came. */
  keys: Map<string, number>;
  /** Each item's identity verdict as it last came (`_identity.verdict`, `/<reason>` when it has one). */
  verdicts: Map<string, string>;
  /** When each key first arrived (ms since the epoch). */
  firstAt: Map<string, number>;
  /** An event's `metadata.matched_at` as it arrived (webhook bodies), ms since the epoch, by key. */
  matchedAt: Map<string, number>;
  /** Slack: events that came inside digests, counted by their titles. */
  digested: number;
  reset(): void;
  /** Keys that arrived more than once. */
  duplicates(): number;
  /** Most requests that arrived within any window of `windowMs` (half-open). */
  maxInWindow(windowMs: number): number;
  close(): Promise<void>;
}

interface Keyed {
  key: string;
  verdict?: string;
  matchedAt?: number;
}

function keysOf(body: string): Keyed[] {
  try {
    const parsed = JSON.parse(body) as {
      kind?: string;
      items?: {
        id?: number;
        metadata?: { uid?: string; matched_at?: string };
        _identity?: { verdict?: string; reason?: string };
      }[];
    };
    if (!Array.isArray(parsed.items)) return [];
    return parsed.items.map((item) => ({
      key: parsed.kind === 'events' ? `event:${item.metadata?.uid}` : `credential:${item.id}`,
      ...(item.metadata?.matched_at ? { matchedAt: Date.parse(item.metadata.matched_at) } : {}),
      ...(item._identity
        ? { verdict: `${item._identity.verdict}${item._identity.reason ? `/${item._identity.reason}` : ''}` }
        : {}),
    }));
  } catch {
    return [];
  }
}

/** A Slack body's events: the uid in a single event's context line; a digest's count from its title. */
function slackItems(body: string): { keys: string[]; digested: number } {
  const keys = [...body.matchAll(/uid (\S+) \u00b7 source/g)].map((m) => `event:${m[1]}`);
  const digest = /Exposure digest \u00b7 (\d+) events?/.exec(body);
  return { keys, digested: digest ? Number(digest[1]) : 0 };
}

const ANSWERS = {
  webhook: { status: 200, type: 'text/plain', body: () => 'ok' },
  slack: { status: 200, type: 'text/plain', body: () => 'ok' },
  teams: { status: 202, type: 'text/plain', body: () => '' },
  pagerduty: {
    status: 202,
    type: 'application/json',
    body: (request: string) => {
      let dedupKey: unknown;
      try {
        dedupKey = (JSON.parse(request) as { dedup_key?: unknown }).dedup_key;
      } catch {}
      return JSON.stringify({ status: 'success', message: 'Event processed', dedup_key: dedupKey });
    },
  },
} as const;

/** `kind: 'webhook'` reads item keys from each body; the others only count messages. */
export async function startBenchReceiver(kind: keyof typeof ANSWERS): Promise<BenchReceiver> {
  const answer = ANSWERS[kind];
  const arrivals: Arrival[] = [];
  const keys = new Map<string, number>();
  const verdicts = new Map<string, string>();
  const firstAt = new Map<string, number>();
  const matchedAt = new Map<string, number>();
  let digested = 0;
  const seen = (key: string, at: number) => {
    keys.set(key, (keys.get(key) ?? 0) + 1);
    if (!firstAt.has(key)) firstAt.set(key, at);
  };
  // The tests' one stand-in server (it reads the whole body, then answers through this handler).
  const stand = await standIn((_req, body, res) => {
    const at = Date.now();
    let items = 1;
    if (kind === 'webhook') {
      const found = keysOf(body);
      items = found.length;
      for (const { key, verdict, matchedAt: matched } of found) {
        seen(key, at);
        if (verdict !== undefined) verdicts.set(key, verdict);
        if (matched !== undefined && !matchedAt.has(key)) matchedAt.set(key, matched);
      }
    } else if (kind === 'slack') {
      const found = slackItems(body);
      for (const key of found.keys) seen(key, at);
      digested += found.digested;
    }
    arrivals.push({ at, items });
    res.writeHead(answer.status, { 'Content-Type': answer.type });
    res.end(answer.body(body));
  });
  stand.server.keepAliveTimeout = 60_000;
  return {
    url: `${stand.url}/hook`,
    arrivals,
    keys,
    verdicts,
    firstAt,
    matchedAt,
    get digested() {
      return digested;
    },
    reset: () => {
      arrivals.length = 0;
      keys.clear();
      verdicts.clear();
      firstAt.clear();
      matchedAt.clear();
      digested = 0;
    },
    duplicates: () => [...keys.values()].filter((n) => n > 1).length,
    maxInWindow: (windowMs) => {
      const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
      let most = 0;
      let start = 0;
      for (let end = 0; end < times.length; end++) {
        while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
        most = Math.max(most, end - start + 1);
      }
      return most;
    },
    close: () => stand.close(),
  };
}
