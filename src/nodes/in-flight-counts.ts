// What is in flight on the nodes, as the registry's claims count it (`NodeRegistry.claim` takes
// both at once and one release gives both back; private to the registry, routing reads them through
// snapshots): requests per active node by view position, and per (node, model) the requests and the
// context tokens they hold (the lease table: slots and the context budget, released exactly once on
// completion, error or abort).
//
// In-flight requests per active node by view position, and how many nodes are at the connection
// limit. Routing at 1,000 nodes reads each count by position (an array read, not a lookup by name)
// and skips the connection check altogether while no node is at the limit. Every change is also
// journalled (the position, in a bounded ring), so a reader that keeps candidates ordered by load
// (routing's least-in-flight) catches up on the few changes since its last read instead of
// reading every count again.

import type { Usage } from '#src/capacity/index.ts';
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

// ---- the lease table: slot and context-budget usage per (node, model) ----

/** One (node, model) usage entry taken; `release` is idempotent. */
export interface UsageClaim {
  release(): void;
}

const IDLE: Usage = Object.freeze({ requests: 0, tokens: 0 });

interface UsageEntry {
  requests: number;
  tokens: number;
}

export class LeaseTable {
  /** Per node, its models with leases out; a node's map stays once made (one per node name: no map per request). */
  readonly #usage = new Map<string, Map<string, UsageEntry>>();

  usage(node: string, model: string): Usage {
    return this.#usage.get(node)?.get(model) ?? IDLE;
  }

  acquire(node: string, model: string, tokens: number): UsageClaim {
    let byModel = this.#usage.get(node);
    if (byModel === undefined) {
      byModel = new Map();
      this.#usage.set(node, byModel);
    }
    const entry = byModel.get(model) ?? { requests: 0, tokens: 0 };
    entry.requests += 1;
    entry.tokens += tokens;
    byModel.set(model, entry);
    const claim: EntryClaim = { byModel, model, entry, tokens, released: false, release: releaseEntry };
    return claim;
  }

  /** Every (node, model) with leases out, as plain copies. */
  entries(): { node: string; model: string; requests: number; tokens: number }[] {
    const out: { node: string; model: string; requests: number; tokens: number }[] = [];
    for (const [node, byModel] of this.#usage) {
      for (const [model, usage] of byModel) out.push({ node, model, ...usage });
    }
    return out;
  }

  totalRequests(): number {
    let total = 0;
    for (const byModel of this.#usage.values()) for (const usage of byModel.values()) total += usage.requests;
    return total;
  }
}

/** One acquire's share of an entry, given back once: one plain object per request (no closure, no class). */
interface EntryClaim extends UsageClaim {
  readonly byModel: Map<string, UsageEntry>;
  readonly model: string;
  readonly entry: UsageEntry;
  readonly tokens: number;
  released: boolean;
}

function releaseEntry(this: EntryClaim): void {
  if (this.released) return;
  this.released = true;
  const entry = this.entry;
  entry.requests -= 1;
  entry.tokens -= this.tokens;
  if (entry.requests === 0) this.byModel.delete(this.model);
}
