// The gateway's one SQLite database (node:sqlite), a file under [server] state_dir: the directory
// is created 0700 and the file 0600; the file is held exclusively while open (a second gateway on
// the same state_dir is refused, not allowed to overwrite the first one's counts); WAL journal with
// synchronous = FULL, so each committed transaction is on disk before the commit returns: a crash,
// a kill -9 or a power cut loses at most the writes since the last commit — for the usage flusher,
// one interval. The schema is versioned (schema.ts) and migrated forward at open. Every
// transaction counts itself in the file (`state_writes`) and is watched by StateWrites
// (state-writes.ts): whether writes fail now and why, and the write mark the next start compares.
//
// A file this build cannot use is never changed and never moved aside: opening it throws a
// StateFileError naming the file, the problem and the way out, and the gateway does not start.
// Starting empty instead would hand every tenant a fresh day's budget; an operator who accepts that
// moves the file away and starts again (docs/tenants.md, "Budgets across restarts").

import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { systemClock, type Clock } from '#src/core/clock.ts';
import { MIGRATIONS, pendingMigrations, type Migration } from './schema.ts';
import { SQLITE, sqliteCode, StateFileError } from './state-file-error.ts';
import { StateWrites, type StateLog, type StateWriteHealth } from './state-writes.ts';

export type { StateLog } from './state-writes.ts';

/** The file's name under state_dir. */
export const STATE_FILE_NAME = 'switchyard.sqlite';

/**
 * How long opening the file waits for a lock another process holds (a brief `sqlite3` reader)
 * before it says the file is in use. Writes never wait: the file is held exclusively once open.
 */
export const OPEN_BUSY_TIMEOUT_MS = 2_000;

export interface StateDbOptions {
  readonly log: StateLog;
  /** The schema's migrations (tests give a later one); absent = this build's (schema.ts). */
  readonly migrations?: readonly Migration[];
  readonly fileName?: string;
  /** What times the file's writes; absent = the system clock. */
  readonly clock?: Clock;
  /** Tests: make writes fail as a full disk would (the seam the disk-full tests use where no tmpfs can be mounted). */
  readonly faults?: StateWriteFaults;
  /**
   * Opened by several processes at once (replicas on one host sharing a directory): not held
   * exclusively, so a second opener is not refused; each write waits for the others' (up to
   * OPEN_BUSY_TIMEOUT_MS). What keeps them from doing the same work is the caller's (a lease).
   */
  readonly shared?: boolean;
  /**
   * Another connection of this process opened this file (shared), checked and migrated it: this
   * one only joins it (a request worker's thread: node:sqlite's connections are per thread) — no
   * exclusive check, no migration, which would hold every other connection's writes. It must find
   * this build's schema version, else it throws (the owner has not opened the file yet).
   */
  readonly joins?: boolean;
}

/** A seam in every write: `beforeCommit` runs inside the transaction, and a throw rolls it back as a failed commit would. */
export interface StateWriteFaults {
  beforeCommit(): void;
}

/** An open state file: statements over it, transactions, and closing it. */
export interface StateDb {
  /** The file's path. */
  readonly file: string;
  /** The schema version the file has now (this build's newest, after migration). */
  readonly version: number;
  prepare(sql: string): StatementSync;
  /** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(work: () => T): T;
  /** How the file's writes are going (the last commit, a failure now, what the start found). */
  writes(): StateWriteHealth;
  close(): void;
}

export function openStateDb(stateDir: string, options: StateDbOptions): StateDb {
  const file = join(stateDir, options.fileName ?? STATE_FILE_NAME);
  prepareFile(stateDir, file, options.log);
  const migrations = options.migrations ?? MIGRATIONS;
  const known = migrations.reduce((highest, m) => Math.max(highest, m.version), 0);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { timeout: OPEN_BUSY_TIMEOUT_MS });
  } catch (error) {
    throw openFailure(file, error);
  }
  try {
    if (options.joins === true) {
      joinOpened(db, file, known);
      return stateDbOver(db, file, known, options);
    }
    const version = check(db, file, known, options.shared === true);
    const journal = db.prepare('PRAGMA journal_mode = WAL').get()?.journal_mode;
    if (journal !== 'wal')
      options.log(
        'warn',
        { file, journal_mode: journal },
        'the state file could not use the WAL journal; writes are still one transaction each',
      );
    db.exec('PRAGMA synchronous = FULL');
    for (const migration of pendingMigrations(version, migrations)) {
      inTransaction(db, () => {
        // A file shared with other processes may have been migrated by one of them since it was read.
        if (Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0) >= migration.version) return;
        db.exec(migration.sql);
        db.exec(`PRAGMA user_version = ${migration.version}`);
      });
      options.log('info', { file, from: version, to: migration.version }, 'state file migrated');
    }
  } catch (error) {
    db.close();
    throw error instanceof StateFileError ? error : openFailure(file, error);
  }
  return stateDbOver(db, file, known, options);
}

/** The open file's statements and transactions (each counted in `state_writes` and watched). */
function stateDbOver(db: DatabaseSync, file: string, known: number, options: StateDbOptions): StateDb {
  const clock = options.clock ?? systemClock;
  const last = db.prepare('SELECT seq, written_at FROM state_writes WHERE id = 1').get();
  const writes = new StateWrites(
    file,
    { seq: Number(last?.seq ?? 0), at: typeof last?.written_at === 'string' ? last.written_at : null },
    { clock, log: options.log },
  );
  const count = db.prepare('UPDATE state_writes SET seq = seq + 1, written_at = ? WHERE id = 1 RETURNING seq');
  return {
    file,
    version: known,
    prepare: (sql) => db.prepare(sql),
    transaction: (work) => {
      const at = new Date(clock.now()).toISOString();
      let seq = writes.seq + 1;
      let result;
      try {
        result = inTransaction(db, () => {
          const done = work();
          seq = Number(count.get(at)?.seq ?? seq);
          options.faults?.beforeCommit();
          return done;
        });
      } catch (error) {
        writes.failed(error);
        throw error;
      }
      writes.committed(seq, at);
      return result;
    },
    writes: () => writes.health(),
    close: () => {
      writes.close();
      if (db.isOpen) db.close();
    },
  };
}

/** Creates state_dir (0700) and the file (0600) when missing; says so when either is unusable. */
function prepareFile(stateDir: string, file: string, log: StateLog): void {
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    if (!statSync(stateDir).isDirectory()) throw new Error('not a directory');
    // 'a' creates the file with 0600 (less the umask) and leaves an existing one as it is.
    closeSync(openSync(file, 'a', 0o600));
    const stat = statSync(file);
    if (!stat.isFile()) throw new Error('not a regular file');
    if ((stat.mode & 0o077) !== 0)
      log(
        'warn',
        { file, mode: `0${(stat.mode & 0o777).toString(8)}` },
        'the state file is readable by other users; it holds tenant names and usage (chmod 600)',
      );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StateFileError(
      'unreadable',
      file,
      `cannot use the state file ${file} ([server] state_dir = ${stateDir}): ${reason}`,
      error,
    );
  }
}

/** A joining connection: the owner's schema (this build's), the same durability (synchronous is per connection). */
function joinOpened(db: DatabaseSync, file: string, known: number): void {
  const version = Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
  if (version !== known)
    throw new StateFileError(
      version > known ? 'newer_schema' : 'unreadable',
      file,
      `the state file ${file} has schema version ${version}, not this build's ${known}: the connection that opens it first has not (yet) migrated it`,
    );
  db.exec('PRAGMA synchronous = FULL');
}

/**
 * Takes the file exclusively, reads its schema version and runs SQLite's quick check, before
 * anything is written: a newer or a damaged file is refused as it is.
 */
function check(db: DatabaseSync, file: string, known: number, shared: boolean): number {
  // Held from the first read until close: no shared-memory index, and no second writer (unless shared).
  if (!shared) db.exec('PRAGMA locking_mode = EXCLUSIVE');
  db.exec('BEGIN EXCLUSIVE');
  try {
    const version = Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
    if (version > known) {
      throw new StateFileError(
        'newer_schema',
        file,
        `the state file ${file} has schema version ${version}, newer than this build knows (${known}): it was written by a later Switchyard. Run that version, or move the file away to start with no stored usage (it is left unchanged)`,
      );
    }
    const problems = db
      .prepare('PRAGMA quick_check')
      .all()
      .map((row) => String(row.quick_check));
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new StateFileError(
        'corrupt',
        file,
        `the state file ${file} is damaged (SQLite quick_check: ${problems.slice(0, 3).join('; ')}); ${CORRUPT_ADVICE}`,
      );
    }
    db.exec('COMMIT');
    return version;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

const CORRUPT_ADVICE =
  'the gateway does not start on it, and leaves it unchanged: restore it from a backup, or move it away (e.g. to <name>.corrupt) to start with no stored usage';

function openFailure(file: string, error: unknown): StateFileError {
  const code = sqliteCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code === SQLITE.BUSY || code === SQLITE.LOCKED) {
    return new StateFileError(
      'in_use',
      file,
      `the state file ${file} is in use by another process (another gateway with the same [server] state_dir?): ${detail}`,
      error,
    );
  }
  if (code === SQLITE.NOTADB || code === SQLITE.CORRUPT) {
    return new StateFileError(
      'corrupt',
      file,
      `the state file ${file} is not a usable SQLite database (${detail}); ${CORRUPT_ADVICE}`,
      error,
    );
  }
  return new StateFileError('unreadable', file, `cannot open the state file ${file}: ${detail}`, error);
}

function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
