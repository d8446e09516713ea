// The gateway's own errors in the endpoint's dialect: OpenAI's shape on the OpenAI routes,
// Anthropic's (type by status) on /v1/messages and below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError, badRequest, routeNotFound } from '#src/core/errors.ts';
import { anthropicErrorType, errorDialectFor } from '#src/proxy/http/error-dialect.ts';

test('the dialect by path', () => {
  assert.equal(errorDialectFor('/v1/messages').name, 'anthropic-errors');
  assert.equal(errorDialectFor('/v1/messages/count_tokens').name, 'anthropic-errors');
  assert.equal(errorDialectFor('/v1/messagesx').name, 'openai-errors');
  assert.equal(errorDialectFor('/v1/chat/completions').name, 'openai-errors');
});

test('Anthropic error types by status', () => {
  const rows: readonly (readonly [number, string])[] = [
    [400, 'invalid_request_error'], [401, 'authentication_error'], [403, 'permission_error'], [404, 'not_found_error'], [405, 'invalid_request_error'],
    [413, 'request_too_large'], [429, 'rate_limit_error'], [500, 'api_error'], [502, 'api_error'], [503, 'overloaded_error'], [504, 'api_error'], [529, 'overloaded_error'],
  ];
  for (const [status, type] of rows) assert.equal(anthropicErrorType(status), type, String(status));
});

test('the bodies', () => {
  const refused = new GatewayError('GW_QUEUE_REFUSED', 'too many requests are waiting', { status: 429, openaiType: 'rate_limit_error', openaiCode: 'queue_full' });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/messages').body(refused)), { type: 'error', error: { type: 'rate_limit_error', message: 'too many requests are waiting', code: 'queue_full' } });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/messages').body(badRequest('bad'))), { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/completions').body(routeNotFound('GET', '/x'))), {
    error: { message: 'no route for GET /x', type: 'invalid_request_error', param: null, code: 'not_found' },
  });
});
