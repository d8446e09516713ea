// How the state file's writes are going, for /health, /metrics, the shutdown and the next start:
// the last write that committed (the file's own count, schema.ts `state_writes`), whether writes
// fail now (since when, why, how often), and what the start found (write-mark.ts: a file older
// than the last write the gateway knew of). Every commit and every failure is mirrored into the
// write mark, so a run that ends with writes failing leaves the next start a mark saying so.

import type { Clock } from '#src/core/clock.ts';
import { judgeStaleness, MARK_SUFFIX, WriteMarkFile, type StaleState, type WriteMark } from './write-mark.ts';
import { sqliteCode } from './state-file-error.ts';

export type StateLog = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;

/** The state file's writes as /health and /metrics show them. */
export interface StateWriteHealth {
  readonly file: string;
  /** `failing` from a failed write until one commits again. */
  readonly status: 'ok' | 'failing';
  /** The file's write count at the last write that committed. */
  readonly lastWriteSeq: number;
  readonly lastWriteAt: string | null;
  /** Since when writes fail (ISO time), null while they work. */
  readonly failingSince: string | null;
  /** Why the last write failed, null while they work. */
  readonly reason: string | null;
  /** Writes failed in a row. */
  readonly failures: number;
  /** What the start found: the file lacks writes a previous run made or tried (null = nothing). */
  readonly stale: { readonly reason: string; readonly fileSeq: number; readonly markSeq: number } | null;
  /** The write mark cannot be written (the next start cannot judge this run), null when it can. */
  readonly markProblem: string | null;
}

/** What operators should do about a stale file (logged with the warning; docs/tenants.md). */
export const STALE_ADVICE =
  'usage counted then is not in the file, so tenants were handed back that part of their tokens_per_day: restore the newer file if there is one, else lower the affected tenants\u2019 budgets for today (docs/tenants.md, "When usage cannot be saved")';

/** Pure: a write error as the log and /health say it: SQLite's code name or the errno, and the message. */
export function describeWriteError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = sqliteCode(error);
  if (code !== undefined) return `${SQLITE_NAMES[code] ?? `SQLite error ${code}`}: ${message}`;
  if (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    !message.includes(error.code)
  )
    return `${error.code}: ${message}`;
  return message;
}

const SQLITE_NAMES: Readonly<Record<number, string>> = Object.freeze({
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL (disk full)',
  14: 'SQLITE_CANTOPEN',
});

export class StateWrites {
  readonly #file: string;
  readonly #clock: Clock;
  readonly #log: StateLog;
  readonly #mark: WriteMarkFile | undefined;
  readonly #stale: StaleState | undefined;
  #seq: number;
  #savedAt: string | null;
  #failingSince: string | null = null;
  #reason: string | null = null;
  #failures = 0;
  #markProblem: string | null = null;

  /**
   * Reads the mark beside `file`, flags a file older than it (a warning naming the file, both
   * writes and what to do), and marks the file as it is now. A mark that cannot be opened or
   * written is a warning: the gateway runs, the next start cannot judge.
   */
  constructor(
    file: string,
    written: { readonly seq: number; readonly at: string | null },
    deps: { readonly clock: Clock; readonly log: StateLog },
  ) {
    this.#file = file;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#seq = written.seq;
    this.#savedAt = written.at;
    const path = file + MARK_SUFFIX;
    let opened: ReturnType<typeof WriteMarkFile.open> | undefined;
    try {
      opened = WriteMarkFile.open(path);
    } catch (error) {
      this.#markProblem = `cannot open the write mark ${path}: ${describeWriteError(error)}`;
      deps.log(
        'warn',
        { file, mark: path, reason: this.#markProblem },
        'the state file\u2019s write mark is unusable: the next start cannot tell whether writes were lost',
      );
    }
    this.#mark = opened?.file;
    const found = opened?.found;
    if (found !== undefined && 'problem' in found)
      deps.log(
        'warn',
        { file, mark: path, problem: found.problem },
        'the state file\u2019s write mark is unreadable; it is written anew',
      );
    this.#stale = found === undefined || 'problem' in found ? undefined : judgeStaleness(found, written.seq);
    if (this.#stale !== undefined) {
      deps.log(
        'warn',
        {
          file,
          mark: path,
          file_write: written.seq,
          mark_write: this.#stale.mark.seq,
          unsaved_since: this.#stale.mark.unsavedSince,
          reason: this.#stale.reason,
          advice: STALE_ADVICE,
        },
        `the state file is stale: ${this.#stale.reason}`,
      );
    }
    this.#writeMark();
  }

  /** The file's write count now (the last committed write). */
  get seq(): number {
    return this.#seq;
  }

  /** A write committed as write `seq` at `at`. */
  committed(seq: number, at: string): void {
    const failing = this.#failingSince;
    this.#seq = seq;
    this.#savedAt = at;
    this.#failingSince = null;
    this.#reason = null;
    this.#failures = 0;
    if (failing !== null) this.#log('info', { file: this.#file, failing_since: failing }, 'the state file is written again');
    this.#writeMark();
  }

  /** A write failed (rolled back): the file lacks it from now until a write commits. */
  failed(error: unknown): void {
    const first = this.#failingSince === null;
    this.#failingSince ??= new Date(this.#clock.now()).toISOString();
    this.#reason = describeWriteError(error);
    this.#failures += 1;
    // Once when writes start failing (and whenever the reason changes): the mark says so.
    if (first || this.#markProblem !== null) this.#writeMark();
  }

  health(): StateWriteHealth {
    const stale = this.#stale;
    return {
      file: this.#file,
      status: this.#failingSince === null ? 'ok' : 'failing',
      lastWriteSeq: this.#seq,
      lastWriteAt: this.#savedAt,
      failingSince: this.#failingSince,
      reason: this.#reason,
      failures: this.#failures,
      stale: stale === undefined ? null : { reason: stale.reason, fileSeq: stale.fileSeq, markSeq: stale.mark.seq },
      markProblem: this.#markProblem,
    };
  }

  close(): void {
    this.#mark?.close();
  }

  #writeMark(): void {
    if (this.#mark === undefined) return;
    const mark: WriteMark = { seq: this.#seq, savedAt: this.#savedAt, unsavedSince: this.#failingSince, reason: this.#reason };
    try {
      this.#mark.write(mark);
      this.#markProblem = null;
    } catch (error) {
      const first = this.#markProblem === null;
      this.#markProblem = `cannot write the write mark ${this.#mark.path}: ${describeWriteError(error)}`;
      if (first)
        this.#log(
          'warn',
          { file: this.#file, reason: this.#markProblem },
          'the state file\u2019s write mark cannot be written: the next start cannot tell whether writes were lost',
        );
    }
  }
}
