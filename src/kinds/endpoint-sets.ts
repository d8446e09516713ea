// The endpoint sets the kinds declare (docs/protocols-endpoints.md: from which sources and versions).

import { INFERENCE_ENDPOINTS, OLLAMA_NATIVE_ENDPOINTS, OPENAI_ENDPOINTS, type InferenceEndpoint } from '#src/config/index.ts';

/**
 * Every endpoint the gateway routes but Ollama's native `/api/*`: what current llama-server, vLLM
 * and SGLang releases serve (an older one answers a route-level 404, and is recorded as lacking it).
 * `auto` assumes it too.
 */
export const ALL_ENDPOINTS: readonly InferenceEndpoint[] = INFERENCE_ENDPOINTS.filter((e) => !OLLAMA_NATIVE_ENDPOINTS.includes(e));

/** What Ollama serves: the shared surface and its own native API (`/api/chat`, `/api/generate`, …). */
export const OLLAMA_ENDPOINTS: readonly InferenceEndpoint[] = INFERENCE_ENDPOINTS;

/** The plain OpenAI surface (any OpenAI-compatible server, unless `[[nodes]] endpoints` says otherwise). */
export const OPENAI_SURFACE: readonly InferenceEndpoint[] = OPENAI_ENDPOINTS;
