// Issue 44: Anthropic's Message Batches' pure rules, by table: the create body checked into lines
// (each problem named by its path), the processing status over the runner's lifecycle, a line's
// outcome, the object's counts (all `processing` until it ended), and a result line's shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import { lineOutcome, type BatchRow, type BatchStatus, type LineRow } from '#src/batch/batch-rows.ts';
import { messageBatchLines, messageBatchObject, messageResultLine, processingStatus } from '#src/batch/message-batch-shapes.ts';

const bounds = { maxLines: 3, maxLineBytes: 200 };
const req = (customId: unknown, params: unknown = { model: 'm', max_tokens: 1, messages: [] }): unknown => ({
  custom_id: customId,
  params,
});

test('a create body: its requests as lines, or a 400 naming each problem by its path', () => {
  const lines = messageBatchLines({ requests: [req('a'), req('b-2_C')] }, bounds);
  assert.ok(!(lines instanceof GatewayError));
  assert.deepEqual(
    lines.map((l) => [l.lineNo, l.customId, l.model]),
    [
      [1, 'a', 'm'],
      [2, 'b-2_C', 'm'],
    ],
  );
  assert.deepEqual(JSON.parse(lines[0]!.body), { model: 'm', max_tokens: 1, messages: [] });
  const cases: [unknown, RegExp][] = [
    [{}, /^requests: Field required/],
    [{ requests: [] }, /at least one/],
    [{ requests: [req('a'), req('b'), req('c'), req('d')] }, /4 requests, more than \[batch\] max_lines = 3/],
    [{ requests: ['x'] }, /requests\.0: must be an object/],
    [{ requests: [req('has space')] }, /requests\.0\.custom_id: must be 1 to 64/],
    [{ requests: [req('x'.repeat(65))] }, /requests\.0\.custom_id/],
    [{ requests: [req('a'), req('a')] }, /requests\.1\.custom_id: "a" is used by an earlier request/],
    [{ requests: [req('a', 'text')] }, /requests\.0\.params: must be an object/],
    [{ requests: [req('a', { max_tokens: 1 })] }, /requests\.0\.params\.model/],
    [{ requests: [req('a', { model: 'm', stream: true })] }, /requests\.0\.params\.stream/],
    [
      { requests: [req('a', { model: 'm', pad: 'x'.repeat(300) })] },
      /requests\.0\.params: longer than \[batch\] max_line_bytes = 200/,
    ],
  ];
  for (const [body, problem] of cases) {
    const refused = messageBatchLines(body, bounds);
    assert.ok(refused instanceof GatewayError, JSON.stringify(body).slice(0, 80));
    assert.equal(refused.status, 400);
    assert.match(refused.message, problem);
  }
});

test('processing status: in_progress, canceling, then ended whatever way the job ended', () => {
  const cases: [BatchStatus, string][] = [
    ['validating', 'in_progress'],
    ['in_progress', 'in_progress'],
    ['finalizing', 'in_progress'],
    ['cancelling', 'canceling'],
    ['completed', 'ended'],
    ['expired', 'ended'],
    ['cancelled', 'ended'],
    ['failed', 'ended'],
  ];
  for (const [status, expected] of cases) assert.equal(processingStatus({ status }), expected, status);
});

test('a line’s outcome: processing, succeeded (a 2xx), canceled or expired (never sent), else errored', () => {
  const cases: [Parameters<typeof lineOutcome>[0], string][] = [
    [{ state: 'waiting', statusCode: null, errorCode: null }, 'processing'],
    [{ state: 'sent', statusCode: null, errorCode: null }, 'processing'],
    [{ state: 'done', statusCode: 200, errorCode: null }, 'succeeded'],
    [{ state: 'failed', statusCode: 404, errorCode: null }, 'errored'],
    [{ state: 'failed', statusCode: 429, errorCode: null }, 'errored'],
    [{ state: 'failed', statusCode: null, errorCode: 'batch_cancelled' }, 'canceled'],
    [{ state: 'failed', statusCode: null, errorCode: 'batch_expired' }, 'expired'],
    [{ state: 'failed', statusCode: null, errorCode: 'answer_too_large' }, 'errored'],
  ];
  for (const [line, expected] of cases) assert.equal(lineOutcome(line), expected, JSON.stringify(line));
});

const row = (status: BatchStatus, more: Partial<BatchRow> = {}): BatchRow => ({
  id: 'msgbatch_1',
  tenant: 't',
  inputFileId: '',
  endpoint: '/v1/messages',
  completionWindow: '24h',
  metadata: null,
  status,
  createdMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  expiresMs: Date.UTC(2026, 0, 3, 3, 4, 5, 678),
  inProgressMs: 0,
  finalizingMs: null,
  completedMs: null,
  failedMs: null,
  expiredMs: null,
  cancellingMs: null,
  cancelledMs: null,
  outputFileId: null,
  errorFileId: null,
  errors: null,
  total: 5,
  completed: 2,
  failed: 1,
  retried: 0,
  ending: null,
  ...more,
});

test('the message_batch object: every request processing until it ended, then by outcome; RFC 3339 times; results_url once ended', () => {
  const outcomes = { processing: 0, succeeded: 3, errored: 1, canceled: 1, expired: 0 };
  const running = messageBatchObject(row('in_progress'), outcomes, 'http://gw');
  assert.deepEqual(running.request_counts, { processing: 5, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
  assert.equal(running.results_url, null);
  assert.equal(running.ended_at, null);
  assert.equal(running.created_at, '2026-01-02T03:04:05.678Z');
  assert.equal(running.expires_at, '2026-01-03T03:04:05.678Z');
  const ended = messageBatchObject(
    row('cancelled', { cancellingMs: 10, cancelledMs: Date.UTC(2026, 0, 2, 4) }),
    outcomes,
    'http://gw',
  );
  assert.equal(ended.processing_status, 'ended');
  assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 3, errored: 1, canceled: 1, expired: 0 });
  assert.equal(ended.ended_at, '2026-01-02T04:00:00.000Z');
  assert.equal(ended.cancel_initiated_at, '1970-01-01T00:00:00.010Z');
  assert.equal(ended.results_url, 'http://gw/v1/messages/batches/msgbatch_1/results');
  assert.equal(ended.type, 'message_batch');
  assert.equal(ended.archived_at, null);
});

const line = (more: Partial<LineRow>): LineRow => ({
  batchId: 'msgbatch_1',
  lineNo: 1,
  customId: 'c1',
  model: 'm',
  body: '{}',
  state: 'done',
  retried: false,
  statusCode: 200,
  requestId: 'msgbatch_1-1',
  answer: '{"type":"message","id":"msg_1"}',
  error: null,
  ...more,
});

test('a result line: succeeded with its message; errored with Anthropic’s error response; canceled; expired', () => {
  const cases: [LineRow, unknown][] = [
    [line({}), { custom_id: 'c1', result: { type: 'succeeded', message: { type: 'message', id: 'msg_1' } } }],
    [
      line({ state: 'failed', statusCode: 404, answer: '{"error":{"message":"no model x","type":"invalid_request_error"}}' }),
      {
        custom_id: 'c1',
        result: {
          type: 'errored',
          error: { type: 'error', error: { type: 'not_found_error', message: 'no model x' }, request_id: 'msgbatch_1-1' },
        },
      },
    ],
    [
      line({
        state: 'failed',
        statusCode: 429,
        answer: '{"type":"error","error":{"type":"rate_limit_error","message":"spent"}}',
      }),
      {
        custom_id: 'c1',
        result: {
          type: 'errored',
          error: { type: 'error', error: { type: 'rate_limit_error', message: 'spent' }, request_id: 'msgbatch_1-1' },
        },
      },
    ],
    [
      line({
        state: 'failed',
        statusCode: null,
        answer: null,
        requestId: null,
        error: '{"code":"batch_cancelled","message":"m"}',
      }),
      { custom_id: 'c1', result: { type: 'canceled' } },
    ],
    [
      line({ state: 'failed', statusCode: null, answer: null, requestId: null, error: '{"code":"batch_expired","message":"m"}' }),
      { custom_id: 'c1', result: { type: 'expired' } },
    ],
    [
      line({
        state: 'failed',
        statusCode: null,
        answer: null,
        requestId: null,
        error: '{"code":"answer_too_large","message":"big"}',
      }),
      {
        custom_id: 'c1',
        result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'big' }, request_id: null } },
      },
    ],
  ];
  for (const [given, expected] of cases) assert.deepEqual(JSON.parse(messageResultLine(given)), expected, JSON.stringify(given));
});
