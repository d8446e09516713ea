// The operator's loads that stand against the reconciler: an admin load of a model on a node holds
// it there for `[models] operator_hold` (or until the operator unloads it). While it holds, the
// reconciler never unloads that model on that node to make room (reconcile-plan.ts): a warm model
// it evicted is not restored there. A hold never makes a pinned model unloadable — a load never
// evicts a pinned model. Times are monotonic ms; an expired hold is gone on the next read.

export interface OperatorHold {
  readonly node: string;
  readonly model: string;
  /** Monotonic ms the hold was taken. */
  readonly sinceMs: number;
  /** Monotonic ms it ends. */
  readonly untilMs: number;
}

const key = (node: string, model: string): string => `${node}\u0000${model}`;

export class OperatorHolds {
  readonly #holds = new Map<string, OperatorHold>();

  /** Holds `model` on `node` from `nowMs` for `forMs` (a new load renews it). */
  hold(node: string, model: string, nowMs: number, forMs: number): OperatorHold {
    const hold = { node, model, sinceMs: nowMs, untilMs: nowMs + forMs };
    this.#holds.set(key(node, model), hold);
    return hold;
  }

  /** The operator unloaded it: the hold ends. */
  release(node: string, model: string): void {
    this.#holds.delete(key(node, model));
  }

  held(node: string, model: string, nowMs: number): boolean {
    const hold = this.#holds.get(key(node, model));
    if (hold === undefined) return false;
    if (hold.untilMs > nowMs) return true;
    this.#holds.delete(key(node, model));
    return false;
  }

  /** The holds in force at `nowMs`, by node and model. */
  list(nowMs: number): OperatorHold[] {
    for (const [k, hold] of this.#holds) if (hold.untilMs <= nowMs) this.#holds.delete(k);
    return [...this.#holds.values()].sort((a, b) => a.node.localeCompare(b.node) || a.model.localeCompare(b.model));
  }
}
