/**
 * Silences made at run time (docs/runbook.md): a config silence needs a deploy, and an
 * incident cannot wait for one. This module is what a silence is, how a request for one is checked
 * (the route `match` schema itself, so a bad key is named by its path, `match.severity.gte`), how
 * `until` is read (a timestamp, or a duration from now), and which silence holds an alert back.
 * Pure, like the rest of rules/: the time comes in as an argument; the table is state/silences.ts.
 *
 * Choices where the contract is silent (it allows all of these, so they are warnings, not refusals):
 * - An empty `match` silences every alert (an empty route `match` matches everything, section 3),
 *   and an empty list or `tags: {}` imposes nothing or matches nothing: accepted, with a warning
 *   naming the path, as `config validate` warns of the same in a config.
 * - A timestamp without a time zone is read as UTC (the Lambda's zone, whatever the operator's),
 *   with a warning that says so.
 * - `reason` must hold more than blanks.
 */
import * as z from 'zod/mini';
import type { Alert } from '../model.ts';
import { describeIssues, type ItemIssue } from '../upstream/validate.ts';
import { parseDuration } from './duration.ts';
import type { Decision } from './match.ts';
import { matches } from './match.ts';
import { type Match, matchSchema } from './match-schema.ts';
import { checkTimestamp } from './timestamp.ts';

/** `until` is at most this far ahead (366 days). */
export const MAX_SILENCE_MS = 366 * 86_400_000;
export const MAX_REASON_CHARS = 500;
/** A `--by` name or an API client's name, as recorded. */
export const MAX_BY_CHARS = 200;

/** A silence as stored and shown. Expired ones are kept, marked, for the record. */
export interface Silence {
  /** `s-<creation time, base 36>-<6 hex>`: sorts by creation (state/silences.ts). */
  id: string;
  match: Match;
  /** ISO time (UTC) the silence ends by itself. */
  until: string;
  reason: string;
  /** The API client's name, or `cli:<user>`. */
  createdBy: string;
  createdAt: string;
  /** Set when someone ended it before `until`. */
  expiredAt?: string;
  expiredBy?: string;
}

/** Anything that can hold an alert back: a run-time silence (with `id`) or a config one (maybe `name`). */
export interface Holding {
  id?: string;
  name?: string;
  match: Match;
  until: string;
  reason: string;
  expiredAt?: string;
}

/** What a cycle and a pass read once at their start: the silences live then. */
export interface SilenceSource {
  active(): Promise<Holding[]>;
}

export const SILENCE_ID = /^s-[0-9a-z]{9}-[0-9a-f]{6}$/;

/** The body of `POST /silences`, and what `silences add` builds from its options. */
export const silenceRequestSchema = z.strictObject({
  match: matchSchema,
  until: z.string(),
  reason: z.string().check(
    z.minLength(1),
    z.maxLength(MAX_REASON_CHARS),
    z.refine((s) => s.length === 0 || s.trim().length > 0, 'expected a reason, not blanks'),
  ),
});

export interface SilenceRequest {
  match: Match;
  /** Normalised: ISO time in UTC. */
  until: string;
  reason: string;
}

export type Checked<T> = { ok: true; value: T; warnings: string[] } | { ok: false; issues: ItemIssue[] };

/**
 * `until` as an ISO time in UTC: a timestamp with its zone, or an ISO 8601 duration from `now`;
 * in the future, and at most 366 days away. Otherwise a message saying what was wrong.
 *
 * @example
 * parseUntil('PT4H', Date.parse('2026-11-23T00:00:00Z')) // { until: '2026-11-23T04:00:00.000Z' }
 */
export function parseUntil(
  text: string,
  now: number,
): { until: string; warning?: string } | { error: string } {
  const trimmed = text.trim();
  let at: number;
  let warning: string | undefined;
  const ms = parseDuration(trimmed);
  if (ms !== undefined) {
    at = now + ms;
  } else if (/^P/i.test(trimmed)) {
    return { error: `expected a duration such as PT4H, 4h or 1d, got ${shown(text)}` };
  } else if (/^\d{4}-/.test(trimmed)) {
    const checked = checkTimestamp(trimmed);
    if (!checked.ok) return { error: `${checked.reason}, got ${shown(text)}` };
    at = checked.ms;
    if (!checked.zoned) warning = `no time zone given; read as UTC (${new Date(at).toISOString()})`;
  } else {
    return {
      error: `expected a timestamp such as 2026-12-31T18:00:00Z or a duration such as 4h or PT4H, got ${shown(text)}`,
    };
  }
  if (at <= now) return { error: `must be in the future, got ${shown(text)}` };
  if (at - now > MAX_SILENCE_MS) return { error: `must be at most 366 days away, got ${shown(text)}` };
  return { until: new Date(at).toISOString(), ...(warning ? { warning } : {}) };
}

function shown(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** What the schema lets through but an operator should hear of: a match that silences everything, or nothing. */
function matchWarnings(match: Match): string[] {
  const warnings: string[] = [];
  const lists: Record<string, unknown[] | undefined> = {
    sources: match.sources,
    'severity.in': match.severity && 'in' in match.severity ? match.severity.in : undefined,
    types: match.types,
    identifiers: match.identifiers,
    domains: match.domains,
    'tags.any': match.tags?.any,
    'tags.all': match.tags?.all,
    'tags.none': match.tags?.none,
  };
  for (const [key, list] of Object.entries(lists)) {
    if (list?.length === 0)
      warnings.push(`match.${key}: an empty list matches nothing, so this silence holds nothing back`);
  }
  if (match.tags && !match.tags.any?.length && !match.tags.all?.length && !match.tags.none?.length)
    warnings.push('match.tags: names no tag, so it imposes nothing');
  if (Object.keys(match).length === 0) warnings.push('match: empty, so this silence holds back every alert');
  return warnings;
}

/**
 * Checks a request for a silence; never throws. Every problem is named by its path.
 *
 * @example
 * checkSilenceRequest({ match: { severity: { gte: 'urgent' } }, until: 'PT4H', reason: 'x' }, Date.now())
 * // { ok: false, issues: [{ path: 'match.severity.gte', message: 'expected one of info, low, ...' }] }
 */
export function checkSilenceRequest(input: unknown, now: number): Checked<SilenceRequest> {
  const parsed = silenceRequestSchema.safeParse(input);
  if (!parsed.success) return { ok: false, issues: describeIssues(parsed.error.issues, input) };
  const until = parseUntil(parsed.data.until, now);
  if ('error' in until) return { ok: false, issues: [{ path: 'until', message: until.error }] };
  return {
    ok: true,
    value: { match: parsed.data.match, until: until.until, reason: parsed.data.reason },
    warnings: [...matchWarnings(parsed.data.match), ...(until.warning ? [`until: ${until.warning}`] : [])],
  };
}

/** Whether `silence` holds alerts back at `now`: not ended by hand, and `until` still ahead. */
export function isActive(silence: Pick<Holding, 'until' | 'expiredAt'>, now: number): boolean {
  return silence.expiredAt === undefined && now < Date.parse(silence.until);
}

/** The first silence active at `now` that matches `alert`. */
export function silenceFor(silences: readonly Holding[], alert: Alert, now: number): Holding | undefined {
  return silences.find((s) => isActive(s, now) && matches(s.match, alert));
}

/** The note a silenced delivery record carries: which silence held it back, and why. */
export function silencedNote(hit: { id?: string; name?: string; reason: string }): string {
  if (hit.id) return `silenced by ${hit.id}: ${hit.reason}`;
  return hit.name ? `silenced by ${hit.name}: ${hit.reason}` : `silenced: ${hit.reason}`;
}

/**
 * Routing with `silences` on top: a decision the config did not silence is silenced by the first
 * of them that is active and matches.
 */
export function withSilences(
  route: (alert: Alert, now: Date) => Decision,
  silences: readonly Holding[],
): (alert: Alert, now: Date) => Decision {
  if (silences.length === 0) return route;
  return (alert, now) => {
    const decision = route(alert, now);
    if (decision.silenced) return decision;
    const hit = silenceFor(silences, alert, now.getTime());
    if (!hit) return decision;
    return {
      ...decision,
      silenced: {
        reason: hit.reason,
        until: hit.until,
        ...(hit.id ? { id: hit.id } : {}),
        ...(hit.name ? { name: hit.name } : {}),
      },
    };
  };
}
