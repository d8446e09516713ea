// Ollama's own API surface that the gateway answers itself on its public listener (server/routes.go
// at ollama/ollama 00188139; docs/protocols-endpoints.md, "Ollama's native API"): the listing, the
// loaded models, the version, and the model-changing routes it refuses. Kind knowledge: the paths
// and the version the gateway's routes were checked against live here.

/** The paths the gateway answers from what it knows (GET; `/api/tags` and `/api/version` also HEAD, as Ollama). */
export const OLLAMA_LISTING_PATHS = { tags: '/api/tags', ps: '/api/ps', version: '/api/version' } as const;

/**
 * What `GET /api/version` answers: the Ollama release whose API the gateway's routes were checked
 * against (0.14: the native routes and the Anthropic layer), not any one node's — nodes behind the
 * gateway may run different releases, and a client gating a feature on the version must get what
 * the gateway itself serves.
 */
export const OLLAMA_API_VERSION = '0.14.0';

/**
 * What Ollama answers at `GET /` and `HEAD /` (server/routes.go: 200 `text/plain; charset=utf-8`):
 * the liveness check its clients send (the `ollama` CLI's heartbeat is `HEAD /`).
 */
export const OLLAMA_ROOT = { path: '/', text: 'Ollama is running', contentType: 'text/plain; charset=utf-8' } as const;

/** Ollama's model-changing routes, by method; `*` ends a path with a parameter (`/api/blobs/:digest`). */
export const OLLAMA_MANAGEMENT_ROUTES: readonly (readonly [method: string, path: string])[] = [
  ['POST', '/api/pull'],
  ['POST', '/api/push'],
  ['POST', '/api/create'],
  ['POST', '/api/copy'],
  ['DELETE', '/api/delete'],
  ['POST', '/api/blobs/*'],
  ['HEAD', '/api/blobs/*'],
];
