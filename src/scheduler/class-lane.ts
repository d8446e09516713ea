// One priority class of a model's queue: start-time fair queueing (SFQ, Goyal, Vin & Cheng 1996)
// between the class's tenants. Each waiting request carries a start tag S = max(V, F of the same
// tenant's previous request) and a finish tag F = S + cost / weight; the request with the smallest
// start tag goes first (ties by arrival). V, the lane's virtual time, is the start tag of the
// request served last. A tenant that goes idle and comes back starts at V again: it banks no
// credit for the time it was away, and one with 500 requests queued runs ahead of a newcomer by
// at most one request. An empty lane starts over at zero.

import { IndexedHeap } from './indexed-heap.ts';

/** What a lane needs to know of a waiting request. */
export interface LaneEntry {
  readonly tenant: string;
  /** The tenant's share against the lane's other tenants (> 0). */
  readonly weight: number;
  /** Its estimated tokens (prompt upper bound + max_tokens or the completion reserve). */
  readonly cost: number;
  /** Arrival order in the whole queue (ties, and newest-first shedding). */
  readonly seq: number;
  start: number;
  finish: number;
}

export class ClassLane<E extends LaneEntry> {
  #virtualTime = 0;
  /** Finish tag of each tenant's last request tagged in this lane. */
  readonly #tails = new Map<string, number>();
  readonly #order = new IndexedHeap<E>((a, b) => a.start < b.start || (a.start === b.start && a.seq < b.seq));

  get size(): number {
    return this.#order.size;
  }

  get virtualTime(): number {
    return this.#virtualTime;
  }

  /** The request this lane serves next. */
  head(): E | undefined {
    return this.#order.peek();
  }

  entries(): IterableIterator<E> {
    return this.#order.values();
  }

  /** Tags `entry` as arriving now and queues it. */
  add(entry: E): void {
    const start = Math.max(this.#virtualTime, this.#tails.get(entry.tenant) ?? 0);
    entry.start = start;
    entry.finish = start + entry.cost / entry.weight;
    this.#tails.set(entry.tenant, entry.finish);
    this.#order.push(entry);
  }

  /** `entry` got its turn: virtual time moves to its start tag. */
  served(entry: E): boolean {
    if (!this.#order.remove(entry)) return false;
    this.#virtualTime = Math.max(this.#virtualTime, entry.start);
    this.#afterRemoval();
    return true;
  }

  /**
   * `entry` left unserved (timed out, aborted, shed, raised to another class): it is charged for
   * nothing. If it was its tenant's last, the tenant's next request starts where it would have.
   */
  remove(entry: E): boolean {
    if (!this.#order.remove(entry)) return false;
    if (this.#tails.get(entry.tenant) === entry.finish) this.#tails.set(entry.tenant, entry.start);
    this.#afterRemoval();
    return true;
  }

  #afterRemoval(): void {
    if (this.#order.size > 0) return;
    this.#virtualTime = 0;
    this.#tails.clear();
  }
}
