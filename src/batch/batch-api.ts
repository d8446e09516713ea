// The Files and Batch API's operations, for one tenant at a time (the caller's): what each
// answers, as data or a GatewayError (batch-routes.ts sends them). A tenant reaches only its own
// files and jobs: another tenant's id answers exactly as an unknown one.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { Clock } from '#src/core/clock.ts';
import { badRequest, GatewayError } from '#src/core/errors.ts';
import type { BatchSettings } from './batch-config.ts';
import { checkBatchAsk } from './batch-create.ts';
import type { BatchFiles } from './batch-files.ts';
import { isMessageBatchId, newBatchRow, type BatchRow, type FileRow } from './batch-rows.ts';
import { batchObject, fileObject, listObject } from './batch-shapes.ts';
import type { BatchStore } from './batch-store.ts';
import { receiveUpload } from './file-upload.ts';
import { pageLimit } from './page-limit.ts';
import { MessageBatches } from './message-batches.ts';

export interface BatchApiDeps {
  readonly store: BatchStore;
  readonly files: BatchFiles;
  readonly clock: Clock;
  readonly settings: () => BatchSettings;
  /** A job was created or cancelled: the runner looks at once. */
  readonly poke: () => void;
}

const newId = (prefix: string): string => `${prefix}${randomBytes(12).toString('hex')}`;

export const notFound = (what: 'File' | 'Batch', id: string): GatewayError =>
  new GatewayError('GW_NOT_FOUND', `No such ${what} object: ${id.slice(0, 100)}`, {
    status: 404,
    openaiType: 'invalid_request_error',
    param: 'id',
    openaiCode: 'not_found',
  });

export class BatchApi {
  readonly #d: BatchApiDeps;
  /** Anthropic's Message Batches API over the same store and runner. */
  readonly messages: MessageBatches;

  constructor(deps: BatchApiDeps) {
    this.#d = deps;
    this.messages = new MessageBatches(deps);
  }

  async upload(tenant: string, req: IncomingMessage): Promise<Record<string, unknown> | GatewayError> {
    const { store, files, clock } = this.#d;
    const settings = this.#d.settings();
    const id = newId('file-');
    const got = await receiveUpload(req, files.tempOf(id), settings);
    if (got instanceof GatewayError) return got;
    if (store.tenantBytes(tenant) + got.bytes > settings.maxTenantBytes) {
      await files.remove(id);
      return new GatewayError(
        'GW_BODY_TOO_LARGE',
        `the tenant's files would hold more than [batch] max_tenant_bytes = ${settings.maxTenantBytes} bytes: delete files it no longer needs`,
        { status: 413, openaiType: 'invalid_request_error', openaiCode: 'storage_limit_exceeded', param: 'file' },
      );
    }
    await files.keep(id);
    const now = clock.now();
    const row: FileRow = {
      id,
      tenant,
      purpose: got.purpose,
      filename: got.filename.slice(0, 256),
      bytes: got.bytes,
      lines: got.lines,
      createdMs: now,
      expiresMs: now + settings.retentionMs,
    };
    try {
      store.addFile(row);
    } catch (error) {
      // No record, no file: a file without one would never be listed nor deleted.
      await files.remove(id);
      throw error;
    }
    return fileObject(row);
  }

  listFiles(tenant: string, query: URLSearchParams): Record<string, unknown> | GatewayError {
    const limit = pageLimit(query.get('limit'), 10_000, 10_000);
    if (limit instanceof GatewayError) return limit;
    const page = { limit, after: query.get('after') ?? undefined };
    const { rows, more } = this.#d.store.files(tenant, page, query.get('purpose') ?? undefined, query.get('order') === 'asc');
    return listObject(rows, fileObject, more);
  }

  file(tenant: string, id: string): Record<string, unknown> | GatewayError {
    const row = this.#d.store.file(id, tenant);
    return row === undefined ? notFound('File', id) : fileObject(row);
  }

  content(tenant: string, id: string): Readable | GatewayError {
    const row = this.#d.store.file(id, tenant);
    return row === undefined ? notFound('File', id) : this.#d.files.read(id);
  }

  async deleteFile(tenant: string, id: string): Promise<Record<string, unknown> | GatewayError> {
    const row = this.#d.store.file(id, tenant);
    if (row === undefined) return notFound('File', id);
    this.#d.store.deleteFile(id);
    await this.#d.files.remove(id);
    return { id, object: 'file', deleted: true };
  }

  /**
   * POST /v1/batches: the ask checked here; the job is created `validating` and answered at once —
   * the runner then reads its input file and checks every line against it (batch-create.ts): it
   * becomes `in_progress` with its lines, or `failed` with each problem and its line number.
   */
  createBatch(tenant: string, body: unknown): Record<string, unknown> | GatewayError {
    const ask = checkBatchAsk(body);
    if (ask instanceof GatewayError) return ask;
    const { store, clock } = this.#d;
    const input = store.file(ask.inputFileId, tenant);
    if (input === undefined) return notFound('File', ask.inputFileId);
    const settings = this.#d.settings();
    if (input.lines > settings.maxLines)
      return badRequest(
        `the input file has ${input.lines} requests, more than [batch] max_lines = ${settings.maxLines}`,
        'input_file_id',
      );
    const now = clock.now();
    const row = newBatchRow({
      id: newId('batch_'),
      tenant,
      inputFileId: input.id,
      endpoint: ask.endpoint,
      completionWindow: ask.completionWindow,
      metadata: ask.metadata,
      status: 'validating',
      createdMs: now,
      expiresMs: now + ask.windowMs,
      total: 0,
    });
    store.addBatch(row, [], now + settings.retentionMs);
    this.#d.poke();
    return batchObject(store.batch(row.id) ?? row);
  }

  listBatches(tenant: string, query: URLSearchParams): Record<string, unknown> | GatewayError {
    const limit = pageLimit(query.get('limit'), 20, 100);
    if (limit instanceof GatewayError) return limit;
    const { rows, more } = this.#d.store.batches(tenant, { limit, after: query.get('after') ?? undefined });
    return listObject(rows, batchObject, more);
  }

  batch(tenant: string, id: string): Record<string, unknown> | GatewayError {
    const row = this.#row(tenant, id);
    return row === undefined ? notFound('Batch', id) : batchObject(row);
  }

  /** Stops new lines at once (the waiting ones fail `batch_cancelled`); the job ends `cancelled` once its lines in flight are answered. */
  cancel(tenant: string, id: string): Record<string, unknown> | GatewayError {
    const { store, clock } = this.#d;
    const row = this.#row(tenant, id);
    if (row === undefined) return notFound('Batch', id);
    if (row.status !== 'in_progress' && row.status !== 'validating')
      return new GatewayError('GW_BAD_REQUEST', `Cannot cancel a batch with status '${row.status}'.`, {
        status: 409,
        openaiType: 'invalid_request_error',
        openaiCode: 'batch_not_cancellable',
      });
    store.cancel(id, clock.now());
    this.#d.poke();
    return batchObject(store.batch(id) ?? row);
  }

  /** A batch of this API (an Anthropic Message Batch is not: it answers as an unknown id here). */
  #row(tenant: string, id: string): BatchRow | undefined {
    return isMessageBatchId(id) ? undefined : this.#d.store.batch(id, tenant);
  }
}
