// The inference endpoints the gateway routes, by their request path: the one list the public
// table serves, config validates (`[[nodes]] endpoints`), the kinds declare and routing filters on.
// A path is its own endpoint: a server may serve one and not another.

export const INFERENCE_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/messages',
  '/v1/messages/count_tokens',
  // The OpenAI-style counts of a chat completions or Responses body (llama-server: `{"input_tokens": N, "object": "response.input_tokens"}`).
  '/v1/chat/completions/input_tokens',
  '/v1/responses/input_tokens',
  // Rerank and score (docs/protocols-endpoints.md: who serves which path).
  '/v1/rerank',
  '/rerank',
  '/v2/rerank',
  // llama-server's other two names for its rerank route (tools/server/server.cpp).
  '/reranking',
  '/v1/reranking',
  '/v1/score',
  '/score',
  // Audio: transcriptions and translations are multipart/form-data (MULTIPART_ENDPOINTS); speech is JSON.
  '/v1/audio/transcriptions',
  '/v1/audio/translations',
  '/v1/audio/speech',
  // Ollama's native API (Ollama nodes only: src/kinds/endpoint-sets.ts).
  '/api/chat',
  '/api/generate',
  '/api/embed',
  '/api/embeddings',
  '/api/show',
] as const;

export type InferenceEndpoint = (typeof INFERENCE_ENDPOINTS)[number];

/** The OpenAI four: what current llama-server, vLLM, SGLang and Ollama releases serve (a `kind = "openai"` node is assumed the first three: src/kinds/endpoint-sets.ts). */
export const OPENAI_ENDPOINTS: readonly InferenceEndpoint[] = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
];

/** Ollama's native inference routes: only Ollama serves them. */
export const OLLAMA_NATIVE_ENDPOINTS: readonly InferenceEndpoint[] = [
  '/api/chat',
  '/api/generate',
  '/api/embed',
  '/api/embeddings',
  '/api/show',
];

export function isInferenceEndpoint(path: string): path is InferenceEndpoint {
  return (INFERENCE_ENDPOINTS as readonly string[]).includes(path);
}

/**
 * Whether the endpoint only counts the prompt (`/v1/messages/count_tokens`): it generates nothing,
 * so the context guard never refuses it (counting a prompt that is too long is how a client learns
 * it is), and it holds no context budget while in flight.
 */
export function countsOnly(endpoint: InferenceEndpoint): boolean {
  // `/api/show` generates nothing either: it describes the model.
  return endpoint === '/api/show' || COUNTED_AS[endpoint] !== undefined;
}

/** The token counts, each with the generating endpoint whose body it counts. */
export const COUNTED_AS: Readonly<Partial<Record<string, InferenceEndpoint>>> = Object.freeze({
  '/v1/messages/count_tokens': '/v1/messages',
  '/v1/chat/completions/input_tokens': '/v1/chat/completions',
  '/v1/responses/input_tokens': '/v1/responses',
});

/** Rerank (a query against documents) and score (text pairs): each pair is one sequence to the model. */
export const RERANK_ENDPOINTS: readonly InferenceEndpoint[] = [
  '/v1/rerank',
  '/rerank',
  '/v2/rerank',
  '/reranking',
  '/v1/reranking',
];
export const SCORE_ENDPOINTS: readonly InferenceEndpoint[] = ['/v1/score', '/score'];

export function isRerankOrScoreEndpoint(path: string): boolean {
  return (RERANK_ENDPOINTS as readonly string[]).includes(path) || (SCORE_ENDPOINTS as readonly string[]).includes(path);
}

/** The endpoints whose body is multipart/form-data (an audio file and form fields), not JSON. */
export const MULTIPART_ENDPOINTS: readonly InferenceEndpoint[] = ['/v1/audio/transcriptions', '/v1/audio/translations'];

export function takesMultipart(endpoint: InferenceEndpoint): boolean {
  return MULTIPART_ENDPOINTS.includes(endpoint);
}

/**
 * Whether a 2xx answer may be other media than JSON or an event stream: a transcript as text, SRT
 * or VTT (`response_format`), speech as audio bytes. Such an answer streams through as it comes.
 */
export function answersMedia(endpoint: string): boolean {
  return endpoint.startsWith('/v1/audio/');
}

/** Anthropic's Messages API paths (`/v1/messages` and everything under it): their errors are Anthropic's shape. */
export function isAnthropicPath(pathname: string): boolean {
  return pathname === '/v1/messages' || pathname.startsWith('/v1/messages/');
}

/** Ollama's native API paths (`/api/*`): their errors are Ollama's shape, `{"error": "..."}`. */
export function isOllamaPath(pathname: string): boolean {
  return pathname === '/api' || pathname.startsWith('/api/');
}

/** What the predicates above say of one inference endpoint, resolved once (ENDPOINT_TRAITS). */
export interface EndpointTraits {
  readonly countsOnly: boolean;
  readonly takesMultipart: boolean;
  readonly answersMedia: boolean;
  readonly anthropic: boolean;
  readonly ollama: boolean;
}

/**
 * Every inference endpoint's traits, built once from the predicates: a request reads a field, it runs none.
 * No prototype: a path that is no inference endpoint reads undefined (TRAITS_BY_PATH).
 */
export const ENDPOINT_TRAITS: Readonly<Record<InferenceEndpoint, EndpointTraits>> = Object.freeze(
  Object.assign(
    Object.create(null) as object,
    Object.fromEntries(
      INFERENCE_ENDPOINTS.map((endpoint): [InferenceEndpoint, EndpointTraits] => [
        endpoint,
        Object.freeze({
          countsOnly: countsOnly(endpoint),
          takesMultipart: takesMultipart(endpoint),
          answersMedia: answersMedia(endpoint),
          anthropic: isAnthropicPath(endpoint),
          ollama: isOllamaPath(endpoint),
        }),
      ]),
    ),
  ),
) as Record<InferenceEndpoint, EndpointTraits>;

/** The same table, read by any path: undefined for one that is no inference endpoint. */
export const TRAITS_BY_PATH: Readonly<Partial<Record<string, EndpointTraits>>> = ENDPOINT_TRAITS;
