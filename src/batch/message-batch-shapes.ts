// Anthropic's Message Batches API in its own shapes (pure; @anthropic-ai/sdk's
// resources/messages/batches): the create body checked into a job's lines, the `message_batch`
// object (times as RFC 3339 strings, `processing_status`, `request_counts`, `results_url`), and a
// result line `{custom_id, result: {type: succeeded | errored | canceled | expired, message | error}}`.

import { GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import { ANTHROPIC_ERRORS } from '#src/proxy/index.ts';
import { lineOutcome, type BatchRow, type LineOutcome, type LineRow } from './batch-rows.ts';
import type { NewLine } from './batch-store.ts';

/** Anthropic's custom_id: 1 to 64 letters, digits, `_` and `-`. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** How many problems a refused create names. */
const MAX_NAMED = 10;

export interface MessageBatchBounds {
  /** Requests per batch ([batch] max_lines). */
  readonly maxLines: number;
  /** One request's `params`, as JSON ([batch] max_line_bytes). */
  readonly maxLineBytes: number;
}

export const invalidRequest = (message: string): GatewayError =>
  new GatewayError('GW_BAD_REQUEST', message, { status: 400, openaiType: 'invalid_request_error' });

/** `{requests: [{custom_id, params}]}` checked: the job's lines (line N = request N, from 1), or a 400 naming each problem by its path. */
export function messageBatchLines(body: unknown, bounds: MessageBatchBounds): NewLine[] | GatewayError {
  if (!isRecord(body) || !Array.isArray(body.requests))
    return invalidRequest('requests: Field required (an array of {custom_id, params})');
  const requests: unknown[] = body.requests;
  if (requests.length === 0) return invalidRequest('requests: must hold at least one request');
  if (requests.length > bounds.maxLines)
    return invalidRequest(`requests: ${requests.length} requests, more than [batch] max_lines = ${bounds.maxLines}`);
  const problems: string[] = [];
  const seen = new Set<string>();
  const lines: NewLine[] = [];
  requests.forEach((request, i) => {
    const problem = (what: string): void => void problems.push(`requests.${i}${what}`);
    if (!isRecord(request)) return problem(': must be an object {custom_id, params}');
    const { custom_id: customId, params } = request;
    if (typeof customId !== 'string' || !CUSTOM_ID.test(customId))
      return problem('.custom_id: must be 1 to 64 letters, digits, `_` or `-`');
    if (seen.has(customId)) return problem(`.custom_id: "${customId}" is used by an earlier request; each must be unique`);
    seen.add(customId);
    if (!isRecord(params)) return problem('.params: must be an object (the Messages API request)');
    if (typeof params.model !== 'string' || params.model === '') return problem('.params.model: must be a non-empty string');
    if (params.stream === true) return problem('.params.stream: must not be true (a batch request is answered whole)');
    const text = JSON.stringify(params);
    if (Buffer.byteLength(text) > bounds.maxLineBytes)
      return problem(`.params: longer than [batch] max_line_bytes = ${bounds.maxLineBytes} bytes`);
    lines.push({ lineNo: i + 1, customId, model: params.model, body: text });
  });
  if (problems.length === 0) return lines;
  const more = problems.length > MAX_NAMED ? `; and ${problems.length - MAX_NAMED} more` : '';
  return invalidRequest(`${problems.slice(0, MAX_NAMED).join('; ')}${more}`);
}

const rfc3339 = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Anthropic's three processing statuses over the runner's lifecycle. */
export function processingStatus(row: Pick<BatchRow, 'status'>): 'in_progress' | 'canceling' | 'ended' {
  if (row.status === 'cancelling') return 'canceling';
  if (row.status === 'completed' || row.status === 'expired' || row.status === 'cancelled' || row.status === 'failed')
    return 'ended';
  return 'in_progress';
}

export type OutcomeCounts = Readonly<Record<LineOutcome, number>>;

/**
 * The `message_batch` object. As Anthropic's: every request counts as `processing` until the whole
 * batch ends, then by its result (the counts always add up to the requests). `results_url` once it
 * ended: `resultsBase` (the origin the client called) + the results path.
 */
export function messageBatchObject(row: BatchRow, outcomes: OutcomeCounts, resultsBase: string): Record<string, unknown> {
  const ended = processingStatus(row) === 'ended';
  const endedMs = row.completedMs ?? row.expiredMs ?? row.cancelledMs ?? row.failedMs;
  return {
    id: row.id,
    type: 'message_batch',
    processing_status: processingStatus(row),
    request_counts: ended
      ? {
          processing: 0,
          succeeded: outcomes.succeeded,
          errored: outcomes.errored + outcomes.processing,
          canceled: outcomes.canceled,
          expired: outcomes.expired,
        }
      : { processing: row.total, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
    ended_at: ended ? rfc3339(endedMs) : null,
    created_at: rfc3339(row.createdMs),
    expires_at: rfc3339(row.expiresMs),
    cancel_initiated_at: rfc3339(row.cancellingMs),
    archived_at: null,
    results_url: ended ? `${resultsBase}/v1/messages/batches/${row.id}/results` : null,
  };
}

/** A page of Message Batches in Anthropic's list shape. */
export function messageBatchPage(data: readonly Record<string, unknown>[], more: boolean): Record<string, unknown> {
  return {
    data,
    has_more: more,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
  };
}

/** A settled line as one result line of a Message Batch. */
export function messageResultLine(line: LineRow): string {
  const error = line.error === null ? undefined : (JSON.parse(line.error) as { code?: unknown; message?: unknown });
  const outcome = lineOutcome({ state: line.state, statusCode: line.statusCode, errorCode: String(error?.code ?? '') || null });
  const result =
    outcome === 'succeeded'
      ? { type: 'succeeded', message: parsed(line.answer ?? '') }
      : outcome === 'canceled' || outcome === 'expired'
        ? { type: outcome }
        : { type: 'errored', error: errorResponse(line, error) };
  return JSON.stringify({ custom_id: line.customId, result });
}

/** Anthropic's ErrorResponse for a line: the answer's own error (worded in Anthropic's shape), or why it got none. */
function errorResponse(line: LineRow, error: { code?: unknown; message?: unknown } | undefined): Record<string, unknown> {
  if (line.statusCode === null) {
    const message = typeof error?.message === 'string' ? error.message : 'The request got no answer.';
    return { type: 'error', error: { type: 'api_error', message }, request_id: null };
  }
  const text = line.answer ?? '';
  const body = parsed(ANTHROPIC_ERRORS.passedOn(line.statusCode, text) ?? text);
  const shaped = isRecord(body) && body.type === 'error' && isRecord(body.error) ? body : undefined;
  return {
    ...(shaped ?? { type: 'error', error: { type: 'api_error', message: `status ${line.statusCode}` } }),
    request_id: line.requestId,
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A Message Batch id (`msgbatch_…`) of a tenant, or 404 as Anthropic words it. */
export const messageBatchNotFound = (id: string): GatewayError =>
  new GatewayError('GW_NOT_FOUND', `No such Message Batch: ${id.slice(0, 100)}`, {
    status: 404,
    openaiType: 'invalid_request_error',
    openaiCode: 'not_found',
  });
