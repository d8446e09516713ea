// The Files and Batch API's objects in OpenAI's shapes (times in seconds), and the output and
// error files' lines (`{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`).
// Pure.

import type { BatchRow, FileRow, LineRow } from './batch-rows.ts';

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

export function fileObject(row: FileRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'file',
    bytes: row.bytes,
    created_at: seconds(row.createdMs),
    expires_at: seconds(row.expiresMs),
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    status_details: null,
  };
}

export function batchObject(row: BatchRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: row.errors === null ? null : { object: 'list', data: row.errors },
    input_file_id: row.inputFileId,
    completion_window: row.completionWindow,
    status: row.status,
    output_file_id: row.outputFileId,
    error_file_id: row.errorFileId,
    created_at: seconds(row.createdMs),
    in_progress_at: seconds(row.inProgressMs),
    expires_at: seconds(row.expiresMs),
    finalizing_at: seconds(row.finalizingMs),
    completed_at: seconds(row.completedMs),
    failed_at: seconds(row.failedMs),
    expired_at: seconds(row.expiredMs),
    cancelling_at: seconds(row.cancellingMs),
    cancelled_at: seconds(row.cancelledMs),
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata,
  };
}

/** A page in OpenAI's list shape. */
export function listObject<T extends { readonly id: string }>(
  rows: readonly T[],
  shape: (row: T) => Record<string, unknown>,
  more: boolean,
): Record<string, unknown> {
  return {
    object: 'list',
    data: rows.map(shape),
    first_id: rows[0]?.id ?? null,
    last_id: rows.at(-1)?.id ?? null,
    has_more: more,
  };
}

/** Which of the two files a settled line goes to: a 2xx answer to the output, anything else to the errors. */
export const isOutputLine = (line: LineRow): boolean =>
  line.state === 'done' && line.statusCode !== null && line.statusCode >= 200 && line.statusCode < 300;

/** A settled line in OpenAI's output-file shape (the answer's body as JSON when it parses, else as text). */
export function outputLine(line: LineRow): string {
  const response =
    line.statusCode === null
      ? null
      : { status_code: line.statusCode, request_id: line.requestId ?? '', body: bodyValue(line.answer ?? '') };
  const error = line.error === null ? null : (JSON.parse(line.error) as unknown);
  return JSON.stringify({ id: `batch_req_${line.batchId.slice(6)}_${line.lineNo}`, custom_id: line.customId, response, error });
}

function bodyValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
