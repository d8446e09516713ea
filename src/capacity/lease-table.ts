// Slot and context-budget usage per (node, model). Private to the registry, which takes it together
// with the node's in-flight count as one claim (`NodeRegistry.claim`); routing reads it through
// snapshots. Released exactly once on completion, error or abort.

export interface Usage {
  readonly requests: number;
  readonly tokens: number;
}

export interface Limits {
  readonly slots: number | undefined;
  readonly budget: number | undefined;
}

export type Refusal = 'no_slot' | 'no_budget';

/** Pure: whether one more request holding `tokens` fits beside `usage` within `limits`. */
export function admits(usage: Usage, limits: Limits, tokens: number): Refusal | undefined {
  if (limits.slots !== undefined && usage.requests >= limits.slots) return 'no_slot';
  // An idle model always admits one request: the context check already made sure it fits alone.
  if (limits.budget !== undefined && usage.requests > 0 && usage.tokens + tokens > limits.budget) return 'no_budget';
  return undefined;
}

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
