// Pure: a fixed log-scale histogram of durations, so a traffic bucket holds any number of requests
// in constant memory and still answers p50 / p99 (within one bin's width, 25 %).

/** Upper edge of bin 0 in ms; each next bin is GROWTH times wider. 64 bins reach past 20 minutes. */
const FIRST_EDGE_MS = 1;
const GROWTH = 1.25;
export const HISTOGRAM_BINS = 64;

export function binOf(ms: number): number {
  if (!(ms > FIRST_EDGE_MS)) return 0;
  return Math.min(HISTOGRAM_BINS - 1, Math.ceil(Math.log(ms / FIRST_EDGE_MS) / Math.log(GROWTH)));
}

/** The upper edge of a bin: a quantile reads as "at most this long". */
export function binEdgeMs(bin: number): number {
  return FIRST_EDGE_MS * GROWTH ** bin;
}

export function emptyHistogram(): Uint32Array {
  return new Uint32Array(HISTOGRAM_BINS);
}

export function addSample(histogram: Uint32Array, ms: number): void {
  const bin = binOf(ms);
  histogram[bin] = (histogram[bin] ?? 0) + 1;
}

/** The q-quantile (0..1) in ms, rounded to whole ms; null for an empty histogram. */
export function quantileMs(histogram: Uint32Array, q: number): number | null {
  let total = 0;
  for (const count of histogram) total += count;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let bin = 0; bin < histogram.length; bin++) {
    seen += histogram[bin] ?? 0;
    if (seen >= rank) return Math.round(binEdgeMs(bin));
  }
  return Math.round(binEdgeMs(HISTOGRAM_BINS - 1));
}
