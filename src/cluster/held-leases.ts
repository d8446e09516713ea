// What this replica holds, by (node, model): the leases granted to it (by the store, or locally
// while in fallback) and its waiters in the global queues. The renew loop reads it; a rejoin
// registers every lease in it again, so nothing in flight is counted twice or forgotten.

import type { Pair, PairHeld } from './store-port.ts';

interface Entry {
  readonly pair: Pair;
  readonly leases: Set<string>;
  readonly waiters: Set<string>;
}

export function pairKey(pair: Pair): string {
  return `${pair.node}\u0000${pair.model}`;
}

export class HeldLeases {
  readonly #byPair = new Map<string, Entry>();

  #entry(pair: Pair): Entry {
    const key = pairKey(pair);
    let entry = this.#byPair.get(key);
    if (entry === undefined) {
      entry = { pair, leases: new Set(), waiters: new Set() };
      this.#byPair.set(key, entry);
    }
    return entry;
  }

  #tidy(pair: Pair, entry: Entry): void {
    if (entry.leases.size === 0 && entry.waiters.size === 0) this.#byPair.delete(pairKey(pair));
  }

  addLease(pair: Pair, id: string): void {
    this.#entry(pair).leases.add(id);
  }

  /** Whether it was held (a second release is a no-op). */
  dropLease(pair: Pair, id: string): boolean {
    const entry = this.#byPair.get(pairKey(pair));
    if (entry === undefined || !entry.leases.delete(id)) return false;
    this.#tidy(pair, entry);
    return true;
  }

  addWaiter(pair: Pair, id: string): void {
    this.#entry(pair).waiters.add(id);
  }

  dropWaiter(pair: Pair, id: string): void {
    const entry = this.#byPair.get(pairKey(pair));
    if (entry === undefined) return;
    entry.waiters.delete(id);
    this.#tidy(pair, entry);
  }

  leasesOn(pair: Pair): number {
    return this.#byPair.get(pairKey(pair))?.leases.size ?? 0;
  }

  snapshot(): PairHeld[] {
    return [...this.#byPair.values()].map((e) => ({ pair: e.pair, leases: [...e.leases], waiters: [...e.waiters] }));
  }

  totals(): { leases: number; waiters: number } {
    let leases = 0;
    let waiters = 0;
    for (const e of this.#byPair.values()) {
      leases += e.leases.size;
      waiters += e.waiters.size;
    }
    return { leases, waiters };
  }
}
