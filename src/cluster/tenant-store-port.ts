// The narrow port tenant limits reach the shared store through (redis-store.ts implements it).
// Plain data only: the verdict's figures come back to the tenants' own pure decision. Every call
// settles within the store's call timeout.

/** A tenant's limits as the store checks them (undefined = no such limit). */
export interface SharedLimits {
  readonly maxConcurrent: number | undefined;
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: number | undefined;
  readonly tokensPerDay: number | undefined;
}

export interface SharedReserve {
  readonly tenant: string;
  readonly ticket: string;
  readonly limits: SharedLimits;
  readonly cost: number;
  /** The UTC day ("YYYY-MM-DD") and how long its key is kept. */
  readonly day: string;
  readonly dayTtlMs: number;
  /** Reserved whatever the limits (counted all the same). */
  readonly force: boolean;
}

/** The tenant's counters across replicas before this request, and whether it was reserved. */
export interface SharedAnswer {
  readonly admitted: boolean;
  readonly inFlight: number;
  readonly requestsUsed: number;
  readonly tokensUsed: number;
  readonly todayTokens: number;
}

export interface SharedSettle {
  readonly tenant: string;
  readonly ticket: string;
  readonly tokensPerMinute: number | undefined;
  readonly reserved: number;
  readonly used: number;
  readonly admittedDay: string;
  readonly today: string;
  readonly todayTtlMs: number;
}

export interface TenantStore {
  /** Checks the tenant's limits across replicas and, under them (or forced), reserves: one atomic step. */
  reserve(ask: SharedReserve): Promise<SharedAnswer>;
  /** The request ended: it leaves the in-flight count and its tokens are charged as used. */
  settle(done: SharedSettle): Promise<void>;
  /** Renews the tickets still running of each tenant (a replica that dies loses them within lease_ttl). */
  renewTickets(open: ReadonlyMap<string, readonly string[]>): Promise<void>;
}
