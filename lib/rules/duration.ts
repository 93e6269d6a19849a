/**
 * ISO 8601 durations, as the config writes lookback windows (`PT24H`, `P7D`, `P1DT12H`).
 * Years and months count as 365 and 30 days: a lookback needs a window, not a calendar.
 */
const PATTERN =
  /^P(?!$)(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

const UNIT_MS = [365 * 86_400_000, 30 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1_000];

/** Milliseconds in `duration`, or undefined when it is not an ISO 8601 duration. */
export function parseDuration(duration: string): number | undefined {
  const match = PATTERN.exec(duration.trim().toUpperCase());
  if (!match) return undefined;
  let total = 0;
  for (let i = 0; i < UNIT_MS.length; i++) {
    const part = match[i + 1];
    if (part !== undefined) total += Number(part) * (UNIT_MS[i] as number);
  }
  return Math.round(total);
}
