// In-flight requests per active node by view position, and how many nodes are at the connection
// limit. Routing at 1,000 nodes reads each count by position (an array read, not a lookup by name)
// and skips the connection check altogether while no node is at the limit.

export class InFlightCounts {
  /** Live counts by position; replaced (not changed) when the node set changes. */
  byPosition: number[] = [];
  #limit: number | undefined;
  #atLimit = 0;

  constructor(limit: number | undefined) {
    this.#limit = limit;
  }

  /** Nodes whose count is at or over the limit now (0 without a limit). */
  get atLimit(): number {
    return this.#atLimit;
  }

  /** A new node set: its counts in position order. */
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
      if (before >= limit && count < limit) this.#atLimit -= 1;
      else if (before < limit && count >= limit) this.#atLimit += 1;
    }
    this.byPosition[position] = count;
  }

  #recount(): void {
    const limit = this.#limit;
    let at = 0;
    if (limit !== undefined) for (const count of this.byPosition) if (count >= limit) at += 1;
    this.#atLimit = at;
  }
}
