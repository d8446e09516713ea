// The batch feature's own SQLite file beside the gateway's state file, in `[server] state_dir`
// (state/state-db.ts opens it: created 0600, held exclusively, WAL, synchronous = FULL — a
// committed transaction is on disk before the commit returns). It holds the files' records, the
// jobs and each job's lines with their progress; the files' bytes lie in the files directory.
// A line is `waiting`, `sent` (committed before it is sent), then `done` or `failed` (committed
// with its answer): after a crash, a line still `sent` never had its answer kept, and is sent
// again, marked retried (batch-lines.ts).

import { openStateDb, type Migration, type StateDb, type StateLog, type StateWriteFaults } from '#src/state/index.ts';
import type { Clock } from '#src/core/clock.ts';

export const BATCH_FILE_NAME = 'batch.sqlite';

export const BATCH_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    sql: `CREATE TABLE state_writes (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL CHECK (seq >= 0),
      written_at TEXT
    );
    INSERT INTO state_writes (id, seq, written_at) VALUES (1, 0, NULL);
    CREATE TABLE files (
      id TEXT PRIMARY KEY,
      tenant TEXT NOT NULL,
      purpose TEXT NOT NULL,
      filename TEXT NOT NULL,
      bytes INTEGER NOT NULL CHECK (bytes >= 0),
      lines INTEGER NOT NULL CHECK (lines >= 0),
      created_ms INTEGER NOT NULL,
      expires_ms INTEGER NOT NULL
    );
    CREATE INDEX files_by_tenant ON files (tenant, created_ms);
    CREATE TABLE batches (
      id TEXT PRIMARY KEY,
      tenant TEXT NOT NULL,
      input_file_id TEXT NOT NULL,
      endpoint TEXT NOT NULL,
      completion_window TEXT NOT NULL,
      metadata TEXT,
      status TEXT NOT NULL,
      created_ms INTEGER NOT NULL,
      expires_ms INTEGER NOT NULL,
      in_progress_ms INTEGER,
      finalizing_ms INTEGER,
      completed_ms INTEGER,
      failed_ms INTEGER,
      expired_ms INTEGER,
      cancelling_ms INTEGER,
      cancelled_ms INTEGER,
      output_file_id TEXT,
      error_file_id TEXT,
      errors TEXT,
      total INTEGER NOT NULL DEFAULT 0,
      completed INTEGER NOT NULL DEFAULT 0,
      failed INTEGER NOT NULL DEFAULT 0,
      retried INTEGER NOT NULL DEFAULT 0,
      forget_ms INTEGER,
      ending TEXT
    );
    CREATE INDEX batches_by_tenant ON batches (tenant, created_ms);
    CREATE INDEX batches_by_status ON batches (status);
    CREATE TABLE lines (
      batch_id TEXT NOT NULL,
      line_no INTEGER NOT NULL,
      custom_id TEXT NOT NULL,
      model TEXT NOT NULL,
      body TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('waiting', 'sent', 'done', 'failed')),
      not_before_ms INTEGER NOT NULL DEFAULT 0,
      sends INTEGER NOT NULL DEFAULT 0,
      retried INTEGER NOT NULL DEFAULT 0,
      status_code INTEGER,
      request_id TEXT,
      answer TEXT,
      error TEXT,
      PRIMARY KEY (batch_id, line_no)
    ) WITHOUT ROWID;
    CREATE INDEX lines_by_state ON lines (batch_id, state, model)`,
  },
]);

export interface BatchDbOptions {
  readonly log: StateLog;
  readonly clock: Clock;
  readonly faults?: StateWriteFaults | undefined;
  /**
   * Opened by more than one connection at once: by every replica ([batch] shared_dir, docs/batch.md
   * "Replicas"), or by the request workers' threads as well as the owner's ([server] workers > 1).
   */
  readonly shared?: boolean;
  /** A request worker's connection to the file its owner thread opened (and migrated) already. */
  readonly joins?: boolean;
}

/** Opens (creating, migrating; or, `joins`, only connecting to) the batch file under `dir`; throws a StateFileError naming the problem. */
export function openBatchDb(dir: string, options: BatchDbOptions): StateDb {
  return openStateDb(dir, {
    log: options.log,
    clock: options.clock,
    migrations: BATCH_MIGRATIONS,
    fileName: BATCH_FILE_NAME,
    shared: options.shared === true,
    joins: options.joins === true,
    ...(options.faults === undefined ? {} : { faults: options.faults }),
  });
}
