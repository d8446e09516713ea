// The operator's loads and unloads that stand against the reconciler: an admin load of a model on a
// node holds it there (`loaded`), an admin unload holds it off there (`unloaded`), for
// `[models] operator_hold` — a load's hold ends early when the operator unloads it, and the other
// way round. While a `loaded` hold lasts the reconciler never unloads that model on that node to
// make room (reconcile-plan.ts): a warm model it displaced is not restored there; while an
// `unloaded` hold lasts it does not load the model there. A hold never makes a pinned model
// unloadable. Times are monotonic ms; an expired hold is gone on the next read.
//
// The holds are kept in a HoldStore (hold-store.ts): a single gateway's memory, or with [cluster]
// the cluster store, where every replica's reconciler reads the holds any replica made. Reads are
// synchronous (the plan and the decisions are pure), over what this replica knows: its own holds
// at once, and the store's listing taken once per reconciler round (`sync`). A hold or a release
// of this replica whose write is under way (or came after the listing was asked) keeps this
// replica's word over the listing's; one whose write failed is written again on the next round.
// A store that fails (lost): this replica keeps the holds it knows (its own, and the others' as
// last read, each to its end) and says so (`state`), until the store answers again.

import { byNodeAndModel, type HoldKind, type HoldStore, type StoredHold } from './hold-store.ts';

export type { HoldKind } from './hold-store.ts';

export interface OperatorHold {
  readonly node: string;
  readonly model: string;
  /** `loaded`: kept loaded there; `unloaded`: kept off there. */
  readonly kind: HoldKind;
  /** The replica the operator's action went through ([cluster]); null for a single gateway. */
  readonly replica: string | null;
  /** Monotonic ms the hold was taken. */
  readonly sinceMs: number;
  /** Monotonic ms it ends. */
  readonly untilMs: number;
}

/** Where the holds are kept now, and why the store is not read (null: it is). */
export interface HoldsState {
  readonly scope: 'cluster' | 'gateway';
  readonly lost: string | null;
}

const keyOf = (node: string, model: string): string => `${node}\u0000${model}`;

/** Pure: a listed hold as this replica's, its end on this replica's monotonic clock. */
export function heldFrom(stored: StoredHold, nowMs: number): OperatorHold {
  const untilMs = nowMs + stored.leftMs;
  return { node: stored.node, model: stored.model, kind: stored.kind, replica: stored.replica, sinceMs: untilMs - stored.forMs, untilMs };
}

export class OperatorHolds {
  #store: HoldStore;
  #replica: string | null;
  readonly #known = new Map<string, OperatorHold>();
  /** Keys whose last write (a hold or a release) failed: written again before the next listing. */
  readonly #unwritten = new Map<string, { readonly node: string; readonly model: string }>();
  /** Writes under way per key, and the number of each key's last write (to tell a listing older than it). */
  readonly #inFlight = new Map<string, number>();
  readonly #lastWrite = new Map<string, number>();
  readonly #tails = new Map<string, Promise<void>>();
  readonly #counter = { writes: 0 };
  #lost: string | null = null;

  constructor(store: HoldStore, replica: string | null = null) {
    this.#store = store;
    this.#replica = replica;
  }

  /** [cluster] joined: the holds are kept in `store` from now on; the ones this replica knows are written there. */
  share(store: HoldStore, replica: string, nowMs: number): void {
    this.#store = store;
    this.#replica = replica;
    for (const [key, hold] of [...this.#known]) {
      if (hold.untilMs <= nowMs) continue;
      const own = { ...hold, replica: hold.replica ?? replica };
      this.#known.set(key, own);
      this.#write(key, hold.node, hold.model, () => store.putHold({ node: own.node, model: own.model, kind: own.kind, replica: own.replica, forMs: own.untilMs - nowMs }));
    }
  }

  /** Holds `model` on (or off) `node` from `nowMs` for `forMs`; replaces any hold of it there. Written to the store at once. */
  hold(node: string, model: string, kind: HoldKind, nowMs: number, forMs: number): OperatorHold {
    const hold = { node, model, kind, replica: this.#replica, sinceMs: nowMs, untilMs: nowMs + forMs };
    const key = keyOf(node, model);
    this.#known.set(key, hold);
    const store = this.#store;
    this.#write(key, node, model, () => store.putHold({ node, model, kind, replica: hold.replica, forMs }));
    return hold;
  }

  /** The operator acted otherwise on `model` there: its hold ends (every replica's, once the store has it). */
  release(node: string, model: string): void {
    const key = keyOf(node, model);
    this.#known.delete(key);
    const store = this.#store;
    this.#write(key, node, model, () => store.dropHold(node, model));
  }

  /** Settles once every write asked so far is done or failed (an operator's answer waits for its hold). */
  async written(): Promise<void> {
    await Promise.all([...this.#tails.values()]);
  }

  /** Whether the hold of `model` on `node` is kept only by this replica (its write failed: the store is lost). */
  unwritten(node: string, model: string): boolean {
    return this.#unwritten.has(keyOf(node, model));
  }

  /** The hold of `model` on `node` in force at `nowMs`, if any. */
  held(node: string, model: string, nowMs: number): HoldKind | undefined {
    const hold = this.#known.get(keyOf(node, model));
    if (hold === undefined) return undefined;
    if (hold.untilMs > nowMs) return hold.kind;
    this.#known.delete(keyOf(node, model));
    return undefined;
  }

  /** The holds in force at `nowMs`, by node and model. */
  list(nowMs: number): OperatorHold[] {
    for (const [k, hold] of this.#known) if (hold.untilMs <= nowMs) this.#known.delete(k);
    return [...this.#known.values()].sort(byNodeAndModel);
  }

  state(): HoldsState {
    return { scope: this.#store.holdsScope, lost: this.#lost };
  }

  /**
   * Once per reconciler round: writes again what failed, then reads the store's holds. Never
   * rejects: a store that fails leaves what this replica knows, and `state` says why.
   */
  async sync(monotonicMs: () => number): Promise<void> {
    const store = this.#store;
    for (const [key, { node, model }] of [...this.#unwritten]) {
      const hold = this.#known.get(key);
      const left = hold === undefined ? 0 : hold.untilMs - monotonicMs();
      this.#write(key, node, model, () => (hold !== undefined && left > 0 ? store.putHold({ node, model, kind: hold.kind, replica: hold.replica, forMs: left }) : store.dropHold(node, model)));
    }
    await this.written();
    if (this.#unwritten.size > 0) return;
    const asked = this.#counter.writes;
    const busy = new Set([...this.#inFlight.keys()]);
    let listed: StoredHold[];
    try {
      listed = await store.listHolds();
    } catch (error) {
      this.#lost = reasonOf(error);
      return;
    }
    if (store !== this.#store) return;
    this.#lost = null;
    const now = monotonicMs();
    const next = new Map<string, OperatorHold>();
    for (const stored of listed) if (stored.leftMs > 0) next.set(keyOf(stored.node, stored.model), heldFrom(stored, now));
    // This replica's word stands over a listing that may be older than its write.
    const ownWord = (key: string): boolean => busy.has(key) || this.#inFlight.has(key) || this.#unwritten.has(key) || (this.#lastWrite.get(key) ?? 0) > asked;
    for (const key of new Set([...next.keys(), ...this.#known.keys()])) {
      if (!ownWord(key)) continue;
      const mine = this.#known.get(key);
      if (mine === undefined) next.delete(key);
      else next.set(key, mine);
    }
    this.#known.clear();
    for (const [key, hold] of next) this.#known.set(key, hold);
    for (const [key, n] of [...this.#lastWrite]) if (n <= asked && !this.#inFlight.has(key)) this.#lastWrite.delete(key);
  }

  /** One write of `key`, after the ones before it (so the store sees them in order). */
  #write(key: string, node: string, model: string, op: () => Promise<void>): void {
    this.#counter.writes += 1;
    const n = this.#counter.writes;
    this.#lastWrite.set(key, n);
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
    const done = (this.#tails.get(key) ?? Promise.resolve())
      .then(op)
      .then(
        () => {
          // Writes of a key run in order: the last one done is the store's word.
          this.#unwritten.delete(key);
        },
        (error: unknown) => {
          this.#unwritten.set(key, { node, model });
          this.#lost = reasonOf(error);
        },
      )
      .finally(() => {
        const left = (this.#inFlight.get(key) ?? 1) - 1;
        if (left > 0) this.#inFlight.set(key, left);
        else this.#inFlight.delete(key);
        if (this.#tails.get(key) === done) this.#tails.delete(key);
      });
    this.#tails.set(key, done);
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
