// Durations in the sim TOML are strings with a unit ("50ms", "2s", "1.5s", "1m"); this turns them
// into milliseconds.

const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const MS_PER_UNIT: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 };

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text.trim());
  if (match === null) return undefined;
  const [, amount, unit] = match;
  const perUnit = MS_PER_UNIT[unit ?? ''];
  if (amount === undefined || perUnit === undefined) return undefined;
  return Math.round(Number(amount) * perUnit);
}
