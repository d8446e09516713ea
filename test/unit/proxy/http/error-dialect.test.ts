// The gateway's own errors in the endpoint's dialect: OpenAI's shape on the OpenAI routes,
// Anthropic's (type by status) on /v1/messages and below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError, badRequest, routeNotFound } from '#src/core/errors.ts';
import { anthropicErrorType, errorDialectFor, OPENAI_RESPONSES_ERRORS } from '#src/proxy/http/error-dialect.ts';

test('the dialect by path', () => {
  assert.equal(errorDialectFor('/v1/messages').name, 'anthropic-errors');
  assert.equal(errorDialectFor('/v1/messages/count_tokens').name, 'anthropic-errors');
  assert.equal(errorDialectFor('/v1/messagesx').name, 'openai-errors');
  assert.equal(errorDialectFor('/v1/chat/completions').name, 'openai-errors');
});

test('Anthropic error types by status', () => {
  const rows: readonly (readonly [number, string])[] = [
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [405, 'invalid_request_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'api_error'],
    [529, 'overloaded_error'],
  ];
  for (const [status, type] of rows) assert.equal(anthropicErrorType(status), type, String(status));
});

test('the bodies', () => {
  const refused = new GatewayError('GW_QUEUE_REFUSED', 'too many requests are waiting', {
    status: 429,
    openaiType: 'rate_limit_error',
    openaiCode: 'queue_full',
  });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/messages').body(refused)), {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'too many requests are waiting', code: 'queue_full' },
  });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/messages').body(badRequest('bad'))), {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'bad' },
  });
  assert.deepEqual(JSON.parse(errorDialectFor('/v1/completions').body(routeNotFound('GET', '/x'))), {
    error: { message: 'no route for GET /x', type: 'invalid_request_error', param: null, code: 'not_found' },
  });
});

test('a node’s own error body passed on is worded in Anthropic’s shape on its routes, and left alone elsewhere', () => {
  const anthropic = errorDialectFor('/v1/messages');
  const rows: readonly (readonly [string, number, string, unknown])[] = [
    [
      'llama-server’s OpenAI-style body',
      400,
      '{"error":{"code":400,"message":"\'messages\' is required","type":"invalid_request_error"}}',
      { type: 'error', error: { type: 'invalid_request_error', message: "'messages' is required" } },
    ],
    [
      'Ollama’s flat error',
      404,
      '{"error":"model \'x\' not found"}',
      { type: 'error', error: { type: 'not_found_error', message: "model 'x' not found" } },
    ],
    [
      'FastAPI’s detail',
      400,
      '{"detail":"bad field"}',
      { type: 'error', error: { type: 'invalid_request_error', message: 'bad field' } },
    ],
    ['plain text', 400, 'nope\n', { type: 'error', error: { type: 'invalid_request_error', message: 'nope' } }],
    ['already Anthropic’s (vLLM, Ollama)', 400, '{"type":"error","error":{"type":"BadRequestError","message":"x"}}', undefined],
  ];
  for (const [what, status, text, expected] of rows) {
    const worded = anthropic.passedOn(status, text);
    assert.deepEqual(worded === undefined ? undefined : JSON.parse(worded), expected, what);
    assert.equal(
      errorDialectFor('/v1/chat/completions').passedOn(status, text),
      undefined,
      `${what}: the OpenAI routes pass it on as it is`,
    );
  }
});

test('Ollama’s native paths: {"error": "..."} with the status, an unknown model worded as Ollama words it', () => {
  const ollama = errorDialectFor('/api/chat');
  assert.equal(ollama.name, 'ollama-errors');
  assert.equal(errorDialectFor('/api/tags').name, 'ollama-errors');
  assert.equal(errorDialectFor('/apix').name, 'openai-errors');
  assert.deepEqual(JSON.parse(ollama.body(badRequest('bad'))), { error: 'bad' });
  const unknown = new GatewayError('GW_MODEL_NOT_FOUND', "The model 'mistral' does not exist: no node serves it.", {
    status: 404,
    openaiType: 'invalid_request_error',
    openaiCode: 'model_not_found',
    model: 'mistral',
    details: { closest_models: [] },
  });
  assert.deepEqual(JSON.parse(ollama.body(unknown)), {
    error: "model 'mistral' not found",
    code: 'model_not_found',
    closest_models: [],
  });
  const rows: readonly (readonly [string, string, unknown])[] = [
    ['already Ollama’s', '{"error":"model \'x\' not found"}', undefined],
    ['OpenAI-style', '{"error":{"message":"bad field","type":"invalid_request_error"}}', { error: 'bad field' }],
    ['FastAPI’s detail', '{"detail":"Not Found"}', { error: 'Not Found' }],
    ['plain text', '404 page not found\n', { error: '404 page not found' }],
  ];
  for (const [what, text, expected] of rows) {
    const worded = ollama.passedOn(400, text);
    assert.deepEqual(worded === undefined ? undefined : JSON.parse(worded), expected, what);
  }
});

test('a broken stream’s terminal event in each dialect: what each API’s clients raise on', () => {
  assert.equal(errorDialectFor('/v1/responses'), OPENAI_RESPONSES_ERRORS);
  assert.equal(errorDialectFor('/v1/responses').name, 'openai-errors', 'its error bodies are OpenAI’s');
  const chat = errorDialectFor('/v1/chat/completions').streamError('cut', 'sse');
  assert.equal(chat, 'data: {"error":{"message":"cut","type":"server_error","param":null,"code":"upstream_stream_broken"}}\n\n');
  assert.equal(
    errorDialectFor('/v1/responses').streamError('cut', 'sse'),
    'event: response.failed\ndata: {"type":"response.failed","response":{"object":"response","status":"failed","error":{"code":"server_error","message":"cut"}}}\n\n' +
      'event: error\ndata: {"type":"error","code":"upstream_stream_broken","message":"cut","param":null}\n\n',
  );
  assert.equal(
    errorDialectFor('/v1/messages').streamError('cut', 'sse'),
    'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"cut"}}\n\n',
  );
  assert.equal(errorDialectFor('/api/chat').streamError('cut', 'ndjson'), '{"error":"cut"}\n');
  assert.equal(errorDialectFor('/api/generate').streamError('cut', 'ndjson'), '{"error":"cut"}\n');
});
