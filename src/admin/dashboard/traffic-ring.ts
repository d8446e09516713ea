// One traffic series (the aggregate, a model or a node): its 10-second buckets over the window as a
// ring of slots in typed arrays, written in place. A request adds to its bucket's counters and
// histogram bins (O(1), nothing allocated); a slot is reused when its bucket leaves the window, so a
// series allocates its histograms at most once per slot in its life.

import { HISTOGRAM_BINS, quantileMs } from './latency-histogram.ts';

export const TRAFFIC_BUCKET_MS = 10_000;
export const TRAFFIC_WINDOW_MS = 15 * 60_000;
/** Buckets a series can hold at once: a bucket stays while any of it is within the window. */
export const RING_SLOTS = TRAFFIC_WINDOW_MS / TRAFFIC_BUCKET_MS + 1;

/** One bucket as the page draws it: [start ms, requests, errors, p50 ms, p99 ms, ttfb p50, ttfb p99]. */
export type TrafficPoint = readonly [number, number, number, number | null, number | null, number | null, number | null];

export type SeriesKind = 'all' | 'model' | 'node';

/**
 * The number of the bucket `now` falls in (its start is that × TRAFFIC_BUCKET_MS). A small integer
 * (~1.7e8 for today's epoch ms), so it travels unboxed where epoch milliseconds would not.
 */
export function bucketOf(now: number): number {
  return Math.floor(now / TRAFFIC_BUCKET_MS);
}

/** Whether bucket `bucket` still has some of its time within the window, `current` being now's. */
function inWindow(bucket: number, current: number): boolean {
  return bucket > current - RING_SLOTS;
}

function slotOf(bucket: number): number {
  const n = bucket % RING_SLOTS;
  return n < 0 ? n + RING_SLOTS : n;
}

/** A slot that never held a bucket. */
const NO_BUCKET = -0x80000000;

export class TrafficRing {
  /** `all`, `model:<id>` or `node:<name>`: built once, when the series is first written. */
  readonly key: string;
  readonly kind: SeriesKind;
  readonly name: string;
  /** Whether some bucket was written since the last `takeChanged`. */
  dirty = false;
  readonly #buckets = new Int32Array(RING_SLOTS).fill(NO_BUCKET);
  readonly #counts = new Uint32Array(RING_SLOTS);
  readonly #errors = new Uint32Array(RING_SLOTS);
  readonly #written = new Uint8Array(RING_SLOTS);
  /** A slot's histograms, allocated the first time the slot holds a bucket. */
  readonly #latency = new Array<Uint32Array | undefined>(RING_SLOTS).fill(undefined);
  readonly #firstByte = new Array<Uint32Array | undefined>(RING_SLOTS).fill(undefined);
  #allocated = 0;
  #newest = NO_BUCKET;

  constructor(kind: SeriesKind, name: string) {
    this.kind = kind;
    this.name = name;
    this.key = kind === 'all' ? 'all' : `${kind}:${name}`;
  }

  /** Histogram pairs allocated so far (at most RING_SLOTS in the series' life). */
  get allocatedSlots(): number {
    return this.#allocated;
  }

  /** One request in bucket number `bucket`: `latencyBin` and `firstByteBin` (-1: no first byte) are histogram bins. Answers whether the series just became dirty. */
  add(bucket: number, error: boolean, latencyBin: number, firstByteBin: number): boolean {
    const slot = slotOf(bucket);
    if (this.#buckets[slot] !== bucket) this.#open(slot, bucket);
    this.#counts[slot] = (this.#counts[slot] ?? 0) + 1;
    if (error) this.#errors[slot] = (this.#errors[slot] ?? 0) + 1;
    const latency = this.#latency[slot];
    if (latency !== undefined) latency[latencyBin] = (latency[latencyBin] ?? 0) + 1;
    const firstByte = this.#firstByte[slot];
    if (firstByteBin >= 0 && firstByte !== undefined) firstByte[firstByteBin] = (firstByte[firstByteBin] ?? 0) + 1;
    this.#written[slot] = 1;
    if (this.dirty) return false;
    this.dirty = true;
    return true;
  }

  /** Nothing of the series is left within the window. */
  idle(now: number): boolean {
    return this.#newest === NO_BUCKET || !inWindow(this.#newest, bucketOf(now));
  }

  /** Every bucket within the window, oldest first. */
  points(now: number): TrafficPoint[] {
    return this.#collect(now, false);
  }

  /** The buckets written since the last call (within the window at `now`, default the newest bucket's), oldest first; the series is clean after. */
  takeChanged(now?: number): TrafficPoint[] {
    const out = this.#collect(now ?? this.#newest * TRAFFIC_BUCKET_MS, true);
    this.#written.fill(0);
    this.dirty = false;
    return out;
  }

  #collect(now: number, writtenOnly: boolean): TrafficPoint[] {
    const out: TrafficPoint[] = [];
    const current = bucketOf(now);
    const newest = Math.max(current, this.#newest);
    for (let k = RING_SLOTS - 1; k >= 0; k--) {
      const bucket = newest - k;
      const slot = slotOf(bucket);
      if (this.#buckets[slot] !== bucket || !inWindow(bucket, current)) continue;
      if (writtenOnly && this.#written[slot] !== 1) continue;
      out.push(this.#point(slot, bucket * TRAFFIC_BUCKET_MS));
    }
    return out;
  }

  #point(slot: number, start: number): TrafficPoint {
    const latency = this.#latency[slot] ?? new Uint32Array(0);
    const firstByte = this.#firstByte[slot] ?? new Uint32Array(0);
    return [
      start,
      this.#counts[slot] ?? 0,
      this.#errors[slot] ?? 0,
      quantileMs(latency, 0.5),
      quantileMs(latency, 0.99),
      quantileMs(firstByte, 0.5),
      quantileMs(firstByte, 0.99),
    ];
  }

  /** A new bucket in `slot`: what it held left the window (the ring spans it), so it is cleared in place. */
  #open(slot: number, bucket: number): void {
    this.#buckets[slot] = bucket;
    this.#counts[slot] = 0;
    this.#errors[slot] = 0;
    this.#written[slot] = 0;
    if (bucket > this.#newest) this.#newest = bucket;
    const latency = this.#latency[slot];
    if (latency === undefined) {
      this.#latency[slot] = new Uint32Array(HISTOGRAM_BINS);
      this.#firstByte[slot] = new Uint32Array(HISTOGRAM_BINS);
      this.#allocated++;
      return;
    }
    latency.fill(0);
    this.#firstByte[slot]?.fill(0);
  }
}
