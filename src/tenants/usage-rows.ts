// The usage that survives a restart: per tenant × model × UTC day, the requests and tokens
// counted. The ledger hands its rows to a UsageStore every interval and restores them at start
// (tokens_per_day is judged by the day's sum); the embedded store is SQLite (src/state/).

export interface UsageRow {
  readonly tenant: string;
  readonly model: string;
  /** The UTC day, "YYYY-MM-DD". */
  readonly day: string;
  readonly requests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface UsageStore {
  /** Every row of `day` (a missing or empty store: none). */
  load(day: string): readonly UsageRow[];
  /** Writes these rows (each replaces the stored row of its tenant, model and day) in one transaction. */
  save(rows: readonly UsageRow[]): void;
  close(): void;
}
