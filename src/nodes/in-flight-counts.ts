// In-flight requests per active node by view position, and how many nodes are at the connection
// limit. Routing at 1,000 nodes reads each count by position (an array read, not a lookup by name)
// and skips the connection check altogether while no node is at the limit. Every change is also
// journalled (the position, in a bounded ring), so a reader that keeps candidates ordered by load
// (routing's least-in-flight) catches up on the few changes since its last read instead of
// reading every count again.

import type { InFlightJournal } from './node.ts';

/** Changes the journal remembers; a reader further behind reads every count again. */
export const IN_FLIGHT_JOURNAL_SIZE = 4096;

export class InFlightCounts implements InFlightJournal {
  /** Live counts by position; replaced (not changed) when the node set changes. */
  byPosition: number[] = [];
  #limit: number | undefined;
  /** Nodes whose count is at or over the limit now (0 without a limit). A field, read by every snapshot; only this class writes it. */
  atLimit = 0;
  readonly #ring = new Int32Array(IN_FLIGHT_JOURNAL_SIZE);
  #total = 0;

  constructor(limit: number | undefined) {
    this.#limit = limit;
  }

  /** Changes journalled so far (every `set`). */
  get total(): number {
    return this.#total;
  }

  /** The position the `seq`-th change was at; undefined once the ring has moved past it (or before it). */
  positionAt(seq: number): number | undefined {
    if (seq < 0 || seq >= this.#total || seq < this.#total - IN_FLIGHT_JOURNAL_SIZE) return undefined;
    return this.#ring[seq % IN_FLIGHT_JOURNAL_SIZE];
  }

  /** A new node set: its counts in position order (a new array: readers rebuild on it). */
  reset(counts: number[]): void {
    this.byPosition = counts;
    this.#recount();
  }

  setLimit(limit: number | undefined): void {
    this.#limit = limit;
    this.#recount();
  }

  set(position: number, count: number): void {
    if (position < 0) return;
    const limit = this.#limit;
    if (limit !== undefined) {
      const before = this.byPosition[position] ?? 0;
      if (before >= limit && count < limit) this.atLimit -= 1;
      else if (before < limit && count >= limit) this.atLimit += 1;
    }
    this.byPosition[position] = count;
    this.#ring[this.#total % IN_FLIGHT_JOURNAL_SIZE] = position;
    this.#total += 1;
  }

  #recount(): void {
    const limit = this.#limit;
    let at = 0;
    if (limit !== undefined) for (const count of this.byPosition) if (count >= limit) at += 1;
    this.atLimit = at;
  }
}
