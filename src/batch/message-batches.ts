// Anthropic's Message Batches API (`/v1/messages/batches`, docs/batch.md) over the same store and
// runner as OpenAI's Batch API: a batch is a job whose lines are its requests (given inline, no
// file), each run as a `/v1/messages` request of the job's tenant at the `batch` class. Its id is
// `msgbatch_…` (OpenAI's routes never show it, nor these routes an OpenAI batch); its results are
// read from its lines once it ended (no output file is written). For one tenant at a time: another
// tenant's id answers exactly as an unknown one.

import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { BatchSettings } from './batch-config.ts';
import { pageLimit } from './page-limit.ts';
import {
  isMessageBatchId,
  lineOutcome,
  MESSAGE_BATCH_PREFIX,
  newBatchRow,
  type BatchRow,
  type LineOutcome,
} from './batch-rows.ts';
import type { BatchStore } from './batch-store.ts';
import {
  invalidRequest,
  messageBatchLines,
  messageBatchNotFound,
  messageBatchObject,
  messageBatchPage,
  messageResultLine,
  processingStatus,
  type OutcomeCounts,
} from './message-batch-shapes.ts';

/** Anthropic's window: a Message Batch ends within 24 hours of its creation. */
const WINDOW_MS = 24 * 3_600_000;
/** Anthropic's list bounds: 1..1000, 20 by default. */
const LIST_DEFAULT = 20;
const LIST_MAX = 1000;

export interface MessageBatchDeps {
  readonly store: BatchStore;
  readonly clock: Clock;
  readonly settings: () => BatchSettings;
  /** A job was created or cancelled: the runner looks at once. */
  readonly poke: () => void;
}

export class MessageBatches {
  readonly #d: MessageBatchDeps;

  constructor(deps: MessageBatchDeps) {
    this.#d = deps;
  }

  /** The largest create body read ([batch] max_file_bytes: the requests come inline, not as a file). */
  maxBodyBytes(): number {
    return this.#d.settings().maxFileBytes;
  }

  /** POST /v1/messages/batches: `base` is the origin the client called (for `results_url`). */
  create(tenant: string, body: unknown, base: string): Record<string, unknown> | GatewayError {
    const settings = this.#d.settings();
    const lines = messageBatchLines(body, settings);
    if (lines instanceof GatewayError) return lines;
    const now = this.#d.clock.now();
    const row = newBatchRow({
      id: `${MESSAGE_BATCH_PREFIX}${randomBytes(12).toString('hex')}`,
      tenant,
      inputFileId: '',
      endpoint: '/v1/messages',
      completionWindow: '24h',
      metadata: null,
      status: 'in_progress',
      createdMs: now,
      expiresMs: now + WINDOW_MS,
      total: lines.length,
    });
    this.#d.store.addBatch(row, lines, now + settings.retentionMs);
    this.#d.poke();
    return this.#object(this.#d.store.batch(row.id) ?? row, base);
  }

  list(tenant: string, query: URLSearchParams, base: string): Record<string, unknown> | GatewayError {
    const limit = pageLimit(query.get('limit'), LIST_DEFAULT, LIST_MAX);
    if (limit instanceof GatewayError) return limit;
    const after = query.get('after_id') ?? undefined;
    const before = query.get('before_id') ?? undefined;
    if (after !== undefined && before !== undefined) return invalidRequest('give at most one of `after_id` and `before_id`');
    const { rows, more } = this.#d.store.batches(tenant, { limit, after, before }, 'message_batches');
    return messageBatchPage(
      rows.map((row) => this.#object(row, base)),
      more,
    );
  }

  retrieve(tenant: string, id: string, base: string): Record<string, unknown> | GatewayError {
    const row = this.#row(tenant, id);
    return row === undefined ? messageBatchNotFound(id) : this.#object(row, base);
  }

  /** Stops new requests at once (they end `canceled`); the batch is `canceling` until those in flight are answered. */
  cancel(tenant: string, id: string, base: string): Record<string, unknown> | GatewayError {
    const row = this.#row(tenant, id);
    if (row === undefined) return messageBatchNotFound(id);
    const status = processingStatus(row);
    if (status === 'ended') return invalidRequest(`Message Batch ${id} has already ended; there is nothing to cancel.`);
    // A batch already finalizing (every request answered) ends as it is; one canceling is left so.
    if (row.status === 'in_progress') {
      this.#d.store.cancel(id, this.#d.clock.now());
      this.#d.poke();
    }
    return this.#object(this.#d.store.batch(id) ?? row, base);
  }

  /** Its results as JSONL, one line per request in request order; only once it ended. */
  results(tenant: string, id: string): Readable | GatewayError {
    const row = this.#row(tenant, id);
    if (row === undefined) return messageBatchNotFound(id);
    if (processingStatus(row) !== 'ended')
      return invalidRequest(
        `Message Batch ${id} has not ended yet (processing_status: ${processingStatus(row)}); its results come once it has.`,
      );
    const store = this.#d.store;
    return Readable.from(
      (function* (): Generator<string> {
        for (const line of store.lines(id)) yield `${messageResultLine(line)}\n`;
      })(),
    );
  }

  /** Deletes an ended batch and its results; one still processing must be cancelled first. */
  delete(tenant: string, id: string): Record<string, unknown> | GatewayError {
    const row = this.#row(tenant, id);
    if (row === undefined) return messageBatchNotFound(id);
    if (processingStatus(row) !== 'ended')
      return invalidRequest(`Message Batch ${id} is still processing: cancel it, and delete it once it has ended.`);
    this.#d.store.deleteBatch(id);
    return { id, type: 'message_batch_deleted' };
  }

  #row(tenant: string, id: string): BatchRow | undefined {
    return isMessageBatchId(id) ? this.#d.store.batch(id, tenant) : undefined;
  }

  #object(row: BatchRow, base: string): Record<string, unknown> {
    const counts: Record<LineOutcome, number> = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (processingStatus(row) === 'ended')
      for (const group of this.#d.store.outcomes(row.id)) counts[lineOutcome(group)] += group.lines;
    return messageBatchObject(row, counts as OutcomeCounts, base);
  }
}
