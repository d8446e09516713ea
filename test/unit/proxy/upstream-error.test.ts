import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpretUpstreamError } from '#src/proxy/upstream-error.ts';

test('each server dialect of "context exceeded" is recognised, with its figures when it gives them', () => {
  const llama = JSON.stringify({ error: { code: 400, message: 'request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 9412, n_ctx: 8192 } });
  assert.deepEqual(interpretUpstreamError(400, llama), {
    kind: 'context_overflow',
    nCtx: 8192,
    promptTokens: 9412,
    message: 'request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it',
  });
  const vllm = JSON.stringify({ error: { message: "This model's maximum context length is 262144 tokens. However, you requested 0 output tokens and your prompt contains at least 262145 input tokens", type: 'BadRequestError', param: 'input_tokens', code: 400 } });
  assert.equal(interpretUpstreamError(400, vllm)?.kind, 'context_overflow');
  assert.equal((interpretUpstreamError(400, vllm) as { nCtx?: number }).nCtx, 262144);
  const sglangFlat = JSON.stringify({ object: 'error', message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).", type: 'BadRequestError', param: null, code: 400 });
  assert.equal((interpretUpstreamError(400, sglangFlat) as { nCtx?: number }).nCtx, 8192);
  const sglangTotal = JSON.stringify({ object: 'error', message: "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 5000 tokens", type: 'BadRequestError', param: null, code: 400 });
  assert.equal((interpretUpstreamError(400, sglangTotal) as { nCtx?: number }).nCtx, 4096);
  const ollama = JSON.stringify({ error: { message: 'the input length exceeds the context length', type: 'invalid_request_error', param: null, code: null } });
  assert.equal(interpretUpstreamError(400, ollama)?.kind, 'context_overflow');
});

test('each server dialect of "model not found" is recognised', () => {
  const bodies: [number, unknown][] = [
    [400, { error: { code: 400, message: "model 'nope' not found", type: 'invalid_request_error' } }],
    [404, { error: { message: 'The model `X` does not exist.', type: 'NotFoundError', param: 'model', code: 404 } }],
    [404, { error: { message: 'model "x" not found, try pulling it first', type: 'not_found_error', param: null, code: null } }],
  ];
  for (const [status, body] of bodies) assert.equal(interpretUpstreamError(status, JSON.stringify(body))?.kind, 'model_not_found', JSON.stringify(body));
});

test('other errors pass through untouched', () => {
  assert.equal(interpretUpstreamError(400, JSON.stringify({ error: { code: 400, message: "'messages' is required", type: 'invalid_request_error' } })), undefined);
  assert.equal(interpretUpstreamError(400, 'not json'), undefined);
  assert.equal(interpretUpstreamError(500, JSON.stringify({ error: { message: 'Context size has been exceeded.' } })), undefined);
  assert.equal(interpretUpstreamError(401, JSON.stringify({ error: { message: 'Invalid API Key' } })), undefined);
});
