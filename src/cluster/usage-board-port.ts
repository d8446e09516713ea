// The narrow port the site's /admin/tenants reaches the store through (redis-store.ts implements
// it): each replica's part of the tenants' usage, and a limited tenant's shared counters. Plain
// data; every call settles within the store's call timeout.

/** One replica's part as the store holds it. */
export interface PublishedPart {
  readonly replica: string;
  /** How long ago it was written, by the store's clock. */
  readonly ageMs: number;
  /** The part as the replica wrote it (JSON). */
  readonly body: string;
}

/** A limited tenant's shared counters now (raw: meters as used + when, by the store's clock). */
export interface TenantPeek {
  readonly nowMs: number;
  readonly inFlight: number;
  readonly requests: { readonly used: number; readonly atMs: number } | undefined;
  readonly tokens: { readonly used: number; readonly atMs: number } | undefined;
  readonly dayTokens: number;
}

export interface UsageBoardStore {
  /** Writes this replica's part (and drops parts older than `keepMs`). */
  publishUsage(body: string, keepMs: number): Promise<void>;
  /** Every replica's part. */
  readUsage(): Promise<readonly PublishedPart[]>;
  /** A tenant's shared counters, read without changing them; `day` = the UTC day's key. */
  peekTenant(tenant: string, day: string): Promise<TenantPeek>;
}
