// The runner: carries every running job on, one tick at a time ([batch] tick, and at once when a
// job is created or cancelled); the slot an answered line leaves is filled again at once (#refill).
// Each tick, per job (batch-lifecycle.ts): expire it, take the lines there is room for (pace.ts:
// free slots, nobody queued, per model) — marked sent and committed before any is sent —, or
// finalize it (its output and error files).
// A line's answer is kept at once (line-verdict.ts); one no node answered waits and goes again.
// At start the lines a crash left `sent` (their answers never kept) go again, marked retried.
// After stop nothing is kept: a line still in flight stays `sent`, and the next start sends it again.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { BatchSettings } from './batch-config.ts';
import type { BatchFiles } from './batch-files.ts';
import { readJobLines } from './batch-create.ts';
import { jobStep, type Ending } from './batch-lifecycle.ts';
import { isBatchEndpoint } from './batch-line.ts';
import { isMessageBatchId, type BatchProblem, type BatchRow, type FileRow, type LineResult, type LineRow } from './batch-rows.ts';
import { isOutputLine, outputLine } from './batch-shapes.ts';
import type { BatchStore, KeptLine } from './batch-store.ts';
import { lineVerdict, NO_ANSWER, type LineVerdict } from './line-verdict.ts';

const TOO_LARGE: LineVerdict = Object.freeze({ kind: 'keep', ok: false });

/** A job's input file could not be read (deleted since, or the disk): its one problem. */
const unreadable = (job: BatchRow, error: unknown): BatchProblem => ({
  code: 'input_file_unreadable',
  message: `the input file ${job.inputFileId} could not be read (${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it was deleted' : String(error)})`,
  param: 'input_file_id',
  line: null,
});

/** What sending a line came to. */
export type SentLine =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers: Readonly<Record<string, string | string[] | undefined>>;
      readonly body: string;
      readonly requestId: string;
    }
  | { readonly kind: 'too-large'; readonly limit: number }
  | { readonly kind: 'failed'; readonly error: string };

export type RunnerLog = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;

export interface RunnerDeps {
  readonly store: BatchStore;
  readonly files: BatchFiles;
  readonly clock: Clock;
  readonly settings: () => BatchSettings;
  /** How many more lines of `model` may start now (pace.ts over the fleet), given the runner's own in flight and its cap. */
  readonly room: (model: string, own: number, cap: number) => number;
  readonly send: (job: BatchRow, line: LineRow) => Promise<SentLine>;
  readonly log: RunnerLog;
}

/** What the runner shows (metrics, /admin/runtime). */
export interface RunnerFigures {
  readonly inFlight: number;
  readonly sent: number;
  readonly done: number;
  readonly failed: number;
  readonly again: number;
}

/** How often files and jobs past their retention are deleted. */
const SWEEP_MS = 60_000;
/*
 * An answer refills at once (#refill, no delay): every answer that arrived in that turn of the
 * event loop is kept, in one transaction, and the next lines of the answered lines' jobs and
 * models start into the room they left — a freed slot is filled again within one turn, not on a
 * timer (idle speed: the fleet's slots over its service time). The refill reads no more than the
 * lines it takes (an index range); the tick's scans of a whole job (its counts, its models) stay on
 * the timer, so a large job costs the event loop — which every request shares — nothing per answer
 * beyond the commit. A commit waits for the disk (synchronous = FULL), but the answers of one turn
 * share one: the busier the loop, the more answers each carries. An answer not yet kept when the
 * process dies leaves its line `sent`: the next start sends it again, marked retried.
 */

export class BatchRunner {
  readonly #d: RunnerDeps;
  readonly #own = new Map<string, number>();
  readonly #finalizing = new Set<string>();
  readonly #validating = new Set<string>();
  readonly #flights = new Set<Promise<void>>();
  readonly #figures = { sent: 0, done: 0, failed: 0, again: 0 };
  readonly #answers: KeptLine[] = [];
  #timer: Timer | undefined;
  #dueAt = Infinity;
  /** The answered lines' jobs and models, refilled at the next turn (#refill). */
  readonly #refills = new Map<string, { readonly job: BatchRow; readonly models: Set<string> }>();
  #refillTimer: Timer | undefined;
  #stopped = true;
  #sweptAt = -Infinity;

  constructor(deps: RunnerDeps) {
    this.#d = deps;
  }

  /** Takes up the jobs a previous process left running; lines it sent without keeping their answers go again, marked retried. */
  start(): void {
    this.#stopped = false;
    for (const job of this.#d.store.running()) {
      const again = this.#d.store.unsend(job.id);
      if (again > 0)
        this.#d.log(
          'warn',
          { batch: job.id, lines: again },
          'batch lines sent before a restart (or by a replica whose runner lease passed to this one) had no answer kept: sent again, marked retried',
        );
    }
    this.poke();
  }

  /** Looks at once (a job created or cancelled, a line answered); `inMs`: within that time. */
  poke(inMs = 0): void {
    if (this.#stopped) return;
    const at = this.#d.clock.now() + inMs;
    if (this.#timer !== undefined && this.#dueAt <= at) return;
    this.#timer?.cancel();
    this.#dueAt = at;
    this.#timer = this.#d.clock.setTimeout(() => this.#tick(), inMs);
  }

  /** Sends nothing more; the lines in flight finish (the request plane drained before), and their answers are kept. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#refillTimer?.cancel();
    this.#refillTimer = undefined;
    this.#refills.clear();
    await Promise.allSettled([...this.#flights]);
    this.#keepAnswers();
  }

  figures(): RunnerFigures {
    return { inFlight: [...this.#own.values()].reduce((a, b) => a + b, 0), ...this.#figures };
  }

  #tick(): void {
    this.#timer = undefined;
    this.#dueAt = Infinity;
    if (this.#stopped) return;
    const settings = this.#d.settings();
    try {
      this.#keepAnswers();
      const now = this.#d.clock.now();
      if (now - this.#sweptAt >= SWEEP_MS) {
        this.#sweptAt = now;
        this.#track(this.#sweep(now));
      }
      if (settings.enabled) for (const job of this.#d.store.running()) this.#step(job, now, settings);
    } catch (error) {
      this.#d.log('error', { err: error }, 'the batch runner could not read or write its file; trying again');
    }
    this.poke(settings.tickMs);
  }

  #askRefill(job: BatchRow, model: string): void {
    if (this.#stopped) return;
    const asked = this.#refills.get(job.id) ?? { job, models: new Set<string>() };
    asked.models.add(model);
    this.#refills.set(job.id, asked);
    this.#refillTimer ??= this.#d.clock.setTimeout(() => this.#refill(), 0);
  }

  /** The answers of this turn kept; the next lines of their jobs and models into the room they left. */
  #refill(): void {
    this.#refillTimer = undefined;
    const asked = [...this.#refills.values()];
    this.#refills.clear();
    if (this.#stopped) return;
    const settings = this.#d.settings();
    try {
      this.#keepAnswers();
      const now = this.#d.clock.now();
      // A job past its window, cancelled (its waiting lines failed) or paused by [batch] enabled = false starts nothing here: the tick ends it.
      let ranOut = !settings.enabled;
      if (settings.enabled)
        for (const { job, models } of asked)
          for (const model of models) if (now >= job.expiresMs || !this.#take(job, model, now, settings)) ranOut = true;
      // Its lines running out (the job to finalize), or a job to end: the tick looks at once.
      if (ranOut) this.poke();
    } catch (error) {
      this.#d.log('error', { err: error }, 'the batch runner could not read or write its file; trying again');
      this.poke();
    }
  }

  /** Takes and sends as many of the job's waiting lines of `model` as the pacing gives room for; false when fewer were waiting. */
  #take(job: BatchRow, model: string, now: number, settings: BatchSettings): boolean {
    const room = this.#d.room(model, this.#own.get(model) ?? 0, settings.maxInFlight - this.figures().inFlight);
    if (room <= 0) return true;
    const lines = this.#d.store.takeLines(job.id, model, room, now);
    for (const line of lines) this.#launch(job, line);
    return lines.length === room;
  }

  #keepAnswers(): void {
    if (this.#answers.length === 0) return;
    const kept = this.#answers.splice(0);
    try {
      this.#d.store.keep(kept);
    } catch (error) {
      // Tried again at the next tick (a write another connection held past the busy timeout — a
      // request worker's, a replica's — or a disk that fills): they are held here meanwhile, and the
      // lines stay sent, so a process that ends first sends them again at its next start (marked retried).
      this.#answers.unshift(...kept);
      this.#d.log(
        'error',
        { err: error, lines: kept.length },
        'batch lines’ answers could not be kept yet; they are tried again at the next tick (should the gateway stop first, those lines go again at the next start, marked retried)',
      );
    }
  }

  #step(job: BatchRow, now: number, settings: BatchSettings): void {
    const { store } = this.#d;
    const step = jobStep(job, store.pending(job.id), now);
    if (step.kind === 'expire') return store.expire(job.id);
    if (step.kind === 'finalize') return this.#finalize(job, step.ending);
    if (step.kind === 'validate') return this.#validate(job, settings);
    if (step.kind !== 'run') return;
    for (const model of store.waitingModels(job.id)) this.#take(job, model, now, settings);
  }

  /**
   * A `validating` job's input read and checked against it (batch-create.ts): its lines kept and it
   * `in_progress`, or `failed` with each problem. Once per job at a time; after a restart it is
   * read again (nothing of it was kept). A job cancelled meanwhile keeps none of its lines.
   */
  #validate(job: BatchRow, settings: BatchSettings): void {
    if (this.#validating.has(job.id)) return;
    this.#validating.add(job.id);
    const { store, files, clock } = this.#d;
    const checked = async (): Promise<void> => {
      const read = isBatchEndpoint(job.endpoint)
        ? await readJobLines(files, job.inputFileId, job.endpoint, settings.maxLineBytes).catch((error: unknown) => ({
            lines: [],
            problems: [unreadable(job, error)],
          }))
        : {
            lines: [],
            problems: [{ code: 'invalid_endpoint', message: `the endpoint ${job.endpoint} is not served`, line: null }],
          };
      const now = clock.now();
      if (read.problems.length > 0) store.invalid(job.id, read.problems, now, now + this.#d.settings().retentionMs);
      else store.validated(job.id, read.lines, now);
    };
    this.#track(
      checked()
        .catch((error: unknown) =>
          this.#d.log('error', { err: error, batch: job.id }, 'a batch’s input could not be checked; trying again'),
        )
        .finally(() => {
          this.#validating.delete(job.id);
          this.poke();
        }),
    );
  }

  #launch(job: BatchRow, line: LineRow): void {
    this.#own.set(line.model, (this.#own.get(line.model) ?? 0) + 1);
    this.#figures.sent += 1;
    this.#track(
      this.#d
        .send(job, line)
        .catch((error: unknown): SentLine => ({ kind: 'failed', error: String(error) }))
        .then((sent) => {
          this.#own.set(line.model, (this.#own.get(line.model) ?? 1) - 1);
          this.#keep(job, line, sent);
          this.#askRefill(job, line.model);
        }),
    );
  }

  /** A line's answer, to be kept at the next tick with the others of its turn. */
  #keep(job: BatchRow, line: LineRow, sent: SentLine): void {
    const verdict: LineVerdict =
      sent.kind === 'answer' ? lineVerdict(sent.status, sent.headers) : sent.kind === 'failed' ? NO_ANSWER : TOO_LARGE;
    const at = { batchId: job.id, lineNo: line.lineNo };
    if (verdict.kind === 'again') {
      this.#figures.again += 1;
      this.#answers.push({
        ...at,
        kind: 'again',
        notBeforeMs: this.#d.clock.now() + verdict.afterMs,
        retried: sent.kind === 'failed',
      });
      return;
    }
    this.#figures[verdict.ok ? 'done' : 'failed'] += 1;
    const result: LineResult =
      sent.kind === 'answer'
        ? { kind: 'answer', statusCode: sent.status, requestId: sent.requestId, body: sent.body }
        : {
            kind: 'error',
            code: 'answer_too_large',
            message: `the answer was longer than [batch] max_answer_bytes (${sent.kind === 'too-large' ? sent.limit : 0} bytes)`,
          };
    this.#answers.push({ ...at, kind: 'settle', result, ok: verdict.ok });
  }

  /** Writes the job's output and error files and ends it (`ending`). */
  #finalize(job: BatchRow, ending: Ending): void {
    if (this.#finalizing.has(job.id)) return;
    this.#finalizing.add(job.id);
    const { store, clock } = this.#d;
    if (job.status !== 'finalizing') store.setStatus(job.id, 'finalizing', clock.now(), { ending });
    const written = async (): Promise<void> => {
      // A Message Batch's results are read from its lines (message-batches.ts): no files.
      const files = !isMessageBatchId(job.id);
      const output = files ? await this.#outputFile(job, 'output', (line) => isOutputLine(line)) : undefined;
      const errors = files
        ? await this.#outputFile(job, 'error', (line) => line.state !== 'waiting' && line.state !== 'sent' && !isOutputLine(line))
        : undefined;
      const now = clock.now();
      store.setStatus(job.id, ending, now, {
        output_file_id: output?.id ?? null,
        error_file_id: errors?.id ?? null,
        forget_ms: now + this.#d.settings().retentionMs,
      });
      this.#d.log('info', { batch: job.id, tenant: job.tenant, status: ending }, 'batch finished');
    };
    this.#track(
      written()
        .catch((error: unknown) =>
          this.#d.log('error', { err: error, batch: job.id }, 'a batch’s output files could not be written; trying again'),
        )
        .finally(() => {
          this.#finalizing.delete(job.id);
          this.poke();
        }),
    );
  }

  async #outputFile(job: BatchRow, kind: 'output' | 'error', include: (line: LineRow) => boolean): Promise<FileRow | undefined> {
    const { store, files, clock } = this.#d;
    const id = `file-${job.id.slice(6)}${kind === 'output' ? 'o' : 'e'}`;
    const picked = function* (): Generator<string> {
      for (const line of store.lines(job.id)) if (include(line)) yield outputLine(line);
    };
    const { bytes, lines } = await files.write(id, picked());
    if (lines === 0) {
      await files.remove(id);
      return undefined;
    }
    const now = clock.now();
    const row: FileRow = {
      id,
      tenant: job.tenant,
      purpose: 'batch_output',
      filename: `${job.id}_${kind}.jsonl`,
      bytes,
      lines,
      createdMs: now,
      expiresMs: now + this.#d.settings().retentionMs,
    };
    store.replaceFile(row);
    return row;
  }

  async #sweep(now: number): Promise<void> {
    const { store, files } = this.#d;
    for (const file of store.expiredFiles(now)) {
      store.deleteFile(file.id);
      await files.remove(file.id);
    }
    store.forget(now);
  }

  #track(flight: Promise<void>): void {
    const tracked = flight.catch((error: unknown) => this.#d.log('error', { err: error }, 'batch work failed'));
    this.#flights.add(tracked);
    void tracked.finally(() => this.#flights.delete(tracked));
  }
}
