// The Traffic view's memory: per model and per node, requests, errors and latency / time-to-first-
// byte histograms in 10-second buckets over the last 15 minutes. Bounded three ways: the window,
// a fixed-size histogram per bucket, and at most MAX_TRAFFIC_SERIES series (model labels are
// already bounded by the metrics' label rules; node names by the config).

import { addSample, emptyHistogram, quantileMs } from './latency-histogram.ts';

export const TRAFFIC_BUCKET_MS = 10_000;
export const TRAFFIC_WINDOW_MS = 15 * 60_000;
export const MAX_TRAFFIC_SERIES = 256;

export interface FinishedRequest {
  readonly model: string;
  readonly node: string | undefined;
  readonly status: number;
  readonly durationMs: number;
  readonly firstByteMs: number | undefined;
  readonly brokenError: string | undefined;
  readonly clientAborted: boolean;
}

interface Bucket {
  readonly start: number;
  count: number;
  errors: number;
  readonly latency: Uint32Array;
  readonly firstByte: Uint32Array;
}

/** One bucket as the page draws it: [start ms, requests, errors, p50 ms, p99 ms, ttfb p50, ttfb p99]. */
export type TrafficPoint = readonly [number, number, number, number | null, number | null, number | null, number | null];

/** Series keys are `all` (every request: the aggregate chart), `model:<id>` and `node:<name>`. */
export type TrafficSeries = Readonly<Record<string, readonly TrafficPoint[]>>;

/** Pure: a request counts as an error when the gateway answered 5xx or the answer broke off midway. */
export function isErrorAnswer(req: Pick<FinishedRequest, 'status' | 'brokenError' | 'clientAborted'>): boolean {
  if (req.clientAborted) return false;
  return req.status >= 500 || req.brokenError !== undefined;
}

export class TrafficHistory {
  readonly #series = new Map<string, Bucket[]>();
  /** Buckets written since the last `takeChanged()`, by series. */
  readonly #changed = new Map<string, Set<Bucket>>();
  #droppedSeries = 0;

  record(req: FinishedRequest, now: number): void {
    this.#add('all', req, now);
    this.#add(`model:${req.model}`, req, now);
    if (req.node !== undefined) this.#add(`node:${req.node}`, req, now);
  }

  /** Every series over the window, oldest bucket first. */
  all(now: number): TrafficSeries {
    const out: Record<string, TrafficPoint[]> = {};
    for (const [key, buckets] of this.#series) {
      this.#trim(buckets, now);
      if (buckets.length > 0) out[key] = buckets.map(pointOf);
    }
    return out;
  }

  /** The buckets written since the last call: what the live feed sends. */
  takeChanged(): TrafficSeries {
    const out: Record<string, TrafficPoint[]> = {};
    for (const [key, buckets] of this.#changed) out[key] = [...buckets].map(pointOf);
    this.#changed.clear();
    return out;
  }

  /** Series refused because MAX_TRAFFIC_SERIES were already kept. */
  droppedSeries(): number {
    return this.#droppedSeries;
  }

  #add(key: string, req: FinishedRequest, now: number): void {
    let buckets = this.#series.get(key);
    if (buckets === undefined) {
      if (this.#series.size >= MAX_TRAFFIC_SERIES) this.#evictIdle(now);
      if (this.#series.size >= MAX_TRAFFIC_SERIES) {
        this.#droppedSeries++;
        return;
      }
      buckets = [];
      this.#series.set(key, buckets);
    }
    const start = now - (now % TRAFFIC_BUCKET_MS);
    let bucket = buckets.at(-1);
    if (bucket === undefined || bucket.start !== start) {
      bucket = { start, count: 0, errors: 0, latency: emptyHistogram(), firstByte: emptyHistogram() };
      buckets.push(bucket);
      this.#trim(buckets, now);
      // Nobody may be reading the feed: what left the window is not kept for it either.
      const oldest = buckets[0];
      for (const old of this.#changed.get(key) ?? []) if (oldest !== undefined && old.start < oldest.start) this.#changed.get(key)?.delete(old);
    }
    bucket.count++;
    if (isErrorAnswer(req)) bucket.errors++;
    addSample(bucket.latency, req.durationMs);
    if (req.firstByteMs !== undefined) addSample(bucket.firstByte, req.firstByteMs);
    const changed = this.#changed.get(key) ?? new Set<Bucket>();
    changed.add(bucket);
    this.#changed.set(key, changed);
  }

  #trim(buckets: Bucket[], now: number): void {
    const oldest = now - TRAFFIC_WINDOW_MS;
    let drop = 0;
    while (drop < buckets.length && (buckets[drop]?.start ?? 0) + TRAFFIC_BUCKET_MS <= oldest) drop++;
    if (drop > 0) buckets.splice(0, drop);
  }

  /** Series with nothing left in the window make room for new ones. */
  #evictIdle(now: number): void {
    for (const [key, buckets] of this.#series) {
      this.#trim(buckets, now);
      if (buckets.length === 0) this.#series.delete(key);
    }
  }
}

function pointOf(b: Bucket): TrafficPoint {
  return [b.start, b.count, b.errors, quantileMs(b.latency, 0.5), quantileMs(b.latency, 0.99), quantileMs(b.firstByte, 0.5), quantileMs(b.firstByte, 0.99)];
}
