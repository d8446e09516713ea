// Why the state file cannot be used. Each names the file and what to do; none is thrown after the
// file was changed, so the operator finds it as it was.

/** What is wrong with the state file (docs/tenants.md, "Budgets across restarts"). */
export type StateFileProblem =
  /** state_dir or the file cannot be created, opened or read (permissions, not a directory, I/O). */
  | 'unreadable'
  /** The file is not an SQLite database, or fails SQLite's own check. */
  | 'corrupt'
  /** The file's schema is newer than this build knows (written by a later version). */
  | 'newer_schema'
  /** Another process (a second gateway on the same state_dir) holds the file. */
  | 'in_use';

export class StateFileError extends Error {
  readonly problem: StateFileProblem;
  readonly file: string;

  constructor(problem: StateFileProblem, file: string, message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'StateFileError';
    this.problem = problem;
    this.file = file;
  }
}

/** SQLite's primary result code of an error node:sqlite threw (extended codes reduced), if it is one. */
export function sqliteCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('errcode' in error)) return undefined;
  const code = error.errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

/** SQLite's primary result codes this module tells apart (https://sqlite.org/rescode.html). */
export const SQLITE = Object.freeze({ BUSY: 5, LOCKED: 6, CORRUPT: 11, CANTOPEN: 14, NOTADB: 26 });
