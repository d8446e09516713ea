import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverKind, serverKinds, type RefusalMeaning } from '#src/kinds/index.ts';
import type { NodeKind } from '#src/config/types.ts';
import { interpretUpstreamError } from '#src/proxy/attempt/upstream-error.ts';

/** One documented refusal per dialect (PROTOCOLS.md §6.1): the kind that speaks it, and its meaning. */
const REFUSALS: readonly { speaker: NodeKind; status: number; body: unknown; meaning: RefusalMeaning }[] = [
  {
    speaker: 'llamacpp',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 9412,
        n_ctx: 8192,
      },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 8192,
      promptTokens: 9412,
      message: 'request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it',
    },
  },
  {
    speaker: 'llamacpp',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'input (9000 tokens) is larger than the max context size (8192 tokens). skipping',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 9000,
        n_ctx: 8192,
      },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 8192,
      promptTokens: 9000,
      message: 'input (9000 tokens) is larger than the max context size (8192 tokens). skipping',
    },
  },
  {
    speaker: 'vllm',
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 262144 tokens. However, you requested 0 output tokens and your prompt contains at least 262145 input tokens",
        type: 'BadRequestError',
        param: 'input_tokens',
        code: 400,
      },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 262144,
      promptTokens: undefined,
      message:
        "This model's maximum context length is 262144 tokens. However, you requested 0 output tokens and your prompt contains at least 262145 input tokens",
    },
  },
  {
    speaker: 'vllm',
    status: 400,
    body: {
      error: {
        message: 'The decoder prompt (length 9000) is longer than the maximum model length of 8192.',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: undefined,
      promptTokens: undefined,
      message: 'The decoder prompt (length 9000) is longer than the maximum model length of 8192.',
    },
  },
  {
    speaker: 'sglang',
    status: 400,
    body: {
      object: 'error',
      message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 8192,
      promptTokens: undefined,
      message: "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
    },
  },
  {
    speaker: 'sglang',
    status: 400,
    body: {
      object: 'error',
      message:
        "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 5000 tokens",
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 4096,
      promptTokens: undefined,
      message:
        "Requested token count exceeds the model's maximum context length of 4096 tokens. You requested a total of 5000 tokens",
    },
  },
  {
    speaker: 'ollama',
    status: 400,
    body: {
      error: { message: 'the input length exceeds the context length', type: 'invalid_request_error', param: null, code: null },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: undefined,
      promptTokens: undefined,
      message: 'the input length exceeds the context length',
    },
  },
  {
    speaker: 'openai',
    status: 400,
    body: {
      error: {
        message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
    meaning: {
      kind: 'context_overflow',
      nCtx: 8192,
      promptTokens: undefined,
      message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
    },
  },
  {
    speaker: 'llamacpp',
    status: 400,
    body: { error: { code: 400, message: "model 'nope' not found", type: 'invalid_request_error' } },
    meaning: { kind: 'model_not_found', message: "model 'nope' not found" },
  },
  {
    speaker: 'vllm',
    status: 404,
    body: { error: { message: 'The model `X` does not exist.', type: 'NotFoundError', param: 'model', code: 404 } },
    meaning: { kind: 'model_not_found', message: 'The model `X` does not exist.' },
  },
  {
    speaker: 'sglang',
    status: 404,
    body: {
      error: { message: "The model 'X' does not exist", type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    },
    meaning: { kind: 'model_not_found', message: "The model 'X' does not exist" },
  },
  {
    speaker: 'ollama',
    status: 404,
    body: { error: { message: 'model "x" not found, try pulling it first', type: 'not_found_error', param: null, code: null } },
    meaning: { kind: 'model_not_found', message: 'model "x" not found, try pulling it first' },
  },
  {
    // Its native API (/api/chat, /api/generate, /api/show): a flat string error.
    speaker: 'ollama',
    status: 404,
    body: { error: "model 'x' not found" },
    meaning: { kind: 'model_not_found', message: "model 'x' not found" },
  },
  {
    speaker: 'openai',
    status: 404,
    body: {
      error: {
        message: 'The model `gpt-xyz` does not exist or you do not have access to it.',
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      },
    },
    meaning: { kind: 'model_not_found', message: 'The model `gpt-xyz` does not exist or you do not have access to it.' },
  },
];

test('each kind recognises its own dialect of "context exceeded" and "model not found", with its figures', () => {
  for (const { speaker, status, body, meaning } of REFUSALS) {
    assert.deepEqual(serverKind(speaker).refusal(status, body), meaning, `${speaker}: ${JSON.stringify(body)}`);
  }
});

test('auto, and so the gateway for every node, recognises every dialect the same way', () => {
  for (const { status, body, meaning } of REFUSALS) {
    assert.deepEqual(serverKind('auto').refusal(status, body), meaning, JSON.stringify(body));
    assert.deepEqual(interpretUpstreamError(status, JSON.stringify(body)), meaning, JSON.stringify(body));
  }
});

test('an overflow wins over a "not found" when one message reads as both', () => {
  const both = { error: { message: "model 'x' not found: maximum context length is 10", type: 'invalid_request_error' } };
  assert.deepEqual(serverKind('auto').refusal(400, both), {
    kind: 'context_overflow',
    nCtx: 10,
    promptTokens: undefined,
    message: both.error.message,
  });
});

test('other errors pass through untouched, in every dialect', () => {
  const others: [number, string][] = [
    [400, JSON.stringify({ error: { code: 400, message: "'messages' is required", type: 'invalid_request_error' } })],
    [400, 'not json'],
    [500, JSON.stringify({ error: { message: 'Context size has been exceeded.' } })],
    [401, JSON.stringify({ error: { message: 'Invalid API Key' } })],
    // "does not exist" alone is a "not found" only with a 404 or a message saying so.
    [400, JSON.stringify({ error: { message: 'The model `X` does not exist.' } })],
  ];
  for (const [status, text] of others) {
    assert.equal(interpretUpstreamError(status, text), undefined, text);
    const body: unknown = text === 'not json' ? text : JSON.parse(text);
    for (const kind of serverKinds()) assert.equal(kind.refusal(status, body), undefined, `${kind.name}: ${text}`);
  }
});

test('a plain OpenAI-compatible server may front any kind: its refusals are read in every dialect', () => {
  for (const { status, body, meaning } of REFUSALS)
    assert.deepEqual(serverKind('openai').refusal(status, body), meaning, JSON.stringify(body));
});
