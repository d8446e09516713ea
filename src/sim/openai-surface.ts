// What the OpenAI-compatible servers (vLLM, Ollama, SGLang) share on their inference endpoints: the
// routes (with Anthropic's Messages API) and the request fields that cap an answer's tokens. Each
// kind takes what it serves of these; llama-server's own tables (llamacpp-routes.ts,
// llamacpp-dialect.ts) add its unprefixed routes and `n_predict`.

import type { InferenceEndpoint } from '#src/sim/inference-dialect.ts';

/** The inference routes vLLM and Ollama serve (SGLang: the first four). */
export const OPENAI_INFERENCE_PATHS: Readonly<Record<string, InferenceEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'count_tokens',
};

/** The fields that cap an answer's tokens, per endpoint, most specific first. */
export const OPENAI_MAX_TOKEN_FIELDS: Readonly<Record<InferenceEndpoint, readonly string[]>> = {
  chat: ['max_completion_tokens', 'max_tokens'],
  completion: ['max_tokens'],
  embeddings: [],
  responses: ['max_output_tokens'],
  messages: ['max_tokens'],
  count_tokens: [],
  chat_tokens: [],
  responses_tokens: [],
};
