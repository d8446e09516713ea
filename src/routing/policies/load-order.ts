// One candidates array kept ordered by live in-flight count: a bucket per count, each a linked list
// of candidates (typed arrays, no object per candidate). Built once per candidates array (the route
// index hands out the same array until something routing reads changes) and brought up to date
// from the registry's journal of count changes (InFlightJournal): a lease taken or returned is one
// change, moved in O(1). The least loaded candidate is the head of the lowest non-empty bucket, so
// a decision reads the few counts that changed since the last one, not every candidate's.
//
// Ties rotate: the candidate picked goes to the back of its bucket, so equal candidates are taken
// in turn, in candidate order at first (what pickLowest's `turn` gives on unchanged counts).

import type { InFlightJournal } from '#src/nodes/index.ts';

const NONE = -1;

export class LoadOrder {
  /** The count array and journal this order was built from: another one means rebuild. */
  readonly source: ArrayLike<number>;
  readonly journal: InFlightJournal;
  readonly #positions: Int32Array;
  /** Position → candidate index, only when the positions are not ascending (else a binary search). */
  readonly #local: Map<number, number> | undefined;
  readonly #counts: Int32Array;
  readonly #next: Int32Array;
  readonly #prev: Int32Array;
  #head = new Int32Array(4).fill(NONE);
  #tail = new Int32Array(4).fill(NONE);
  #size = new Int32Array(4);
  #min = 0;
  #synced: number;
  /** Bumped by every sync: a choice's lazy scores read the counts only while it is unchanged. */
  #version = 0;

  constructor(positions: Int32Array, source: ArrayLike<number>, journal: InFlightJournal) {
    this.source = source;
    this.journal = journal;
    this.#synced = journal.total;
    this.#positions = positions;
    const count = positions.length;
    let ascending = true;
    for (let i = 1; i < count && ascending; i += 1) ascending = (positions[i - 1] as number) < (positions[i] as number);
    this.#local = ascending ? undefined : new Map();
    this.#counts = new Int32Array(count);
    this.#next = new Int32Array(count);
    this.#prev = new Int32Array(count);
    for (let i = 0; i < count; i += 1) {
      const position = positions[i] as number;
      this.#local?.set(position, i);
      this.#counts[i] = countAt(source, position);
      this.#append(i);
    }
  }

  get version(): number {
    return this.#version;
  }

  get size(): number {
    return this.#positions.length;
  }

  /**
   * Applies the journal's changes since the last sync; false when the journal has forgotten some
   * (the caller builds a new order). Reads one count per change of a candidate.
   */
  sync(): boolean {
    const journal = this.journal;
    const total = journal.total;
    this.#version += 1;
    for (let seq = this.#synced; seq < total; seq += 1) {
      const position = journal.positionAt(seq);
      if (position === undefined) return false;
      const local = this.#indexOf(position);
      if (local < 0) continue;
      const count = countAt(this.source, position);
      if (count === this.#counts[local]) continue;
      this.#unlink(local);
      this.#counts[local] = count;
      this.#append(local);
    }
    this.#synced = total;
    return true;
  }

  /** The least loaded candidate (index into the candidates, the head of its bucket); -1 when there is none. */
  least(): number {
    if (this.#positions.length === 0) return NONE;
    while ((this.#size[this.#min] ?? 0) === 0) this.#min += 1;
    return this.#head[this.#min] as number;
  }

  /** How many candidates share this candidate's count (itself included). */
  tiesOf(index: number): number {
    return this.#size[this.#counts[index] as number] ?? 0;
  }

  /** Sends a candidate to the back of its bucket: the next tie goes first next time. */
  rotate(index: number): void {
    this.#unlink(index);
    this.#append(index);
  }

  /** A candidate's count as of the last sync. */
  countOf(index: number): number {
    return this.#counts[index] ?? 0;
  }

  /** The candidate at `position`, -1 when none is. */
  #indexOf(position: number): number {
    if (this.#local !== undefined) return this.#local.get(position) ?? NONE;
    const positions = this.#positions;
    let lo = 0;
    let hi = positions.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = positions[mid] as number;
      if (at === position) return mid;
      if (at < position) lo = mid + 1;
      else hi = mid - 1;
    }
    return NONE;
  }

  #append(i: number): void {
    const bucket = this.#counts[i] as number;
    this.#ensure(bucket);
    const tail = this.#tail[bucket] as number;
    this.#prev[i] = tail;
    this.#next[i] = NONE;
    if (tail === NONE) this.#head[bucket] = i;
    else this.#next[tail] = i;
    this.#tail[bucket] = i;
    this.#size[bucket] = (this.#size[bucket] as number) + 1;
    if (bucket < this.#min) this.#min = bucket;
  }

  #unlink(i: number): void {
    const bucket = this.#counts[i] as number;
    const prev = this.#prev[i] as number;
    const next = this.#next[i] as number;
    if (prev === NONE) this.#head[bucket] = next;
    else this.#next[prev] = next;
    if (next === NONE) this.#tail[bucket] = prev;
    else this.#prev[next] = prev;
    this.#size[bucket] = (this.#size[bucket] as number) - 1;
  }

  #ensure(bucket: number): void {
    if (bucket < this.#size.length) return;
    let length = this.#size.length;
    while (length <= bucket) length *= 2;
    this.#head = grown(this.#head, length, NONE);
    this.#tail = grown(this.#tail, length, NONE);
    this.#size = grown(this.#size, length, 0);
  }
}

function grown(array: Int32Array, length: number, fill: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(length).fill(fill);
  out.set(array);
  return out;
}

/** A live count, clamped to a bucket index (a negative or fractional count never comes from the registry). */
function countAt(source: ArrayLike<number>, position: number): number {
  const count = source[position] ?? 0;
  return count > 0 ? Math.floor(count) : 0;
}
