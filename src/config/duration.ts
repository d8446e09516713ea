// Durations as operators write them ("250ms", "3s", "1m30s") turned into milliseconds.
// A bare number is refused: "5" could mean seconds or milliseconds, and guessing wrong is silent.
import { invalid, valid, type ParseResult } from './parse-result.ts';

const MS_PER_UNIT: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** setTimeout fires at once for anything longer, so a longer duration would be a busy loop. */
export const MAX_DURATION_MS = 2_147_483_647;

const WHOLE_DURATION = /^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
const EXPECTED = 'must be a duration like "3s" or "250ms"';

export function parseDurationMs(value: unknown): ParseResult<number> {
  if (typeof value === 'number') return invalid(`${EXPECTED}; a bare number has no unit (ms, s, m or h)`);
  if (typeof value !== 'string') return invalid(EXPECTED);
  if (!WHOLE_DURATION.test(value)) return invalid(`${EXPECTED} (units: ms, s, m, h; combine as "1m30s")`);
  let totalMs = 0;
  for (const [, amount, unit] of value.matchAll(DURATION_PART)) {
    totalMs += Number(amount) * (MS_PER_UNIT[unit ?? ''] ?? Number.NaN);
  }
  // Decimal parts like "1.1s" carry binary rounding noise; anything finer than 1 µs is that noise.
  const roundedMs = Math.round(totalMs * 1000) / 1000;
  if (!Number.isInteger(roundedMs)) return invalid(`${EXPECTED}; it must be a whole number of milliseconds`);
  if (roundedMs > MAX_DURATION_MS) return invalid(`must be at most ${formatDurationMs(MAX_DURATION_MS)}`);
  return valid(roundedMs);
}

/** The shortest spelling that parseDurationMs reads back to the same value: 90000 → "1m30s". */
export function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  let restMs = ms;
  let text = '';
  for (const [unit, unitMs] of Object.entries(MS_PER_UNIT)) {
    const count = Math.floor(restMs / unitMs);
    if (count > 0) text += `${count}${unit}`;
    restMs -= count * unitMs;
  }
  return text;
}
