// Pure: what a replica may use of a node's slots while it cannot reach the store, and how the
// gate's mode reads for /health, /admin/runtime and metrics.

/**
 * A replica's share of `slots` among `liveReplicas` (the last count the store gave): slots / live,
 * rounded down, at least 1 where the node has any slot. Defined for every input, never NaN: no
 * slot (≤ 0) → 0; slots not a number (or infinite) → 1; a live count that is not a number ≥ 1
 * counts as 1 (this replica alone, as at a start without the store).
 */
export function fallbackShare(slots: number, liveReplicas: number): number {
  if (slots <= 0) return 0;
  if (!Number.isFinite(slots)) return 1;
  const live = Number.isFinite(liveReplicas) && liveReplicas >= 1 ? Math.floor(liveReplicas) : 1;
  return Math.max(1, Math.floor(slots / live));
}

/** How long a waiter sleeps without an announcement before it asks the store again. */
export function fallbackPollMs(leaseTtlMs: number): number {
  return Math.max(50, Math.min(500, Math.floor(leaseTtlMs / 10)));
}

/** How often held leases are renewed (and the replica's heartbeat sent): three times per TTL. */
export function renewEveryMs(leaseTtlMs: number): number {
  return Math.max(20, Math.floor(leaseTtlMs / 3));
}

/** Each store call's bound: it must fail well before a lease it renews could expire. */
export function callTimeoutMs(leaseTtlMs: number): number {
  return Math.max(50, Math.min(1000, Math.floor(leaseTtlMs / 5)));
}

export type ClusterMode = 'shared' | 'fallback';

export interface ClusterStatus {
  readonly replica: string;
  readonly mode: ClusterMode;
  /** Live replicas as last counted by the store (this one included). */
  readonly liveReplicas: number;
  /** Leases this replica holds now, and waiters it has in the global queues. */
  readonly leases: number;
  readonly waiters: number;
  /** When the store was lost (epoch ms), in fallback. */
  readonly since: number | undefined;
  /** Why: the store's last error, in fallback. */
  readonly reason: string | undefined;
  /** Times the store was lost since start. */
  readonly losses: number;
}
