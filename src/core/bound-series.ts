// Per-request metric updates, bound once to their label values. prom-client builds, validates and
// hashes a label object on every inc and observe (its labels() children too), and a request makes
// about ten of them. Here a series is found again through one Map level per label (the values are
// arguments, at most three: no array, object or string built) and counts in place; prom-client gets
// the figures when it is scraped: a counter's increments are added to its Counter at collect, a
// histogram exports its series in prom-client's own histogram form. /metrics reads the same as
// with prom-client's own updates.

import { Counter, Histogram, type Registry } from 'prom-client';

type Labels = Record<string, string>;

/** A trie of series by label values, one level per label name. */
class SeriesIndex<S> {
  readonly #names: readonly string[];
  readonly #make: (labels: Labels) => S;
  readonly #root = new Branch<S>();
  /** Every series, in the order first seen. */
  readonly all: { readonly values: readonly string[]; readonly labels: Labels; readonly series: S }[] = [];

  constructor(names: readonly string[], make: (labels: Labels) => S) {
    if (names.length < 1 || names.length > 3) throw new Error(`a bound series has one to three labels, not ${names.length}`);
    this.#names = names;
    this.#make = make;
  }

  /** The series of the label values (one per label name, in order; at most three), made on first use. No array per update. */
  at(a: string, b: string | undefined, c: string | undefined): S {
    const n = this.#names.length;
    const given = c !== undefined ? 3 : b !== undefined ? 2 : 1;
    if (given !== n) throw new Error(`expected ${n} label values (${this.#names.join(', ')}), got ${given}`);
    let branch = this.#root;
    for (let i = 0; i < n; i++) {
      const value = (i === 0 ? a : i === 1 ? b : c) as string;
      let next = branch.children.get(value);
      if (next === undefined) {
        next = new Branch<S>();
        branch.children.set(value, next);
      }
      branch = next;
    }
    if (branch.series === undefined) {
      const values = [a, b, c].slice(0, n) as string[];
      const labels: Labels = {};
      this.#names.forEach((name, i) => (labels[name] = values[i] as string));
      branch.series = this.#make(labels);
      this.all.push({ values, labels, series: branch.series });
    }
    return branch.series;
  }
}

class Branch<S> {
  readonly children = new Map<string, Branch<S>>();
  series: S | undefined;
}

interface MetricSpec<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly registers: Registry[];
}

/** A Counter whose series are bound: `inc(values, by)` counts in place, the Counter adds it when scraped. */
export class BoundCounter<L extends string> {
  readonly #index: SeriesIndex<CounterSeries>;

  constructor(spec: MetricSpec<L>) {
    const index = new SeriesIndex<CounterSeries>(spec.labelNames, () => ({ pending: 0, exported: false }));
    this.#index = index;
    new Counter<L>({
      ...spec,
      collect() {
        for (const { values, series } of index.all) {
          // A series counted by 0 is shown (at 0) as prom-client shows it.
          if (series.exported && series.pending === 0) continue;
          this.labels(...values).inc(series.pending);
          series.pending = 0;
          series.exported = true;
        }
      },
    });
  }

  /** Counts `by` on the series of the label values (one per label name, in their order). */
  inc(by: number, a: string, b?: string, c?: string): void {
    if (!Number.isFinite(by) || by < 0) throw new TypeError(`a counter grows by a finite number ≥ 0, not ${by}`);
    this.#index.at(a, b, c).pending += by;
  }
}

interface CounterSeries {
  pending: number;
  exported: boolean;
}

interface HistogramSeries {
  /** Observations per bucket (not cumulative), the last one past every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** A Histogram whose series are bound and kept here; its registry entry reads them (SeriesHistogram). */
export class BoundHistogram<L extends string> {
  readonly #bounds: readonly number[];
  readonly #index: SeriesIndex<HistogramSeries>;

  constructor(spec: MetricSpec<L> & { readonly buckets: readonly number[] }) {
    const bounds = spec.buckets;
    this.#bounds = bounds;
    this.#index = new SeriesIndex<HistogramSeries>(spec.labelNames, () => ({
      counts: new Array<number>(bounds.length + 1).fill(0),
      sum: 0,
      count: 0,
    }));
    new SeriesHistogram<L>(spec, this.#index);
  }

  /** Observes `value` on the series of the label values (one per label name, in their order). Bucketed as prom-client does: the first bound ≥ value. */
  observe(value: number, a: string, b?: string, c?: string): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const series = this.#index.at(a, b, c);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i += 1;
    (series.counts[i] as number) += 1;
    series.sum += value;
    series.count += 1;
  }
}

/**
 * prom-client's registry reads a histogram through getForPromString() (the text; get() maps it to
 * JSON): answered from the bound series in the shape prom-client's Histogram gives, buckets
 * cumulative with `le` first, then `+Inf`, sum and count, series in the order first seen.
 */
class SeriesHistogram<L extends string> extends Histogram<L> {
  readonly #index: SeriesIndex<HistogramSeries>;
  readonly #bounds: readonly number[];
  readonly #name: string;
  readonly #help: string;

  constructor(spec: MetricSpec<L> & { readonly buckets: readonly number[] }, index: SeriesIndex<HistogramSeries>) {
    super({ ...spec, buckets: [...spec.buckets] });
    this.#index = index;
    this.#bounds = spec.buckets;
    this.#name = spec.name;
    this.#help = spec.help;
  }

  getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: HistogramValue[]; aggregator: 'sum' }> {
    const values: HistogramValue[] = [];
    const bucket = `${this.#name}_bucket`;
    for (const { labels, series } of this.#index.all) {
      let below = 0;
      this.#bounds.forEach((le, i) => {
        below += series.counts[i] as number;
        values.push({ labels: { le }, sharedLabels: labels, value: below, metricName: bucket, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: series.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: labels, value: series.sum, metricName: `${this.#name}_sum`, exemplar: undefined });
      values.push({
        labels: {},
        sharedLabels: labels,
        value: series.count,
        metricName: `${this.#name}_count`,
        exemplar: undefined,
      });
    }
    return Promise.resolve({ name: this.#name, help: this.#help, type: 'histogram', values, aggregator: 'sum' });
  }
}

interface HistogramValue {
  readonly labels: Record<string, string | number>;
  readonly sharedLabels: Labels;
  readonly value: number;
  readonly metricName: string;
  /** As prom-client's values carry it: null on buckets, undefined on sum and count (exemplars are off). */
  readonly exemplar: null | undefined;
}
