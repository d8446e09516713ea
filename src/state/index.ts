// The gateway's state that survives a restart: one SQLite file under [server] state_dir (docs/tenants.md).

export {
  openStateDb,
  OPEN_BUSY_TIMEOUT_MS,
  STATE_FILE_NAME,
  type StateDb,
  type StateDbOptions,
  type StateLog,
  type StateWriteFaults,
} from './state-db.ts';
export { describeWriteError, STALE_ADVICE, type StateWriteHealth } from './state-writes.ts';
export {
  MARK_BYTES,
  MARK_SUFFIX,
  decodeMark,
  encodeMark,
  judgeStaleness,
  type StaleState,
  type WriteMark,
} from './write-mark.ts';
export { MIGRATIONS, SCHEMA_VERSION, type Migration } from './schema.ts';
export { SQLITE, sqliteCode, StateFileError, type StateFileProblem } from './state-file-error.ts';
