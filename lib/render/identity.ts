/**
 * A credential's identity verdict (docs/identity.md) in words, for every renderer that
 * shows logins: one short line per login, and a digest's count of verdicts. Raw text: the display
 * name comes from the provider, so each renderer escapes the whole line as it escapes upstream text.
 *
 * @example
 * identityLine(alert, opts) // 'Entra ID corp: enabled · password changed 2026-03-01, before the leak (2026-11-20) → at risk'
 * verdictCounts(alerts)     // '12 at risk, 30 rotated, 3 no account'
 */
import { ACTION_WORDS, type IdentityVerdict, VERDICTS, verdictWords } from '../identity/words.ts';
import type { DeliveryAlert } from '../model.ts';
import { formatTime } from './format.ts';
import type { RenderOptions } from './types.ts';

/** The `_identity` a credential carries, when its login was looked up. */
export function verdictOf(
  alert: DeliveryAlert | { kind: string; item: unknown },
): IdentityVerdict | undefined {
  if (alert.kind !== 'credential') return undefined;
  const found = (alert.item as { _identity?: unknown })._identity;
  return found && typeof found === 'object' && typeof (found as IdentityVerdict).verdict === 'string'
    ? (found as IdentityVerdict)
    : undefined;
}

const day = (iso: string | undefined) => (iso && /^\d{4}-\d\d-\d\d/.test(iso) ? iso.slice(0, 10) : iso);

/** A display name as a line shows it: one line, at most 60 characters. */
const shortName = (name: string) => {
  const flat = name.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
};

/** The line for a credential with a verdict; undefined for one without. */
export function identityLine(
  alert: DeliveryAlert | { kind: string; item: unknown; tenant?: { id: number } },
  opts?: Pick<RenderOptions, 'identityLabel'>,
): string | undefined {
  const v = verdictOf(alert);
  if (!v) return undefined;
  const label = opts?.identityLabel?.(alert.tenant?.id, v.provider) ?? v.provider;
  const facts: string[] = [];
  if (v.displayName) facts.push(shortName(v.displayName));
  const leak = day(v.leakDate);
  switch (v.verdict) {
    case 'no_account':
      facts.push('no such account');
      break;
    case 'disabled':
      facts.push('cannot sign in');
      break;
    case 'unknown':
      if (v.reason === 'unmanaged')
        facts.push('enabled', 'password managed outside it (synced or delegated)');
      else facts.push('lookup failed or timed out');
      break;
    default:
      facts.push('enabled');
      facts.push(
        v.passwordChangedAt
          ? `password changed ${day(v.passwordChangedAt)}, ${v.verdict === 'rotated' ? 'on or after' : 'before'} the leak (${leak})`
          : `password never changed since the account was made, leak ${leak}`,
      );
  }
  return `${label}: ${facts.join(' · ')} → ${verdictWords(v.verdict, v.reason)}${autoWords(v)}`;
}

/** What the automatic response did (`identity.auto`), as the line's end: ` · automatic response: revoke sessions`. */
function autoWords(v: IdentityVerdict): string {
  const auto = v.auto;
  if (!auto) return '';
  if ('actions' in auto)
    return ` · automatic response${auto.dryRun ? ' (dry run, not taken)' : ''}: ${auto.actions.map((a) => ACTION_WORDS[a]).join(', ')}`;
  return ` · automatic response paused until ${formatTime(auto.until)} (at most ${auto.maxPerHour} an hour)`;
}

/** A digest's count of verdicts, in VERDICTS order: `12 at risk, 30 rotated, 3 no account`; undefined when none has one. */
export function verdictCounts(
  alerts: readonly (DeliveryAlert | { kind: string; item: unknown })[],
): string | undefined {
  const counts = new Map<string, number>();
  for (const alert of alerts) {
    const v = verdictOf(alert);
    if (v) counts.set(v.verdict, (counts.get(v.verdict) ?? 0) + 1);
  }
  if (!counts.size) return undefined;
  return VERDICTS.filter((v) => counts.has(v))
    .map((v) => `${counts.get(v)} ${verdictWords(v)}`)
    .join(', ');
}
