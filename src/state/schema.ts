// The state file's schema, one version for the whole file (PRAGMA user_version). A build knows
// versions 1..SCHEMA_VERSION and brings an older file forward, one migration per version, each in
// its own transaction with the version it reaches; a newer file is refused (state-db.ts), never
// changed. A migration is only ever appended: a released one is never edited.

export interface Migration {
  /** The user_version the file has once this migration ran. */
  readonly version: number;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    // Tenants' usage per tenant × model × UTC day (src/tenants/usage-store.ts). The day leads the
    // key, so a day's rows and the days past retention are each one range of the index.
    sql: `CREATE TABLE tenant_usage (
      day TEXT NOT NULL CHECK (length(day) = 10),
      tenant TEXT NOT NULL,
      model TEXT NOT NULL,
      requests INTEGER NOT NULL CHECK (requests >= 0),
      prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
      completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
      PRIMARY KEY (day, tenant, model)
    ) WITHOUT ROWID`,
  },
  {
    version: 2,
    // The file's write count: every transaction adds one (state-db.ts), and the write mark beside
    // the file (write-mark.ts) records the count of the last one that committed, so a start can
    // tell a file older than the last write the gateway knew of.
    sql: `CREATE TABLE state_writes (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL CHECK (seq >= 0),
      written_at TEXT
    );
    INSERT INTO state_writes (id, seq, written_at) VALUES (1, 0, NULL)`,
  },
]);

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((highest, m) => Math.max(highest, m.version), 0);

/** The migrations that bring a file at `version` to SCHEMA_VERSION, in order. */
export function pendingMigrations(version: number, migrations: readonly Migration[] = MIGRATIONS): readonly Migration[] {
  return migrations.filter((m) => m.version > version).sort((a, b) => a.version - b.version);
}
