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
  /** The store's day is chosen by its own clock among these three (tenants/store-day.ts). */
  readonly days: StoreDays;
  /** Reserved whatever the limits (counted all the same). */
  readonly force: boolean;
}

/** Three candidate UTC days ("YYYY-MM-DD"), the middle one's start, and how long past its end a day's key is kept. */
export interface StoreDays {
  readonly days: readonly [string, string, string];
  readonly startMs: number;
  readonly graceMs: number;
}

/** The tenant's counters across replicas before this request, and whether it was reserved. */
export interface SharedAnswer {
  readonly admitted: boolean;
  readonly inFlight: number;
  readonly requestsUsed: number;
  readonly tokensUsed: number;
  readonly todayTokens: number;
  /** The day the store counted it in (one of the candidates), and the store's clock (epoch ms). */
  readonly day: string;
  readonly storeNowMs: number;
}

export interface SharedSettle {
  readonly tenant: string;
  readonly ticket: string;
  readonly tokensPerMinute: number | undefined;
  /** Tokens used (0: a reservation given back, e.g. the cancel of a reserve whose answer was lost). */
  readonly used: number;
  /** The candidates its reserve named (the store knows which it took, and what it reserved). */
  readonly admitted: StoreDays;
  /** The candidates around the request's end: the tokens used count on the store's day among them. */
  readonly ended: StoreDays;
}

/** What a replica used in fallback, for one tenant: added to the shared counters once per `id`. */
export interface SharedRejoin {
  readonly tenant: string;
  readonly id: string;
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: number | undefined;
  /** The last minute's requests and tokens, and how long ago they were counted (drained by that). */
  readonly requests: number;
  readonly tokens: number;
  readonly ageMs: number;
  readonly days: readonly { readonly day: string; readonly startMs: number; readonly tokens: number }[];
  readonly graceMs: number;
}

export interface TenantStore {
  /** Checks the tenant's limits across replicas and, under them (or forced), reserves: one atomic step. */
  reserve(ask: SharedReserve): Promise<SharedAnswer>;
  /** The request ended: it leaves the in-flight count and its tokens are charged as used. Once per ticket (false: settled before). */
  settle(done: SharedSettle): Promise<boolean>;
  /** Adds a fallback batch to the shared counters; false: that batch id was applied before (nothing changed). */
  rejoin(batch: SharedRejoin): Promise<boolean>;
  /** Renews the tickets still running of each tenant (a replica that dies loses them within lease_ttl). */
  renewTickets(open: ReadonlyMap<string, readonly string[]>): Promise<void>;
}
