// The operator's loads and unloads that stand against the reconciler: an admin load of a model on a
// node holds it there (`loaded`), an admin unload holds it off there (`unloaded`), for
// `[models] operator_hold` — a load's hold ends early when the operator unloads it, and the other
// way round. While a `loaded` hold lasts the reconciler never unloads that model on that node to
// make room (reconcile-plan.ts): a warm model it displaced is not restored there; while an
// `unloaded` hold lasts it does not load the model there. A hold never makes a pinned model
// unloadable. Times are monotonic ms; an expired hold is gone on the next read.

export type HoldKind = 'loaded' | 'unloaded';

export interface OperatorHold {
  readonly node: string;
  readonly model: string;
  /** `loaded`: kept loaded there; `unloaded`: kept off there. */
  readonly kind: HoldKind;
  /** Monotonic ms the hold was taken. */
  readonly sinceMs: number;
  /** Monotonic ms it ends. */
  readonly untilMs: number;
}

const key = (node: string, model: string): string => `${node}\u0000${model}`;

export class OperatorHolds {
  readonly #holds = new Map<string, OperatorHold>();

  /** Holds `model` on (or off) `node` from `nowMs` for `forMs`; replaces any hold of it there. */
  hold(node: string, model: string, kind: HoldKind, nowMs: number, forMs: number): OperatorHold {
    const hold = { node, model, kind, sinceMs: nowMs, untilMs: nowMs + forMs };
    this.#holds.set(key(node, model), hold);
    return hold;
  }

  /** The operator acted otherwise on `model` there: its hold ends. */
  release(node: string, model: string): void {
    this.#holds.delete(key(node, model));
  }

  /** The hold of `model` on `node` in force at `nowMs`, if any. */
  held(node: string, model: string, nowMs: number): HoldKind | undefined {
    const hold = this.#holds.get(key(node, model));
    if (hold === undefined) return undefined;
    if (hold.untilMs > nowMs) return hold.kind;
    this.#holds.delete(key(node, model));
    return undefined;
  }

  /** The holds in force at `nowMs`, by node and model. */
  list(nowMs: number): OperatorHold[] {
    for (const [k, hold] of this.#holds) if (hold.untilMs <= nowMs) this.#holds.delete(k);
    return [...this.#holds.values()].sort((a, b) => a.node.localeCompare(b.node) || a.model.localeCompare(b.model));
  }
}
