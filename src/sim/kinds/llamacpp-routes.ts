// llama-server's route table, shared by the single server and the router: which paths are
// inference, model lists and health, and the /tokenize answer.

import type { EndpointClass, KindFaultReplies, SimExchange } from '#src/sim/exchange.ts';
import type { InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import { textReply, type Reply } from '#src/sim/reply.ts';
import { tokenId, tokenize } from '#src/sim/tokenizer.ts';
import { llamaError, llamaHealthy, llamaKeyAccepted, llamaLoading, llamaUnauthorized } from '#src/sim/kinds/llamacpp-shapes.ts';

const INFERENCE_PATHS: Readonly<Record<string, InferenceEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/completions': 'completion',
  '/v1/embeddings': 'embeddings',
  '/embeddings': 'embeddings',
  '/v1/responses': 'responses',
  '/responses': 'responses',
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'count_tokens',
  // `handle_count_tokens` (tools/server/server.cpp, server-context.cpp): both with and without `/v1`.
  '/v1/chat/completions/input_tokens': 'chat_tokens',
  '/chat/completions/input_tokens': 'chat_tokens',
  '/v1/responses/input_tokens': 'responses_tokens',
  '/responses/input_tokens': 'responses_tokens',
};

/** `post_control` (in-flight control of a running completion): `/v1` only. */
export const LLAMA_CONTROL_PATH = '/v1/chat/completions/control';

/** llama-server's rerank routes (all four name one handler). */
export const LLAMA_RERANK_PATHS: readonly string[] = ['/rerank', '/reranking', '/v1/rerank', '/v1/reranking'];

export function llamaInferenceEndpoint(method: string, path: string): InferenceEndpoint | undefined {
  return method === 'POST' ? INFERENCE_PATHS[path] : undefined;
}

/** llama-server's transcription routes (build b8784 on: tools/server/server.cpp), a multipart form. */
export const LLAMA_AUDIO_PATHS: readonly string[] = ['/v1/audio/transcriptions', '/audio/transcriptions'];

export function classifyLlamaPath(method: string, path: string): EndpointClass {
  if (
    llamaInferenceEndpoint(method, path) !== undefined ||
    (method === 'POST' && (LLAMA_RERANK_PATHS.includes(path) || LLAMA_AUDIO_PATHS.includes(path) || path === LLAMA_CONTROL_PATH))
  )
    return 'inference';
  if (method === 'GET' && (path === '/v1/models' || path === '/models')) return 'models';
  if (method === 'GET' && (path === '/health' || path === '/v1/health')) return 'health';
  return 'other';
}

/** POST /tokenize: `content` (string, or strings mixed with token ids); `with_pieces` adds pieces. */
export function llamaTokenizeAnswer(body: Readonly<Record<string, unknown>>): { tokens: unknown[] } {
  const content = body['content'];
  const parts: unknown[] = typeof content === 'string' ? [content] : Array.isArray(content) ? content : [];
  const pieces: (string | number)[] = parts.flatMap((part): (string | number)[] =>
    typeof part === 'string' ? tokenize(part) : typeof part === 'number' ? [part] : [],
  );
  if (body['with_pieces'] === true) {
    return {
      tokens: pieces.map((piece) => (typeof piece === 'number' ? { id: piece, piece: '' } : { id: tokenId(piece), piece })),
    };
  }
  return { tokens: pieces.map((piece) => (typeof piece === 'number' ? piece : tokenId(piece))) };
}

export function llamaWebUi(): Reply {
  return textReply(200, '<!doctype html><title>llama.cpp (sim)</title><p>llama-server simulator</p>', {
    Server: 'llama.cpp',
    'Access-Control-Allow-Origin': '',
    'Content-Type': 'text/html; charset=utf-8',
  });
}

/**
 * What llama-server answers the same way single or as a router, before its own routes: a request
 * without the key, the web UI at `/`, and health. Undefined: the request is for the server's own routes.
 */
export function llamaSharedReply(exchange: SimExchange, apiKey: string | undefined): Reply | undefined {
  const { method, path } = exchange;
  if (!llamaKeyAccepted(apiKey, path, exchange.headers)) return llamaUnauthorized();
  if (method !== 'GET') return undefined;
  if (path === '/') return llamaWebUi();
  if (path === '/health' || path === '/v1/health') return llamaHealthy();
  return undefined;
}

/** The fault injector's replies in llama-server's shapes; `emptyModels` is the server's model list without models. */
export function llamaFaultReplies(emptyModels: () => Reply): KindFaultReplies {
  return {
    internalError: () => llamaError(500, 'server_error', 'simulated internal error'),
    healthFailure: llamaLoading,
    emptyModels,
  };
}
