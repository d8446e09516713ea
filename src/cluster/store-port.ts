// The narrow port the cluster gate reaches the shared store through (redis-store.ts is its Redis
// implementation; tests may fake it). Every call settles within the store's call timeout: a
// slow or unreachable store is an error, never a hang.

/** One (node, model): the unit slots are counted in across replicas. */
export interface Pair {
  readonly node: string;
  readonly model: string;
}

export interface AcquireAnswer {
  readonly granted: boolean;
  /** Leases out on the pair across replicas (after the grant, when granted). */
  readonly used: number;
  /** Waiters ahead of this one in the pair's global queue (0 when granted). */
  readonly ahead: number;
  /** Refused: another replica's switch on the (limited router) node means this request would make it load its model. */
  readonly switching?: true;
}

export interface PairHeld {
  readonly pair: Pair;
  readonly leases: readonly string[];
  readonly waiters: readonly string[];
}

export interface ClusterStore {
  /**
   * A lease on `pair` under `limit`, or a place in its global queue (kept by `waiterId`); on a
   * limited router (`modelsMax` > 0) refused while another replica's switch there says the request
   * would make the router load its model (switch-lua.ts).
   */
  acquire(pair: Pair, leaseId: string, waiterId: string, limit: number, modelsMax?: number): Promise<AcquireAnswer>;
  /** Returns a lease and announces the free slot to every replica. */
  release(pair: Pair, leaseId: string): Promise<void>;
  /** A waiter gives up its place in the queue. */
  leave(pair: Pair, waiterId: string): Promise<void>;
  /** Renews (re-registers) every lease and waiter this replica holds, and says how many replicas are alive. */
  renew(held: readonly PairHeld[]): Promise<number>;
  /** Takes `key` for `windowMs` if no replica holds it (one wake per node per wake window); false = taken. */
  claimOnce(key: string, windowMs: number): Promise<boolean>;
  /** Called with the pair whose slot was freed (pub/sub); messages may be lost. */
  onFreed(listener: (pair: Pair) => void): void;
  close(): Promise<void>;
}
