/**
 * Small wording helpers shared by the renderers, so Slack, e-mail and the terminal say the same
 * thing the same way. They return raw text: each renderer escapes it for its medium.
 */
import { eventSeverity } from '../model.ts';
import type { Severity } from '../upstream/event-types.ts';
import type { Credential, EventItem } from '../upstream/schemas.ts';

export const SEVERITY_EMOJI: Record<Severity, string> = {
  critical: ':red_circle:',
  high: ':large_orange_circle:',
  medium: ':large_yellow_circle:',
  low: ':large_blue_circle:',
  info: ':white_circle:',
};

/** `2026-11-21 12:00 UTC`; the raw value when it does not parse; `unknown` when absent. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return 'unknown';
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return value;
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The effective severity, and the upstream's when the tenant overrode it: `low (upstream: high)`. */
export function severityText(item: EventItem): string {
  const effective = eventSeverity(item);
  return effective === item.metadata.severity
    ? effective
    : `${effective} (upstream: ${item.metadata.severity})`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function identifierNames(item: EventItem): string[] {
  return (item.identifiers ?? []).map((i) => i.name);
}

export function tagsOf(item: EventItem): string[] {
  return item.tenant_metadata?.tags ?? [];
}

/** What kind of secret the upstream says `hash` is; `unknown` when it does not say. */
export function hashKind(item: Credential): string {
  return item.hash_type ?? 'unknown';
}

/**
 * Joins values until `max` characters, then says how many were left out:
 * `a, b, c … and 12 more`. Each value is passed through `show` (escape and clip) first.
 */
export function joinList(values: string[], max: number, show: (s: string) => string, sep = ', '): string {
  if (!values.length) return '';
  let out = '';
  let shown = 0;
  for (const value of values) {
    const piece = (shown ? sep : '') + show(value);
    const restNote = ` … and ${values.length - shown} more`;
    if (out.length + piece.length > max - restNote.length && shown < values.length - 1) break;
    if (out.length + piece.length > max) break;
    out += piece;
    shown++;
  }
  return shown === values.length ? out : `${out} … and ${values.length - shown} more`;
}

/** `2026-11-21T12:00:00Z`: the contract's example precision, whole seconds. */
export function webhookTimestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
