/**
 * Silence matchers as operators type them from Alertmanager's amtool habit: `types=paste
 * severity>=high tags=vip`, each onto the route `match` shape (docs/runbook.md):
 * - `key=value` on a list key (`types`, `sources`, `identifiers`, `domains`, `tenants`, `identity`) adds
 *   values; commas or a repeated key add more;
 * - `tags=x` is `tags.any` (`tags!=x` is `tags.none`);
 * - `kind=event`; `severity>=high` is `severity.gte`, `severity=critical` `severity.in`;
 * - `toplevel=true` (or `false`) is `topLevel`;
 * - the singular (`type=paste`, `domain=…`) is read as the plural.
 * And back: `describeMatch` writes a match in the same words, for a table.
 */
import type { Match } from './match-schema.ts';

const LIST_KEYS: Record<string, 'types' | 'sources' | 'identifiers' | 'domains' | 'tenants' | 'identity'> = {
  identity: 'identity',
  types: 'types',
  type: 'types',
  sources: 'sources',
  source: 'sources',
  identifiers: 'identifiers',
  identifier: 'identifiers',
  domains: 'domains',
  domain: 'domains',
  tenants: 'tenants',
  tenant: 'tenants',
};

const MATCHER = /^([a-z_]+)\s*(>=|!=|=~|!~|=)\s*(.*)$/i;

/** Whether an argument looks like a matcher (`key=value`), as opposed to anything else. */
export function isMatcher(arg: string): boolean {
  return MATCHER.test(arg);
}

/**
 * The match that `matchers` describe; throws an Error naming the matcher and what it may be.
 *
 * @example
 * parseMatchers(['types=paste,leak', 'severity>=high', 'tags=vip'])
 * // { types: ['paste', 'leak'], severity: { gte: 'high' }, tags: { any: ['vip'] } }
 */
export function parseMatchers(matchers: readonly string[]): Record<string, unknown> {
  const match: Record<string, unknown> = {};
  const list = (key: string): unknown[] => {
    if (!Array.isArray(match[key])) match[key] = [];
    return match[key] as unknown[];
  };
  for (const raw of matchers) {
    const m = MATCHER.exec(raw.trim());
    if (!m) throw new Error(`${JSON.stringify(raw)} is not a matcher: write key=value, as types=paste`);
    const [, name = '', op, value = ''] = m;
    const key = name.toLowerCase();
    const values = value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    if (op === '=~' || op === '!~')
      throw new Error(
        `${raw}: regular expressions are not matched; list the values instead (types=paste,leak)`,
      );
    if (!values.length) throw new Error(`${raw}: no value given`);
    if (key in LIST_KEYS && op === '=') {
      const target = LIST_KEYS[key] as string;
      for (const v of values) list(target).push(target === 'identifiers' && /^\d+$/.test(v) ? Number(v) : v);
    } else if ((key === 'tags' || key === 'tag') && (op === '=' || op === '!=')) {
      const tags = (match.tags ?? {}) as Record<string, string[]>;
      const which = op === '=' ? 'any' : 'none';
      tags[which] = [...(tags[which] ?? []), ...values];
      match.tags = tags;
    } else if (key === 'kind' && op === '=' && values.length === 1) {
      match.kind = values[0];
    } else if (key === 'toplevel' && op === '=') {
      if (values.length !== 1 || !['true', 'false'].includes(values[0]?.toLowerCase() ?? ''))
        throw new Error(`${raw}: toplevel is true or false`);
      match.topLevel = values[0]?.toLowerCase() === 'true';
    } else if (key === 'severity' && op === '>=' && values.length === 1) {
      match.severity = { gte: values[0] };
    } else if (key === 'severity' && op === '=') {
      const severity = match.severity as { in?: string[] } | undefined;
      match.severity = { in: [...(severity?.in ?? []), ...values] };
    } else {
      throw new Error(
        `${raw}: not a matcher of silences; use types=, sources=, identifiers=, domains=, tenants=, identity=, toplevel=, tags= (or tags!=), kind=, severity>= or severity=`,
      );
    }
  }
  return match;
}

/** A match in matcher words: `types=paste severity>=high tags=vip`; `(everything)` when empty. */
export function describeMatch(match: Match | Record<string, unknown>): string {
  const m = match as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of [
    'kind',
    'sources',
    'types',
    'identifiers',
    'domains',
    'tenants',
    'identity',
    'topLevel',
  ]) {
    const value = m[key];
    const word = key.toLowerCase();
    if (Array.isArray(value)) parts.push(`${word}=${value.join(',')}`);
    else if (value !== undefined) parts.push(`${word}=${String(value)}`);
  }
  const severity = m.severity as { gte?: string; in?: string[] } | undefined;
  if (severity?.gte) parts.push(`severity>=${severity.gte}`);
  if (severity?.in) parts.push(`severity=${severity.in.join(',')}`);
  const tags = m.tags as { any?: string[]; all?: string[]; none?: string[] } | undefined;
  if (tags?.any?.length) parts.push(`tags=${tags.any.join(',')}`);
  if (tags?.all?.length) parts.push(`tags.all=${tags.all.join(',')}`);
  if (tags?.none?.length) parts.push(`tags!=${tags.none.join(',')}`);
  return parts.length ? parts.join(' ') : '(everything)';
}

/**
 * Whether a silence's match holds every condition of `query` (a `silences query` filter): each
 * listed value among its values, and the same kind and severity.
 */
export function covers(match: Record<string, unknown>, query: Record<string, unknown>): boolean {
  return Object.entries(query).every(([key, wanted]) => {
    const have = match[key];
    if (Array.isArray(wanted)) return Array.isArray(have) && wanted.every((v) => have.includes(v));
    if (key === 'tags' || key === 'severity')
      return Object.entries(wanted as Record<string, unknown>).every(([k, v]) => {
        const mine = (have as Record<string, unknown> | undefined)?.[k];
        return Array.isArray(v) ? Array.isArray(mine) && v.every((x) => mine.includes(x)) : mine === v;
      });
    return have === wanted;
  });
}
