// Pure: what the Traffic charts show on their y axes, in their legends and between buckets. A chart
// reads in one unit picked for its largest value — durations in ms, or in s above 10,000 ms; rates
// per minute, or per second from 10/s — with ticks on whole numbers of that unit (steps of 1, 2 or
// 5 × 10^k, never a fraction), so a label is always a whole, readable number with its unit. The
// buckets span the whole window: one with no requests is a gap in a duration (null, never joined
// across) and a zero in a rate (nothing was asked then).

const figures = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** Durations above this many ms read in seconds. */
export const SECONDS_ABOVE_MS = 10_000;
/** Rates from this many per second read per second (below: per minute, whole numbers for a quiet gateway). */
export const PER_SECOND_FROM = 10;

/**
 * The unit of an axis: `per` base units (ms, or requests per second) make one of it; `suffix` follows the figure.
 * `kind` is 'ms' (durations) or 'rate' (per second); `max` the largest value drawn (in base units).
 */
export function unitFor(kind, max) {
  const top = Number.isFinite(max) ? max : 0;
  if (kind === 'ms') return top > SECONDS_ABOVE_MS ? { suffix: ' s', per: 1000 } : { suffix: ' ms', per: 1 };
  return top >= PER_SECOND_FROM ? { suffix: '/s', per: 1 } : { suffix: '/min', per: 1 / 60 };
}

/**
 * Ticks from 0 to at least `max` (base units), at most `count` steps, each a whole number of `unit`:
 * { top, splits } in base units. An empty chart (max 0) still gets one step.
 */
export function ticksFor(max, unit, count = 4) {
  const shown = Math.max(0, Number.isFinite(max) ? max : 0) / unit.per;
  let step = 1;
  for (let scale = 1; ; scale *= 10) {
    const found = [1, 2, 5].map((m) => m * scale).find((s) => shown / s <= count);
    if (found !== undefined) {
      step = found;
      break;
    }
  }
  const steps = Math.max(1, Math.ceil(shown / step - 1e-9));
  const splits = Array.from({ length: steps + 1 }, (_, i) => i * step * unit.per);
  return { top: steps * step * unit.per, splits };
}

/** A tick's label: the whole figure in the unit, grouped by thousands ("1,500 ms", "20 s", "6/min"). */
export function tickLabel(value, unit) {
  return `${figures.format(Math.round(value / unit.per))}${unit.suffix}`;
}

/** A value in the legend: ms whole below 10,000 ms, seconds to a tenth above; rates to a tenth in the chart's unit. */
export function valueLabel(kind, value, unit) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (kind === 'ms') return value > SECONDS_ABOVE_MS ? `${oneDecimal.format(value / 1000)} s` : `${figures.format(value)} ms`;
  return `${oneDecimal.format(value / unit.per)}${unit.suffix}`;
}

/**
 * Every bucket of the window ending at `now` (start ms, oldest first), each with its point or
 * undefined: the x values of a chart, with the idle buckets in place.
 */
export function windowBuckets(points, now, windowMs, bucketMs) {
  const byStart = new Map(points.map((p) => [p[0], p]));
  const last = Math.floor(now / bucketMs) * bucketMs;
  const first = last - Math.floor(windowMs / bucketMs) * bucketMs;
  const out = [];
  for (let start = first; start <= last; start += bucketMs) out.push([start, byStart.get(start)]);
  // A point the page holds outside the grid (another bucket size) is drawn all the same.
  for (const p of points) if (p[0] < first || p[0] > last || (p[0] - first) % bucketMs !== 0) out.push([p[0], p]);
  return out.sort((a, b) => a[0] - b[0]);
}

/** The index of the newest bucket with a value in any of `columns` (uPlot's data without x), or null. */
export function latestIndex(columns) {
  const length = columns[0]?.length ?? 0;
  for (let i = length - 1; i >= 0; i--) if (columns.some((c) => c[i] !== null && c[i] !== undefined)) return i;
  return null;
}

/** The indices of values with no neighbour (a bucket alone between idle ones): drawn as a dot, as no line reaches them. */
export function loneIndices(values) {
  const out = [];
  const has = (i) => values[i] !== null && values[i] !== undefined;
  for (let i = 0; i < values.length; i++) if (has(i) && !has(i - 1) && !has(i + 1)) out.push(i);
  return out;
}
