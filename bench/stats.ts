// Small number helpers shared by the benchmarks.

/** Nearest-rank percentile of unsorted samples (0 for none). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/** The middle value; the mean of the two middle values for an even count. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Rounds for reports: 3 significant digits, at most 3 decimals. */
export function round(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const digits = Math.max(0, Math.min(3, 2 - Math.floor(Math.log10(Math.abs(value)))));
  return Number(value.toFixed(digits));
}

/** Memory is reported in MB (10^6 bytes), the unit the targets use. */
export const MB = 1_000_000;
