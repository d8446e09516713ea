// The endpoint sets the kinds declare (docs/protocols-endpoints.md: from which sources and versions).

import { INFERENCE_ENDPOINTS, OLLAMA_NATIVE_ENDPOINTS, OPENAI_ENDPOINTS, type InferenceEndpoint } from '#src/config/index.ts';

/**
 * Every endpoint the gateway routes but Ollama's native `/api/*`. `auto` assumes it (a route-level
 * 404 teaches it otherwise); Ollama-native requests go only to nodes known to be Ollama.
 */
export const ALL_ENDPOINTS: readonly InferenceEndpoint[] = INFERENCE_ENDPOINTS.filter(
  (e) => !OLLAMA_NATIVE_ENDPOINTS.includes(e),
);

/**
 * The plain OpenAI surface any OpenAI-compatible server serves (unless `[[nodes]] endpoints` says
 * otherwise): chat completions, completions, embeddings. Not `/v1/responses`: a generic server (TGI,
 * a LiteLLM-style proxy, older LM Studio) often lacks it, and the gateway serves it over chat
 * completions there (issue 40) — assuming it would send every such node one Responses request
 * first, to learn its 404. A server that does speak it says so in `[[nodes]] endpoints`.
 */
export const OPENAI_SURFACE: readonly InferenceEndpoint[] = OPENAI_ENDPOINTS.filter((e) => e !== '/v1/responses');

/** The OpenAI four and Anthropic's Messages: what current llama-server, vLLM, SGLang and Ollama releases all serve. */
const CHAT_SURFACE: readonly InferenceEndpoint[] = [...OPENAI_ENDPOINTS, '/v1/messages', '/v1/messages/count_tokens'];

/** llama-server (single and router): the `input_tokens` counts, rerank at `/rerank`, `/reranking`, `/v1/rerank` and `/v1/reranking`, transcriptions (no score, translations or speech). */
export const LLAMACPP_ENDPOINTS: readonly InferenceEndpoint[] = [
  ...CHAT_SURFACE,
  // Its OpenAI-style counts (tools/server/server.cpp: `post_chat_completions_tok`, `post_responses_tok_oai`).
  '/v1/chat/completions/input_tokens',
  '/v1/responses/input_tokens',
  '/v1/rerank',
  '/rerank',
  '/reranking',
  '/v1/reranking',
  '/v1/audio/transcriptions',
];

/** vLLM: rerank at all three paths, score at both, transcriptions and translations (Whisper models); no speech. */
export const VLLM_ENDPOINTS: readonly InferenceEndpoint[] = [
  ...CHAT_SURFACE,
  '/v1/rerank',
  '/rerank',
  '/v2/rerank',
  '/v1/score',
  '/score',
  '/v1/audio/transcriptions',
  '/v1/audio/translations',
];

/** SGLang: rerank at `/v1/rerank` (its own answer shape); no score route of the OpenAI family, no audio. */
export const SGLANG_ENDPOINTS: readonly InferenceEndpoint[] = [...CHAT_SURFACE, '/v1/rerank'];

/** Ollama: no rerank, score or audio routes; its own native API (`/api/chat`, `/api/generate`, …). */
export const OLLAMA_ENDPOINTS: readonly InferenceEndpoint[] = [...CHAT_SURFACE, ...OLLAMA_NATIVE_ENDPOINTS];
