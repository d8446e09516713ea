// routeMissing: a route-level "no such endpoint" as each server's HTTP layer words it, told apart
// from a refusal of the request (an unknown model is a 404 too on vLLM and Ollama).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeMissing, servedEndpoints } from '#src/kinds/index.ts';
import { INFERENCE_ENDPOINTS, OLLAMA_NATIVE_ENDPOINTS, OPENAI_ENDPOINTS } from '#src/config/index.ts';
import { interpretUpstreamError } from '#src/proxy/attempt/upstream-error.ts';

test('route-level 404s and 405s are recognised; model refusals are not', () => {
  const rows: readonly (readonly [string, number, string, boolean])[] = [
    ['FastAPI (vLLM, SGLang)', 404, '{"detail":"Not Found"}', true],
    ['FastAPI, a path served for other methods', 405, '{"detail":"Method Not Allowed"}', true],
    ['llama-server', 404, '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}', true],
    ['Go’s mux (Ollama)', 404, '404 page not found', true],
    ['an empty 404', 404, '', true],
    [
      'another gateway without the route',
      404,
      '{"error":{"message":"no route for POST /v1/messages","type":"invalid_request_error","param":null,"code":"not_found"}}',
      true,
    ],
    [
      'vLLM: unknown model',
      404,
      '{"error":{"message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}}',
      false,
    ],
    ['Ollama: unknown model', 404, '{"error":"model \\"x\\" not found, try pulling it first"}', false],
    ['a 400 is never a missing route', 400, '{"detail":"Not Found"}', false],
    ['an HTML 404 page of a proxy', 404, '<html><body>nginx</body></html>', false],
  ];
  for (const [what, status, body, expected] of rows) assert.equal(routeMissing(status, body), expected, what);
});

test('the request path reads a route-level 404 as endpoint_missing, and an unknown model as model_not_found', () => {
  assert.deepEqual(interpretUpstreamError(404, '{"detail":"Not Found"}'), {
    kind: 'endpoint_missing',
    message: '404 {"detail":"Not Found"}',
  });
  assert.deepEqual(interpretUpstreamError(404, '404 page not found\n'), {
    kind: 'endpoint_missing',
    message: '404 404 page not found',
  });
  assert.equal(
    interpretUpstreamError(404, '{"error":{"message":"The model `x` does not exist.","type":"NotFoundError","code":404}}')?.kind,
    'model_not_found',
  );
  assert.equal(interpretUpstreamError(405, '{"detail":"Method Not Allowed"}')?.kind, 'endpoint_missing');
});

test('each kind declares its endpoints; a configured list replaces them', () => {
  assert.deepEqual(
    servedEndpoints({ kind: 'auto' }),
    INFERENCE_ENDPOINTS.filter((e) => !OLLAMA_NATIVE_ENDPOINTS.includes(e)),
  );
  const chat = [...OPENAI_ENDPOINTS, '/v1/messages', '/v1/messages/count_tokens'];
  // Ollama's native /api/* is Ollama's alone.
  assert.deepEqual(servedEndpoints({ kind: 'ollama' }), [...chat, ...OLLAMA_NATIVE_ENDPOINTS]);
  assert.deepEqual(servedEndpoints({ kind: 'sglang' }), [...chat, '/v1/rerank']);
  assert.deepEqual(servedEndpoints({ kind: 'llamacpp' }), [
    ...chat,
    '/v1/chat/completions/input_tokens',
    '/v1/responses/input_tokens',
    '/v1/rerank',
    '/rerank',
    '/reranking',
    '/v1/reranking',
    '/v1/audio/transcriptions',
  ]);
  assert.deepEqual(servedEndpoints({ kind: 'vllm' }), [
    ...chat,
    '/v1/rerank',
    '/rerank',
    '/v2/rerank',
    '/v1/score',
    '/score',
    '/v1/audio/transcriptions',
    '/v1/audio/translations',
  ]);
  // A generic OpenAI-compatible server is not assumed to speak /v1/responses (issue 40: it is served over chat there).
  assert.deepEqual(servedEndpoints({ kind: 'openai' }), ['/v1/chat/completions', '/v1/completions', '/v1/embeddings']);
  assert.deepEqual(servedEndpoints({ kind: 'vllm', endpoints: ['/v1/messages'] }), ['/v1/messages']);
});
