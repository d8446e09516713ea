// The Traffic view's memory: per model and per node, requests, errors and latency / time-to-first-
// byte histograms in 10-second buckets over the last 15 minutes. Bounded three ways: the window,
// a fixed-size ring of buckets per series (traffic-ring.ts), and at most MAX_TRAFFIC_SERIES series
// (model labels are already bounded by the metrics' label rules; node names by the config).
//
// `record` runs for every request: it finds its three series by the model's and node's own names
// (no key string built), works out the bucket and the histogram bins once, and adds in place.

import type { ProxyEvents } from '#src/proxy/index.ts';
import { binOf } from './latency-histogram.ts';
import { bucketOf, TrafficRing, type SeriesKind, type TrafficPoint } from './traffic-ring.ts';

export { TRAFFIC_BUCKET_MS, TRAFFIC_WINDOW_MS, type TrafficPoint } from './traffic-ring.ts';
export const MAX_TRAFFIC_SERIES = 256;

/** What the history keeps of a finished request (the proxy's `proxy:request-finished` event). */
export type FinishedRequest = Pick<
  ProxyEvents['proxy:request-finished'],
  'model' | 'node' | 'status' | 'durationMs' | 'firstByteMs' | 'brokenError' | 'clientAborted'
>;

/** Series keys are `all` (every request: the aggregate chart), `model:<id>` and `node:<name>`. */
export type TrafficSeries = Readonly<Record<string, readonly TrafficPoint[]>>;

/** Pure: a request counts as an error when the gateway answered 5xx or the answer broke off midway. */
export function isErrorAnswer(req: Pick<FinishedRequest, 'status' | 'brokenError' | 'clientAborted'>): boolean {
  if (req.clientAborted) return false;
  return req.status >= 500 || req.brokenError !== undefined;
}

export class TrafficHistory {
  /** Every series kept, in the order first written (what `all` lists). */
  readonly #series = new Map<string, TrafficRing>();
  #all: TrafficRing | undefined;
  readonly #byModel = new Map<string, TrafficRing>();
  readonly #byNode = new Map<string, TrafficRing>();
  /** Series written since the last `takeChanged()`, in the order first written. */
  #dirty: TrafficRing[] = [];
  #droppedSeries = 0;

  record(req: FinishedRequest, now: number): void {
    const bucket = bucketOf(now);
    const error = isErrorAnswer(req);
    const latencyBin = binOf(req.durationMs);
    const firstByteBin = req.firstByteMs === undefined ? -1 : binOf(req.firstByteMs);
    const all = this.#all ?? this.#open('all', '', now);
    if (all !== undefined) this.#add(all, bucket, error, latencyBin, firstByteBin);
    const model = this.#byModel.get(req.model) ?? this.#open('model', req.model, now);
    if (model !== undefined) this.#add(model, bucket, error, latencyBin, firstByteBin);
    if (req.node === undefined) return;
    const node = this.#byNode.get(req.node) ?? this.#open('node', req.node, now);
    if (node !== undefined) this.#add(node, bucket, error, latencyBin, firstByteBin);
  }

  /** Every series over the window, oldest bucket first. */
  all(now: number): TrafficSeries {
    const out: Record<string, TrafficPoint[]> = {};
    for (const [key, ring] of this.#series) {
      const points = ring.points(now);
      if (points.length > 0) out[key] = points;
    }
    return out;
  }

  /** The buckets written since the last call (within the window at `now`; default each series' newest bucket): what the live feed sends. */
  takeChanged(now?: number): TrafficSeries {
    const out: Record<string, TrafficPoint[]> = {};
    for (const ring of this.#dirty) {
      const points = ring.takeChanged(now);
      if (points.length > 0) out[ring.key] = points;
    }
    this.#dirty = [];
    return out;
  }

  /** Series refused because MAX_TRAFFIC_SERIES were already kept. */
  droppedSeries(): number {
    return this.#droppedSeries;
  }

  /** Histogram pairs the series hold (each allocated once per ring slot, never per request). */
  allocatedBuckets(): number {
    let n = 0;
    for (const ring of this.#series.values()) n += ring.allocatedSlots;
    return n;
  }

  #add(ring: TrafficRing, bucket: number, error: boolean, latencyBin: number, firstByteBin: number): void {
    if (ring.add(bucket, error, latencyBin, firstByteBin)) this.#dirty.push(ring);
  }

  #open(kind: SeriesKind, name: string, now: number): TrafficRing | undefined {
    if (this.#series.size >= MAX_TRAFFIC_SERIES) this.#evictIdle(now);
    if (this.#series.size >= MAX_TRAFFIC_SERIES) {
      this.#droppedSeries++;
      return undefined;
    }
    const ring = new TrafficRing(kind, name);
    this.#series.set(ring.key, ring);
    if (kind === 'all') this.#all = ring;
    else this.#index(kind).set(name, ring);
    return ring;
  }

  #index(kind: 'model' | 'node'): Map<string, TrafficRing> {
    return kind === 'node' ? this.#byNode : this.#byModel;
  }

  /** Series with nothing left in the window make room for new ones. */
  #evictIdle(now: number): void {
    for (const [key, ring] of this.#series) {
      if (!ring.idle(now)) continue;
      this.#series.delete(key);
      if (ring.kind === 'all') this.#all = undefined;
      else this.#index(ring.kind).delete(ring.name);
    }
    // A dirty series evicted: its unsent buckets left the window with it.
    if (this.#dirty.some((ring) => !this.#series.has(ring.key)))
      this.#dirty = this.#dirty.filter((ring) => this.#series.get(ring.key) === ring);
  }
}
