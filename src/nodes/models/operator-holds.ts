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
// and releases at once, the store's records once per reconciler round (`sync`). A write of this
// replica under way (or asked after the listing was) keeps this replica's word over the listing's;
// one that failed is written again on the next round. A hold leaves only by its end or a
// `released` record (the operator's unload through any replica); one this replica made that the
// store no longer has (it restarted empty) is written again. A store that fails (lost): this
// replica keeps the holds it knows (its own, and the others' as last read, each to its end) and
// says so (`state`), until the store answers again.

import { byNodeAndModel, type HoldKind, type HoldRecord, type HoldStore, type StoredHold } from './hold-store.ts';

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

/** A hold of its maker with less than this left is let end rather than written again. */
const REWRITE_MIN_MS = 1_000;

const keyOf = (node: string, model: string): string => `${node}\u0000${model}`;

/** Pure: a listed hold as this replica's, its end on this replica's monotonic clock. */
export function heldFrom(stored: StoredHold & { readonly kind: HoldKind }, nowMs: number): OperatorHold {
  const untilMs = nowMs + stored.leftMs;
  return {
    node: stored.node,
    model: stored.model,
    kind: stored.kind,
    replica: stored.replica,
    sinceMs: untilMs - stored.forMs,
    untilMs,
  };
}

/** A write asked: the record, and when (monotonic ms), so a retry writes what is left of it. */
interface Asked {
  readonly record: HoldRecord;
  readonly atMs: number;
}

export class OperatorHolds {
  #store: HoldStore;
  #replica: string | null;
  readonly #known = new Map<string, OperatorHold>();
  /** Keys whose last write failed: written again before the next listing. */
  readonly #unwritten = new Map<string, Asked>();
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
      this.#write(
        key,
        { node: own.node, model: own.model, kind: own.kind, replica: own.replica, forMs: own.untilMs - nowMs },
        nowMs,
      );
    }
  }

  /** Holds `model` on (or off) `node` from `nowMs` for `forMs`; replaces any hold of it there. Written to the store at once. */
  hold(node: string, model: string, kind: HoldKind, nowMs: number, forMs: number): OperatorHold {
    const hold = { node, model, kind, replica: this.#replica, sinceMs: nowMs, untilMs: nowMs + forMs };
    const key = keyOf(node, model);
    this.#known.set(key, hold);
    this.#write(key, { node, model, kind, replica: hold.replica, forMs }, nowMs);
    return hold;
  }

  /**
   * The operator acted otherwise on `model` there: its hold ends, on every replica once the store
   * has the release (kept `forMs`, or as long as the hold had left, so none keeps it from its last read).
   */
  release(node: string, model: string, nowMs: number, forMs: number): void {
    const key = keyOf(node, model);
    const left = (this.#known.get(key)?.untilMs ?? nowMs) - nowMs;
    this.#known.delete(key);
    this.#write(key, { node, model, kind: 'released', replica: this.#replica, forMs: Math.max(forMs, left, 1) }, nowMs);
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
   * Once per reconciler round: writes again what failed, then reads the store's records. Never
   * rejects: a store that fails leaves what this replica knows, and `state` says why.
   */
  async sync(monotonicMs: () => number): Promise<void> {
    const store = this.#store;
    for (const [key, { record, atMs }] of [...this.#unwritten]) {
      const now = monotonicMs();
      const hold = this.#known.get(key);
      const left = record.kind === 'released' ? record.forMs - (now - atMs) : (hold?.untilMs ?? now) - now;
      if (left <= 0 || (record.kind !== 'released' && hold === undefined)) this.#unwritten.delete(key);
      else this.#write(key, { ...record, forMs: left }, now);
    }
    await this.written();
    if (this.#unwritten.size > 0) return;
    const asked = this.#counter.writes;
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
    // This replica's word stands over a listing that may be older than its write.
    const ownWord = (key: string): boolean =>
      this.#inFlight.has(key) || this.#unwritten.has(key) || (this.#lastWrite.get(key) ?? 0) > asked;
    const seen = new Set<string>();
    for (const stored of listed) {
      const key = keyOf(stored.node, stored.model);
      seen.add(key);
      if (ownWord(key) || stored.leftMs <= 0) continue;
      if (stored.kind === 'released') this.#known.delete(key);
      else this.#known.set(key, heldFrom({ ...stored, kind: stored.kind }, now));
    }
    // A hold of this replica the store no longer has (it restarted empty): written again.
    for (const [key, hold] of this.#known) {
      const left = hold.untilMs - now;
      if (seen.has(key) || ownWord(key) || hold.replica !== this.#replica || left < REWRITE_MIN_MS) continue;
      this.#write(key, { node: hold.node, model: hold.model, kind: hold.kind, replica: hold.replica, forMs: left }, now);
    }
    for (const [key, n] of [...this.#lastWrite]) if (n <= asked && !this.#inFlight.has(key)) this.#lastWrite.delete(key);
  }

  /** One write of `key`, after the ones before it (so the store sees them in order). */
  #write(key: string, record: HoldRecord, nowMs: number): void {
    this.#counter.writes += 1;
    this.#lastWrite.set(key, this.#counter.writes);
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
    const store = this.#store;
    const done = (this.#tails.get(key) ?? Promise.resolve())
      .then(() => store.putHold(record))
      .then(
        () => {
          // Writes of a key run in order: the last one done is the store's word.
          this.#unwritten.delete(key);
        },
        (error: unknown) => {
          this.#unwritten.set(key, { record, atMs: nowMs });
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
