/**
 * Durations: ISO 8601 (`PT24H`, `P7D`, `P1DT12H`), as the config writes lookback windows, and the
 * short forms operators type from habit (`4h`, `30m`, `1d`, `1w`, `1h30m`, `90s`; `m` is minutes).
 * Years and months count as 365 and 30 days: a lookback needs a window, not a calendar.
 */
const PATTERN =
  /^P(?!$)(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

const UNIT_MS = [365 * 86_400_000, 30 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000];

const SHORT = /^(?=\d)(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
const SHORT_MS = [7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000];

/** Milliseconds in `duration`, or undefined when it is neither an ISO 8601 duration nor a short form. */
export function parseDuration(duration: string): number | undefined {
  // `M` is a month in ISO and a minute in the short form: written without a P, it is neither.
  const short = /M/.test(duration) ? null : SHORT.exec(duration.trim().toLowerCase());
  if (short) return SHORT_MS.reduce((n, unit, i) => n + Number(short[i + 1] ?? 0) * unit, 0);
  const match = PATTERN.exec(duration.trim().toUpperCase());
  if (!match) return undefined;
  let total = 0;
  for (let i = 0; i < UNIT_MS.length; i++) {
    const part = match[i + 1];
    if (part !== undefined) total += Number(part) * (UNIT_MS[i] as number);
  }
  return Math.round(total);
}
