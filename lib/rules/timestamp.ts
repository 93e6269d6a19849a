/**
 * Timestamps a person types (a silence's `until`, a filter's bound): ISO 8601 with a time zone,
 * checked field by field. `Date.parse` rolls an impossible date over (`2027-02-30` becomes
 * 2 March) and accepts forms nobody meant; this refuses both and says why.
 */
const FORM =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))?)?$/i;

export type TimestampCheck = { ok: true; ms: number; zoned: boolean } | { ok: false; reason: string };

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Reads `text` as a timestamp: a date (`2026-12-31`, midnight UTC), or a date and time with an
 * optional zone (without one, UTC; `zoned` says which). Never rolls over.
 *
 * @example
 * checkTimestamp('2027-02-30T00:00:00Z') // { ok: false, reason: '2027-02-30 does not exist: February 2027 has 28 days' }
 */
export function checkTimestamp(text: string): TimestampCheck {
  const m = FORM.exec(text.trim());
  if (!m) return { ok: false, reason: 'expected a timestamp such as 2026-12-31T18:00:00Z' };
  const num = (i: number) => Number(m[i] ?? 0);
  const [year, month, day, hour, minute, second] = [num(1), num(2), num(3), num(4), num(5), num(6)];
  const fraction = m[7] ? Number(m[7]) : 0;
  if (month < 1 || month > 12) return { ok: false, reason: `${m[2]} is not a month` };
  const days = daysIn(year, month);
  if (day < 1 || day > days) {
    const name = new Date(Date.UTC(2000, month - 1, 1)).toLocaleString('en', {
      month: 'long',
      timeZone: 'UTC',
    });
    return {
      ok: false,
      reason: `${m[1]}-${m[2]}-${m[3]} does not exist: ${name} ${year} has ${days} days`,
    };
  }
  if (hour > 23 || minute > 59 || second > 59)
    return { ok: false, reason: `${m[4]}:${m[5]}${m[6] ? `:${m[6]}` : ''} is not a time of day` };
  let offset = 0;
  if (m[8] && m[8].toUpperCase() !== 'Z') {
    const [h, mm] = [Number(m[9]), Number(m[10])];
    if (h > 23 || mm > 59) return { ok: false, reason: `${m[8]} is not a time zone offset` };
    offset = (m[8].startsWith('-') ? -1 : 1) * (h * 60 + mm) * 60_000;
  }
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) + Math.round(fraction * 1000) - offset;
  return { ok: true, ms, zoned: m[8] !== undefined };
}
