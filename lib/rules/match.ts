/**
 * Route matching and silences: which destinations an alert goes to, and whether it is held back.
 * Pure: the time comes in as an argument.
 *
 * Choices where docs/configuration.md is silent:
 * - Keys that only make sense for one kind never match the other: `severity`, `types`, `tags` and
 *   `identifiers` never match a credential, `domains` never matches an event. So a route
 *   `{ "tags": { "any": ["vip"] } }` is implicitly an event route.
 * - `sources` compares `tenant` and `group:<id>` exactly, and `credentials:<domain>` with the
 *   domain case-insensitively (as the config's own cross-check does).
 * - `severity` uses the effective severity: `tenant_metadata.severity.override` when set, else
 *   `metadata.severity` (an analyst who downgrades an event expects it to stop paging).
 * - `types` entries are event types or families (`illicit_networks` matches `forum_post`).
 * - `tags`: `any` needs at least one listed tag, `all` every one, `none` none of them; tags
 *   compare exactly (they are tenant-defined labels). An empty list imposes nothing, so `any: []`
 *   does not silently turn a route off.
 * - `identifiers`: a number matches an identifier's `id`; a string matches its `name`
 *   case-insensitively, or its `id` when the string is a decimal number (`"12"` is read as an id
 *   as often as a name).
 * - `domains`: the credential's `domain` equals a listed domain or is a subdomain of it,
 *   case-insensitively and ignoring a trailing dot; `notexample.com` is not under `example.com`.
 * - `tenants`: an id or a name of a `tenants` entry, compared as `identifiers` are; an item of the
 *   top-level sources belongs to no entry, so a `tenants` match never matches it.
 * - `topLevel`: `true` holds for an item of the top-level sources (no tenant), `false` for an item
 *   of a `tenants` entry; so a silence of a top-level event never reaches a tenant's.
 * - `identity`: a credential whose login's verdict (`_identity`, docs/identity.md) is listed;
 *   a credential without a verdict, and every event, match no `identity` list.
 * - Silences: the first silence that matches and whose `until` is still ahead of `now` applies.
 */

import type { IdentityVerdict } from '../identity/words.ts';
import type { Alert } from '../model.ts';
import { eventSeverity } from '../model.ts';
import { severityRank, typeMatches } from '../upstream/event-types.ts';
import type { AlertsConfig, Match } from './schema.ts';

type IdentityCarrier = { _identity?: Pick<IdentityVerdict, 'verdict'> };

export interface Decision {
  /** Destination name -> names of the routes that chose it, in route order. Insertion order is route order. */
  destinations: Map<string, string[]>;
  /**
   * Set when a live silence matches: the caller records the item as silenced, not sent. `id` names
   * a run-time silence (rules/silences.ts), `name` a config one that has a name.
   */
  silenced?: { reason: string; name?: string; until: string; id?: string };
}

function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}

function normalizeSource(source: string): string {
  return source.startsWith('credentials:')
    ? `credentials:${normalizeDomain(source.slice('credentials:'.length))}`
    : source;
}

/** Whether `domain` is `parent` or lies under it (`mail.example.com` under `example.com`). */
export function domainWithin(domain: string, parent: string): boolean {
  const d = normalizeDomain(domain);
  const p = normalizeDomain(parent);
  return d === p || d.endsWith(`.${p}`);
}

function identifierMatches(selector: number | string, identifier: { id: number; name: string }): boolean {
  if (typeof selector === 'number') return identifier.id === selector;
  const wanted = selector.trim();
  if (/^\d+$/.test(wanted) && Number(wanted) === identifier.id) return true;
  return identifier.name.toLowerCase() === wanted.toLowerCase();
}

/**
 * Whether every key of `match` holds for `alert`; an empty match matches everything.
 *
 * @example
 * matches({ kind: 'event', severity: { gte: 'high' } }, alert)
 */
export function matches(match: Match, alert: Alert): boolean {
  if (match.kind !== undefined && match.kind !== alert.kind) return false;
  if (match.sources !== undefined) {
    const source = normalizeSource(alert.source);
    if (!match.sources.some((s) => normalizeSource(s) === source)) return false;
  }
  if (match.tenants !== undefined) {
    const tenant = alert.tenant;
    if (!tenant || !match.tenants.some((s) => identifierMatches(s, tenant))) return false;
  }
  if (match.topLevel !== undefined && match.topLevel !== (alert.tenant === undefined)) return false;
  const eventOnly =
    match.severity !== undefined ||
    match.types !== undefined ||
    match.tags !== undefined ||
    match.identifiers !== undefined;

  if (match.identity !== undefined) {
    const verdict =
      alert.kind === 'credential' ? (alert.item as IdentityCarrier)._identity?.verdict : undefined;
    if (verdict === undefined || !match.identity.includes(verdict)) return false;
  }
  if (alert.kind === 'credential') {
    if (eventOnly) return false;
    if (match.domains !== undefined) {
      const domain = alert.item.domain;
      if (!match.domains.some((d) => domainWithin(domain, d))) return false;
    }
    return true;
  }

  if (match.domains !== undefined) return false;
  const item = alert.item;
  if (match.severity !== undefined) {
    const severity = eventSeverity(item);
    if ('gte' in match.severity) {
      if (severityRank(severity) < severityRank(match.severity.gte)) return false;
    } else if (!match.severity.in.includes(severity)) {
      return false;
    }
  }
  if (match.types !== undefined) {
    const type = item.metadata.type;
    if (!match.types.some((selector) => typeMatches(selector, type))) return false;
  }
  if (match.tags !== undefined) {
    const tags = new Set(item.tenant_metadata?.tags ?? []);
    const { any, all, none } = match.tags;
    if (any?.length && !any.some((t) => tags.has(t))) return false;
    if (all?.length && !all.every((t) => tags.has(t))) return false;
    if (none?.some((t) => tags.has(t))) return false;
  }
  if (match.identifiers !== undefined) {
    const identifiers = item.identifiers ?? [];
    const selectors = match.identifiers;
    if (!identifiers.some((identifier) => selectors.some((s) => identifierMatches(s, identifier))))
      return false;
  }
  return true;
}

/**
 * Where `alert` goes: the union of the destinations of every matching route, in route order,
 * stopping after the first matching route with `stop: true`; and the silence that holds it back,
 * if one is live at `now`. A silenced decision still lists the destinations it would have reached.
 */
export function decide(config: AlertsConfig, alert: Alert, now: Date): Decision {
  const destinations = new Map<string, string[]>();
  for (const route of config.routes) {
    if (!matches(route.match, alert)) continue;
    for (const to of route.to) {
      const names = destinations.get(to);
      if (!names) destinations.set(to, [route.name]);
      else if (!names.includes(route.name)) names.push(route.name);
    }
    if (route.stop) break;
  }
  const at = now.getTime();
  const silence = config.silences.find((s) => at < Date.parse(s.until) && matches(s.match, alert));
  if (!silence) return { destinations };
  return {
    destinations,
    silenced: {
      reason: silence.reason,
      ...(silence.name === undefined ? {} : { name: silence.name }),
      until: silence.until,
    },
  };
}
