// The state file's write mark: a small file beside it (<file>.mark) saying which of the file's
// writes was the last one that committed (the file counts its writes, schema.ts `state_writes`)
// and, while writes fail, since when and why the file lacks what the gateway tried to store.
// On start the mark is compared with the file: a file older than the mark, or a mark left saying
// "unsaved", is flagged (a warning, and /health) — the file then holds less usage than was
// counted (docs/tenants.md, "When usage cannot be saved").
//
// What survives a full disk: the mark has a fixed size, allocated when the state file is opened
// (while there is room), held open, and rewritten in place — on a full disk the rewrite needs no
// new block, where a new file or a growing one would fail with ENOSPC. Its content is one JSON
// line padded with spaces to MARK_BYTES.

import { closeSync, fdatasyncSync, openSync, readFileSync, writeSync } from 'node:fs';

/** The mark's fixed size in bytes. */
export const MARK_BYTES = 512;

/** The mark's suffix after the state file's name. */
export const MARK_SUFFIX = '.mark';

export interface WriteMark {
  /** The file's write count (its `state_writes.seq`) at the last write that committed. */
  readonly seq: number;
  /** When that write committed (ISO time); null before the first. */
  readonly savedAt: string | null;
  /** Set while writes fail: since when the file lacks what the gateway tried to store (ISO time). */
  readonly unsavedSince: string | null;
  /** Why the last write failed (while unsavedSince is set). */
  readonly reason: string | null;
}

/** Pure: the mark as its fixed-size bytes (a reason too long to fit is cut). */
export function encodeMark(mark: WriteMark): Buffer {
  const lineOf = (reason: string | null): string =>
    JSON.stringify({ v: 1, seq: mark.seq, saved_at: mark.savedAt, unsaved_since: mark.unsavedSince, reason });
  let line = lineOf(mark.reason);
  for (let keep = Math.min(mark.reason?.length ?? 0, 300); Buffer.byteLength(line) > MARK_BYTES - 1; keep -= 20) {
    line = lineOf(keep <= 0 ? null : `${(mark.reason ?? '').slice(0, keep)}…`);
  }
  const bytes = Buffer.alloc(MARK_BYTES, 0x20);
  bytes.write(line, 0, 'utf8');
  bytes[MARK_BYTES - 1] = 0x0a;
  return bytes;
}

/** Pure: the mark from the file's text, or why it cannot be read. */
export function decodeMark(text: string): WriteMark | { readonly problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch {
    return { problem: 'not a JSON line' };
  }
  if (typeof value !== 'object' || value === null) return { problem: 'not a JSON object' };
  const v = value as Record<string, unknown>;
  const stringOrNull = (x: unknown): x is string | null => x === null || typeof x === 'string';
  if (
    v.v !== 1 ||
    !Number.isSafeInteger(v.seq) ||
    (v.seq as number) < 0 ||
    !stringOrNull(v.saved_at) ||
    !stringOrNull(v.unsaved_since) ||
    !stringOrNull(v.reason)
  ) {
    return { problem: 'not a version 1 write mark' };
  }
  return { seq: v.seq as number, savedAt: v.saved_at, unsavedSince: v.unsaved_since, reason: v.reason };
}

/** What the start found: the state file lacks writes the last run made or tried. */
export interface StaleState {
  /** Why the file is taken as stale, for the log and /health. */
  readonly reason: string;
  /** The mark as found. */
  readonly mark: WriteMark;
  /** The file's own write count. */
  readonly fileSeq: number;
}

/** Pure: whether the file (at write `fileSeq`) is older than the mark says was written, or was left unsaved. */
export function judgeStaleness(mark: WriteMark, fileSeq: number): StaleState | undefined {
  if (mark.seq > fileSeq) {
    return {
      mark,
      fileSeq,
      reason: `the state file holds write ${fileSeq}, older than write ${mark.seq} the gateway committed${mark.savedAt === null ? '' : ` at ${mark.savedAt}`} (the file was replaced or restored from an older copy)`,
    };
  }
  if (mark.unsavedSince !== null) {
    return {
      mark,
      fileSeq,
      reason: `the last run could not save usage counted since ${mark.unsavedSince}${mark.reason === null ? '' : ` (${mark.reason})`}: the file lacks it`,
    };
  }
  return undefined;
}

/** The mark file, held open and rewritten in place. */
export class WriteMarkFile {
  readonly path: string;
  readonly #fd: number;
  #closed = false;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
  }

  /**
   * Reads the mark at `path` (undefined when there is none; a problem when it cannot be read),
   * then opens it (created 0600 when missing) for rewriting: the first write() allocates it.
   */
  static open(path: string): { file: WriteMarkFile; found: WriteMark | { readonly problem: string } | undefined } {
    const found = readMark(path);
    closeSync(openSync(path, 'a', 0o600));
    return { file: new WriteMarkFile(path, openSync(path, 'r+')), found };
  }

  /** Rewrites the mark in place and syncs it; throws when that fails. */
  write(mark: WriteMark): void {
    if (this.#closed) return;
    const bytes = encodeMark(mark);
    writeSync(this.#fd, bytes, 0, bytes.length, 0);
    fdatasyncSync(this.#fd);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.#fd);
  }
}

function readMark(path: string): WriteMark | { readonly problem: string } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  if (text.trim() === '') return undefined;
  return decodeMark(text);
}
