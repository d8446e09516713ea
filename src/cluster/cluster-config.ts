// `[cluster]`: replicas of one site sharing slot leases through a Redis/Valkey store (docs/deploy.md).
// The loaded form (cluster/cluster-table.ts produces it), and how it joins GatewayConfig
// (declaration merging: config/config-table.ts).

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** Replicas sharing slot leases through a store (`[cluster]`); undefined = this gateway alone. */
    readonly cluster?: ClusterConfig | undefined;
  }
}

export interface ClusterConfig {
  /** `redis://HOST:PORT/DB` or `rediss://…` (TLS); credentials never in the URL. */
  readonly store: string;
  /** `password = "env:NAME"` (or a literal); undefined = none. */
  readonly password: string | undefined;
  /** This replica's name in the store; undefined = host name + pid (chosen at start). */
  readonly replica: string | undefined;
  /** A lease not renewed for this long is gone (a dead replica's slots come back within it). */
  readonly leaseTtlMs: number;
  /** The store's key prefix: replicas sharing it share slots (default `switchyard:`). */
  readonly prefix: string;
}
