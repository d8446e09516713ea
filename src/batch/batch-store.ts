// The batch feature's records over its SQLite file (batch-db.ts): files, jobs and their lines.
// Every change is one transaction; reads are plain selects. A tenant's reads take its name, so a
// tenant never reads another's rows.

import type { StatementSync } from 'node:sqlite';
import type { StateDb } from '#src/state/index.ts';
import type { BatchProblem, Ending, BatchRow, BatchStatus, FileRow, LineResult, LineRow, LineState } from './batch-rows.ts';
import { CANCELLED_CODE, EXPIRED_CODE, MESSAGE_BATCH_PREFIX } from './batch-rows.ts';

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v ?? 0);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function fileOf(r: Row): FileRow {
  return {
    id: String(r.id),
    tenant: String(r.tenant),
    purpose: String(r.purpose),
    filename: String(r.filename),
    bytes: num(r.bytes),
    lines: num(r.lines),
    createdMs: num(r.created_ms),
    expiresMs: num(r.expires_ms),
  };
}

function batchOf(r: Row): BatchRow {
  return {
    id: String(r.id),
    tenant: String(r.tenant),
    inputFileId: String(r.input_file_id),
    endpoint: String(r.endpoint),
    completionWindow: String(r.completion_window),
    metadata: r.metadata === null ? null : (JSON.parse(String(r.metadata)) as Record<string, string>),
    status: String(r.status) as BatchStatus,
    createdMs: num(r.created_ms),
    expiresMs: num(r.expires_ms),
    inProgressMs: numOrNull(r.in_progress_ms),
    finalizingMs: numOrNull(r.finalizing_ms),
    completedMs: numOrNull(r.completed_ms),
    failedMs: numOrNull(r.failed_ms),
    expiredMs: numOrNull(r.expired_ms),
    cancellingMs: numOrNull(r.cancelling_ms),
    cancelledMs: numOrNull(r.cancelled_ms),
    outputFileId: strOrNull(r.output_file_id),
    errorFileId: strOrNull(r.error_file_id),
    errors: r.errors === null ? null : (JSON.parse(String(r.errors)) as BatchProblem[]),
    total: num(r.total),
    completed: num(r.completed),
    failed: num(r.failed),
    retried: num(r.retried),
    ending: r.ending === null || r.ending === undefined ? null : (String(r.ending) as Ending),
  };
}

function lineOf(r: Row): LineRow {
  return {
    batchId: String(r.batch_id),
    lineNo: num(r.line_no),
    customId: String(r.custom_id),
    model: String(r.model),
    body: String(r.body),
    state: String(r.state) as LineState,
    retried: num(r.retried) > 0,
    statusCode: numOrNull(r.status_code),
    requestId: strOrNull(r.request_id),
    answer: strOrNull(r.answer),
    error: strOrNull(r.error),
  };
}

/** What is kept of one sent line: its result, or that it waits to go again. */
export type KeptLine = { readonly batchId: string; readonly lineNo: number } & (
  | { readonly kind: 'settle'; readonly result: LineResult; readonly ok: boolean }
  | { readonly kind: 'again'; readonly notBeforeMs: number; readonly retried: boolean }
);

/** A line as a new job takes it from its input file. */
export interface NewLine {
  readonly lineNo: number;
  readonly customId: string;
  readonly model: string;
  readonly body: string;
}

/** The timestamps a status change sets (by the status it reaches). */
const STAMP: Readonly<Record<BatchStatus, string | undefined>> = Object.freeze({
  validating: undefined,
  in_progress: 'in_progress_ms',
  finalizing: 'finalizing_ms',
  completed: 'completed_ms',
  failed: 'failed_ms',
  expired: 'expired_ms',
  cancelling: 'cancelling_ms',
  cancelled: 'cancelled_ms',
});

/** A page of a tenant's rows, newest first, after the row `after` (its id) — or, given `before`, the rows just before it. */
export interface Page {
  readonly limit: number;
  readonly after: string | undefined;
  readonly before?: string | undefined;
}

/** Which API's jobs a listing shows: OpenAI's Batch API's (`batches`), or Anthropic's Message Batches (by their id's prefix). */
export type BatchListing = 'batches' | 'message_batches';

/** A settled line's outcome as the store groups it (batch-rows.ts `lineOutcome` names it). */
export interface OutcomeGroup {
  readonly state: LineState;
  readonly statusCode: number | null;
  readonly errorCode: string | null;
  readonly lines: number;
}

export class BatchStore {
  readonly #db: StateDb;
  readonly #s: Readonly<Record<string, StatementSync>>;

  constructor(db: StateDb) {
    this.#db = db;
    const p = (sql: string): StatementSync => db.prepare(sql);
    this.#s = {
      insertFile: p(
        'INSERT INTO files (id, tenant, purpose, filename, bytes, lines, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      file: p('SELECT * FROM files WHERE id = ?'),
      tenantBytes: p('SELECT coalesce(sum(bytes), 0) AS bytes FROM files WHERE tenant = ?'),
      deleteFile: p('DELETE FROM files WHERE id = ?'),
      expiredFiles: p('SELECT * FROM files WHERE expires_ms <= ?'),
      insertBatch: p(
        'INSERT INTO batches (id, tenant, input_file_id, endpoint, completion_window, metadata, status, created_ms, expires_ms, in_progress_ms, failed_ms, errors, total, forget_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      insertLine: p('INSERT INTO lines (batch_id, line_no, custom_id, model, body, state) VALUES (?, ?, ?, ?, ?, ?)'),
      batch: p('SELECT * FROM batches WHERE id = ?'),
      running: p(
        "SELECT * FROM batches WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling') ORDER BY created_ms, id",
      ),
      forgotten: p('SELECT id FROM batches WHERE forget_ms IS NOT NULL AND forget_ms <= ?'),
      forgetBatch: p('DELETE FROM batches WHERE id = ?'),
      forgetLines: p('DELETE FROM lines WHERE batch_id = ?'),
      // One index seek per model (lines_by_state: batch_id, state, model), not a visit of every waiting line.
      waitingModels: p(
        "WITH RECURSIVE m(model) AS (SELECT (SELECT min(model) FROM lines WHERE batch_id = ? AND state = 'waiting') UNION ALL SELECT (SELECT min(model) FROM lines WHERE batch_id = ? AND state = 'waiting' AND model > m.model) FROM m WHERE m.model IS NOT NULL) SELECT model FROM m WHERE model IS NOT NULL",
      ),
      anyInState: p('SELECT EXISTS (SELECT 1 FROM lines WHERE batch_id = ? AND state = ?) AS any'),
      nextWaiting: p(
        "SELECT * FROM lines WHERE batch_id = ? AND state = 'waiting' AND model = ? AND not_before_ms <= ? ORDER BY line_no LIMIT ?",
      ),
      markSent: p("UPDATE lines SET state = 'sent', sends = sends + 1 WHERE batch_id = ? AND line_no = ? AND state = 'waiting'"),
      answered: p(
        "UPDATE lines SET state = ?, status_code = ?, request_id = ?, answer = ?, error = ? WHERE batch_id = ? AND line_no = ? AND state = 'sent'",
      ),
      requeue: p(
        "UPDATE lines SET state = 'waiting', not_before_ms = ?, retried = max(retried, ?) WHERE batch_id = ? AND line_no = ? AND state = 'sent'",
      ),
      unsent: p("UPDATE lines SET state = 'waiting', retried = 1 WHERE batch_id = ? AND state = 'sent' RETURNING line_no"),
      counts: p('SELECT state, count(*) AS n FROM lines WHERE batch_id = ? GROUP BY state'),
      settleWaiting: p("UPDATE lines SET state = 'failed', error = ? WHERE batch_id = ? AND state = 'waiting' RETURNING line_no"),
      linesOf: p('SELECT * FROM lines WHERE batch_id = ? AND line_no > ? ORDER BY line_no LIMIT ?'),
      outcomes: p(
        "SELECT state, CASE WHEN status_code BETWEEN 200 AND 299 THEN 200 ELSE status_code END AS status_code, json_extract(error, '$.code') AS code, count(*) AS n FROM lines WHERE batch_id = ? GROUP BY 1, 2, 3",
      ),
      validated: p(
        "UPDATE batches SET status = 'in_progress', in_progress_ms = ?, total = ? WHERE id = ? AND status = 'validating'",
      ),
    };
  }

  // Files.

  addFile(row: FileRow): void {
    this.#db.transaction(() =>
      this.#s.insertFile!.run(row.id, row.tenant, row.purpose, row.filename, row.bytes, row.lines, row.createdMs, row.expiresMs),
    );
  }

  /** The file `id` if `tenant` owns it (undefined for another tenant's: it does not exist for them). */
  file(id: string, tenant: string): FileRow | undefined {
    const r = this.#s.file!.get(id) as Row | undefined;
    const row = r === undefined ? undefined : fileOf(r);
    return row?.tenant === tenant ? row : undefined;
  }

  /** A job's output file, written again when a crash came between writing it and ending the job. */
  replaceFile(row: FileRow): void {
    this.#db.transaction(() => {
      this.#s.deleteFile!.run(row.id);
      this.#s.insertFile!.run(row.id, row.tenant, row.purpose, row.filename, row.bytes, row.lines, row.createdMs, row.expiresMs);
    });
  }

  tenantBytes(tenant: string): number {
    return num((this.#s.tenantBytes!.get(tenant) as Row | undefined)?.bytes);
  }

  /** A tenant's files, newest first (or oldest first), by purpose when given. */
  files(tenant: string, page: Page, purpose: string | undefined, ascending: boolean): { rows: FileRow[]; more: boolean } {
    const where = purpose === undefined ? '' : ' AND purpose = ?';
    const order = ascending ? 'ASC' : 'DESC';
    const after = page.after === undefined ? undefined : this.file(page.after, tenant);
    const cursor = after === undefined ? '' : ` AND (created_ms, id) ${ascending ? '>' : '<'} (?, ?)`;
    const sql = `SELECT * FROM files WHERE tenant = ?${where}${cursor} ORDER BY created_ms ${order}, id ${order} LIMIT ?`;
    const args: (string | number)[] = [tenant];
    if (purpose !== undefined) args.push(purpose);
    if (after !== undefined) args.push(after.createdMs, after.id);
    args.push(page.limit + 1);
    const rows = (this.#db.prepare(sql).all(...args) as Row[]).map(fileOf);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  deleteFile(id: string): void {
    this.#db.transaction(() => this.#s.deleteFile!.run(id));
  }

  expiredFiles(nowMs: number): FileRow[] {
    return (this.#s.expiredFiles!.all(nowMs) as Row[]).map(fileOf);
  }

  // Jobs.

  /** A new job and its lines, in one transaction; `forgetMs`: when a job that failed at once is deleted. */
  addBatch(row: BatchRow, lines: readonly NewLine[], forgetMs: number): void {
    this.#db.transaction(() => {
      this.#s.insertBatch!.run(
        row.id,
        row.tenant,
        row.inputFileId,
        row.endpoint,
        row.completionWindow,
        row.metadata === null ? null : JSON.stringify(row.metadata),
        row.status,
        row.createdMs,
        row.expiresMs,
        row.inProgressMs,
        row.failedMs,
        row.errors === null ? null : JSON.stringify(row.errors),
        lines.length,
        row.status === 'failed' ? forgetMs : null,
      );
      for (const line of lines) this.#s.insertLine!.run(row.id, line.lineNo, line.customId, line.model, line.body, 'waiting');
    });
  }

  batch(id: string, tenant?: string): BatchRow | undefined {
    const r = this.#s.batch!.get(id) as Row | undefined;
    const row = r === undefined ? undefined : batchOf(r);
    return tenant === undefined || row?.tenant === tenant ? row : undefined;
  }

  /** A tenant's jobs of one API, newest first: after the row `page.after`, or the rows just before `page.before`. */
  batches(tenant: string, page: Page, listing: BatchListing = 'batches'): { rows: BatchRow[]; more: boolean } {
    const of = `id ${listing === 'message_batches' ? '' : 'NOT '}LIKE '${MESSAGE_BATCH_PREFIX}%'`;
    const before = page.before === undefined ? undefined : this.batch(page.before, tenant);
    if (before !== undefined) {
      const sql = `SELECT * FROM batches WHERE tenant = ? AND ${of} AND (created_ms, id) > (?, ?) ORDER BY created_ms ASC, id ASC LIMIT ?`;
      const rows = (this.#db.prepare(sql).all(tenant, before.createdMs, before.id, page.limit + 1) as Row[]).map(batchOf);
      return { rows: rows.slice(0, page.limit).reverse(), more: rows.length > page.limit };
    }
    const after = page.after === undefined ? undefined : this.batch(page.after, tenant);
    const cursor = after === undefined ? '' : ' AND (created_ms, id) < (?, ?)';
    const sql = `SELECT * FROM batches WHERE tenant = ? AND ${of}${cursor} ORDER BY created_ms DESC, id DESC LIMIT ?`;
    const args: (string | number)[] = after === undefined ? [tenant] : [tenant, after.createdMs, after.id];
    const rows = (this.#db.prepare(sql).all(...args, page.limit + 1) as Row[]).map(batchOf);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  /** Every tenant's latest jobs, newest first (the operator's view). */
  recent(limit: number): BatchRow[] {
    return (this.#db.prepare('SELECT * FROM batches ORDER BY created_ms DESC, id DESC LIMIT ?').all(limit) as Row[]).map(batchOf);
  }

  /** The jobs a runner carries on: validating, in progress, cancelling, finalizing. */
  running(): BatchRow[] {
    return (this.#s.running!.all() as Row[]).map(batchOf);
  }

  /** Moves a job to `status`, stamping its time, with the other columns given (snake_case). */
  setStatus(id: string, status: BatchStatus, atMs: number, more: Readonly<Record<string, string | number | null>> = {}): void {
    const stamp = STAMP[status];
    const sets = { status, ...(stamp === undefined ? {} : { [stamp]: atMs }), ...more };
    const names = Object.keys(sets);
    const sql = `UPDATE batches SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE id = ?`;
    this.#db.transaction(() => this.#db.prepare(sql).run(...names.map((n) => sets[n as keyof typeof sets] ?? null), id));
  }

  /** A cancel: new lines stop at once (the waiting ones fail `batch_cancelled`), in one transaction. */
  cancel(id: string, nowMs: number): void {
    this.#db.transaction(() => {
      this.#db
        .prepare("UPDATE batches SET status = 'cancelling', cancelling_ms = ?, ending = 'cancelled' WHERE id = ?")
        .run(nowMs, id);
      this.#failWaiting(id, CANCELLED_CODE, 'The batch was cancelled before this request was sent.');
    });
  }

  /** The window passed: the waiting lines fail `batch_expired`, and the job will end `expired`. */
  expire(id: string): void {
    this.#db.transaction(() => {
      this.#db.prepare("UPDATE batches SET ending = 'expired' WHERE id = ?").run(id);
      this.#failWaiting(id, EXPIRED_CODE, 'This request could not be executed before the completion window expired.');
    });
  }

  /** A job deleted with its lines, at its tenant's ask (an ended Message Batch). */
  deleteBatch(id: string): void {
    this.#db.transaction(() => {
      this.#s.forgetLines!.run(id);
      this.#s.forgetBatch!.run(id);
    });
  }

  /**
   * A job checked (`validating`): its lines, and it is `in_progress`, in one transaction — unless it
   * left `validating` meanwhile (cancelled): then nothing is kept; whether they were.
   */
  validated(id: string, lines: readonly NewLine[], nowMs: number): boolean {
    return this.#db.transaction(() => {
      if (Number(this.#s.validated!.run(nowMs, lines.length, id).changes) !== 1) return false;
      for (const line of lines) this.#s.insertLine!.run(id, line.lineNo, line.customId, line.model, line.body, 'waiting');
      return true;
    });
  }

  /** A job whose input did not pass its check: `failed` with each problem — unless it left `validating` meanwhile (cancelled). */
  invalid(id: string, problems: readonly BatchProblem[], nowMs: number, forgetMs: number): void {
    this.#db.transaction(() =>
      this.#db
        .prepare(
          "UPDATE batches SET status = 'failed', failed_ms = ?, errors = ?, forget_ms = ? WHERE id = ? AND status = 'validating'",
        )
        .run(nowMs, JSON.stringify(problems), forgetMs, id),
    );
  }

  /** Jobs whose retention passed, deleted with their lines; their ids. */
  forget(nowMs: number): string[] {
    const ids = (this.#s.forgotten!.all(nowMs) as Row[]).map((r) => String(r.id));
    if (ids.length > 0)
      this.#db.transaction(() => {
        for (const id of ids) {
          this.#s.forgetLines!.run(id);
          this.#s.forgetBatch!.run(id);
        }
      });
    return ids;
  }

  // Lines.

  /** The models a job has lines waiting for (some perhaps not due yet: takeLines takes only the due ones). */
  waitingModels(batchId: string): string[] {
    return (this.#s.waitingModels!.all(batchId, batchId) as Row[]).map((r) => String(r.model));
  }

  /** Whether a job has any line waiting, and any sent (1 or 0 each): what its next step needs, without counting them all. */
  pending(batchId: string): { readonly waiting: number; readonly sent: number } {
    const any = (state: LineState): number => num((this.#s.anyInState!.get(batchId, state) as Row).any);
    return { waiting: any('waiting'), sent: any('sent') };
  }

  /** Takes up to `limit` waiting lines of `model`: marked sent, committed, before any is sent. */
  takeLines(batchId: string, model: string, limit: number, nowMs: number): LineRow[] {
    return this.#db.transaction(() => {
      const rows = (this.#s.nextWaiting!.all(batchId, model, nowMs, limit) as Row[]).map(lineOf);
      for (const row of rows) this.#s.markSent!.run(batchId, row.lineNo);
      return rows;
    });
  }

  /** Sent lines' results, kept in one transaction (each job's counts with them): one commit for many answers. */
  keep(kept: readonly KeptLine[]): void {
    if (kept.length === 0) return;
    this.#db.transaction(() => {
      for (const line of kept) {
        if (line.kind === 'again') this.#requeue(line.batchId, line.lineNo, line.notBeforeMs, line.retried);
        else this.#settle(line.batchId, line.lineNo, line.result, line.ok);
      }
    });
  }

  #settle(batchId: string, lineNo: number, result: LineResult, ok: boolean): void {
    const state = ok ? 'done' : 'failed';
    const changed =
      result.kind === 'answer'
        ? this.#s.answered!.run(state, result.statusCode, result.requestId, result.body, null, batchId, lineNo)
        : this.#s.answered!.run(
            state,
            null,
            null,
            null,
            JSON.stringify({ code: result.code, message: result.message }),
            batchId,
            lineNo,
          );
    if (Number(changed.changes) === 1)
      this.#db
        .prepare(`UPDATE batches SET ${state === 'done' ? 'completed = completed' : 'failed = failed'} + 1 WHERE id = ?`)
        .run(batchId);
  }

  /**
   * A sent line no node ran (the gateway's queue was full, no node was free): waiting again from
   * `notBeforeMs`; `retried`: its answer never came (a node may have run it), so it is marked so.
   */
  #requeue(batchId: string, lineNo: number, notBeforeMs: number, retried: boolean): void {
    const changed = this.#s.requeue!.run(notBeforeMs, retried ? 1 : 0, batchId, lineNo);
    if (retried && Number(changed.changes) === 1)
      this.#db.prepare('UPDATE batches SET retried = retried + 1 WHERE id = ?').run(batchId);
  }

  /** After a restart: the lines sent whose answers were never kept wait again, marked retried; how many. */
  unsend(batchId: string): number {
    return this.#db.transaction(() => {
      const lines = (this.#s.unsent!.all(batchId) as Row[]).length;
      if (lines > 0) this.#db.prepare('UPDATE batches SET retried = retried + ? WHERE id = ?').run(lines, batchId);
      return lines;
    });
  }

  /** A job's lines by state. */
  counts(batchId: string): Readonly<Record<LineState, number>> {
    const counts = { waiting: 0, sent: 0, done: 0, failed: 0 };
    for (const r of this.#s.counts!.all(batchId) as Row[]) counts[String(r.state) as LineState] = num(r.n);
    return counts;
  }

  /** Every waiting line of a job fails with `code` (inside a transaction): counted failed. */
  #failWaiting(batchId: string, code: string, message: string): void {
    const n = (this.#s.settleWaiting!.all(JSON.stringify({ code, message }), batchId) as Row[]).length;
    if (n > 0) this.#db.prepare('UPDATE batches SET failed = failed + ? WHERE id = ?').run(n, batchId);
  }

  /** A job's lines grouped by what they came to (state, 2xx or the status, the error's code). */
  outcomes(batchId: string): OutcomeGroup[] {
    return (this.#s.outcomes!.all(batchId) as Row[]).map((r) => ({
      state: String(r.state) as LineState,
      statusCode: numOrNull(r.status_code),
      errorCode: strOrNull(r.code),
      lines: num(r.n),
    }));
  }

  /** A job's lines in order, a page at a time (the output files are written from them). */
  *lines(batchId: string, pageSize = 500): Generator<LineRow> {
    let after = 0;
    for (;;) {
      const rows = (this.#s.linesOf!.all(batchId, after, pageSize) as Row[]).map(lineOf);
      yield* rows;
      if (rows.length < pageSize) return;
      after = rows.at(-1)?.lineNo ?? after;
    }
  }

  close(): void {
    this.#db.close();
  }

  /** The file's writes (its part of /health). */
  writes(): ReturnType<StateDb['writes']> {
    return this.#db.writes();
  }
}
