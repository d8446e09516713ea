// A node's error answer, in whichever shape the node speaks, → OpenAI's error body.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorBody } from '#src/translate/responses/error-body.ts';

const CASES: readonly { name: string; status: number; body: unknown; error: Record<string, unknown> }[] = [
  {
    name: "OpenAI's own shape passes as it is",
    status: 400,
    body: { error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
    error: { message: 'bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' },
  },
  {
    name: "llama.cpp's numeric code is not a code; its context overflow gets context_length_exceeded",
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
      },
    },
    error: {
      message: 'the request exceeds the available context size, try increasing it',
      type: 'exceed_context_size_error',
      param: null,
      code: 'context_length_exceeded',
    },
  },
  {
    name: "vLLM's flat body: its Python type becomes the status's type",
    status: 400,
    body: {
      object: 'error',
      message: "This model's maximum context length is 8192 tokens.",
      type: 'BadRequestError',
      param: 'input_tokens',
      code: 400,
    },
    error: {
      message: "This model's maximum context length is 8192 tokens.",
      type: 'invalid_request_error',
      param: 'input_tokens',
      code: 'context_length_exceeded',
    },
  },
  {
    name: "Ollama's {error: string}",
    status: 404,
    body: { error: "model 'coder' not found" },
    error: { message: "model 'coder' not found", type: 'invalid_request_error', param: null, code: null },
  },
  {
    name: "a framework's {detail}",
    status: 404,
    body: { detail: 'Not Found' },
    error: { message: 'Not Found', type: 'invalid_request_error', param: null, code: null },
  },
  {
    name: 'no body: the status says what happened',
    status: 503,
    body: undefined,
    error: { message: 'the node answered HTTP 503', type: 'server_error', param: null, code: null },
  },
  {
    name: 'a 401 without a type is an authentication error',
    status: 401,
    body: { error: { message: 'bad key' } },
    error: { message: 'bad key', type: 'authentication_error', param: null, code: null },
  },
  {
    name: 'a 429 without a type is a rate limit error',
    status: 429,
    body: { error: { message: 'slow down' } },
    error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null },
  },
];

for (const { name, status, body, error } of CASES) {
  test(name, () => {
    assert.deepEqual(errorBody(status, body), { error });
  });
}
