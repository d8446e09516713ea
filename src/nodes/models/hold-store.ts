// The port the operator's holds (operator-holds.ts) are kept through: one record per (node, model),
// written with its length and ended by the store's own clock, so every reader agrees on when it
// ends. The operator's end of a hold is a record too (`released`, as long as the hold could still
// last): a replica that read the hold before learns it ended, and tells it from a store that lost
// its keys (restarted without persistence: the replica that made a hold writes it again). Two implementations: `MemoryHoldStore` here (a single gateway: the holds of this process),
// and with [cluster] the cluster store's (cluster/redis-store.ts over hold-lua.ts: a key per hold with the
// hold's length as its TTL), through which every replica's reconciler reads the holds any replica made.
// One contract suite (test/contract/hold-store.contract.test.ts) runs against both.

export type HoldKind = 'loaded' | 'unloaded';
/** A hold, or its end by the operator (`released`). */
export type HoldState = HoldKind | 'released';

/** A hold as it is written: who made it (the replica, null for a single gateway) and what it holds. */
export interface HoldRecord {
  readonly node: string;
  readonly model: string;
  /** `loaded`: kept loaded there; `unloaded`: kept off there; `released`: the operator ended it. */
  readonly kind: HoldState;
  /** The replica whose operator action made it ([cluster] replica); null without [cluster]. */
  readonly replica: string | null;
  /** The hold's whole length (ms), as written. */
  readonly forMs: number;
}

/** A hold as it is read: what is left of it (ms, by the store's clock), always > 0. */
export interface StoredHold extends HoldRecord {
  readonly leftMs: number;
}

export interface HoldStore {
  /** Where the holds are kept: `cluster` (read by every replica) or `gateway` (this process only). */
  readonly holdsScope: 'cluster' | 'gateway';
  /** Writes the record (replacing any of the same node and model) for `hold.forMs` from now. */
  putHold(hold: HoldRecord): Promise<void>;
  /** The records in force now (holds and ends of holds), by node and model. */
  listHolds(): Promise<StoredHold[]>;
}

const keyOf = (node: string, model: string): string => `${node}\u0000${model}`;

export function byNodeAndModel(
  a: { readonly node: string; readonly model: string },
  b: { readonly node: string; readonly model: string },
): number {
  return a.node.localeCompare(b.node) || a.model.localeCompare(b.model);
}

/** A single gateway's holds: in this process, ended by its monotonic clock. */
export class MemoryHoldStore implements HoldStore {
  readonly holdsScope = 'gateway';
  readonly #monotonicMs: () => number;
  readonly #holds = new Map<string, HoldRecord & { readonly untilMs: number }>();

  constructor(monotonicMs: () => number) {
    this.#monotonicMs = monotonicMs;
  }

  async putHold(hold: HoldRecord): Promise<void> {
    this.#holds.set(keyOf(hold.node, hold.model), { ...hold, untilMs: this.#monotonicMs() + hold.forMs });
  }

  async listHolds(): Promise<StoredHold[]> {
    const now = this.#monotonicMs();
    const held: StoredHold[] = [];
    for (const [key, { untilMs, ...hold }] of this.#holds) {
      if (untilMs <= now) this.#holds.delete(key);
      else held.push({ ...hold, leftMs: untilMs - now });
    }
    return held.sort(byNodeAndModel);
  }
}
