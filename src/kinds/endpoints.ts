// Which inference endpoints each kind of server serves, read from the servers' own route tables
// (docs/protocols-endpoints.md names the files and versions). A kind declares what its current
// release serves; an older server that answers an endpoint's request with a route-level 404 is
// recorded as lacking it (see `routeMissing`), and `[[nodes]] endpoints` replaces the set outright.

import type { InferenceEndpoint, NodeSpec } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import { serverKind } from './registry.ts';
import { kindOfNode, type ServerFacts } from './server-facts.ts';

/**
 * What `spec` serves: its configured `endpoints`, else its kind's — for a `kind = "auto"` node whose
 * answers showed its kind (`facts.detected`), that kind's (an Ollama found so serves `/api/*`). Pure.
 */
export function servedEndpoints(spec: Pick<NodeSpec, 'kind' | 'endpoints'>, facts?: ServerFacts): readonly InferenceEndpoint[] {
  return spec.endpoints ?? serverKind(kindOfNode(spec.kind, facts)).endpoints;
}

/**
 * Whether an error answer (status, body text) is a route-level "no such endpoint", as each server's
 * HTTP layer words it — not a refusal of the request (an unknown model is a 404 too on vLLM and
 * Ollama, with a message naming the model): FastAPI's `{"detail":"Not Found"}` (vLLM, SGLang), a
 * llama-server's `{"error":{"message":"File Not Found","type":"not_found_error"}}`, Go's
 * `404 page not found` (Ollama), a 405 for a path served only for other methods, an empty 404, and
 * another gateway's `no route for POST …`. Pure.
 */
export function routeMissing(status: number, bodyText: string): boolean {
  if (status !== 404 && status !== 405) return false;
  const text = bodyText.trim();
  if (text === '' || /^404 page not found$/i.test(text) || /^(404 )?not found$/i.test(text)) return true;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (!isRecord(body)) return false;
  if (typeof body.detail === 'string') return /^(Not Found|Method Not Allowed)$/i.test(body.detail);
  const error = isRecord(body.error) ? body.error : undefined;
  const message = typeof error?.message === 'string' ? error.message : '';
  return (
    message === 'File Not Found' ||
    /^no route for [A-Z]+ \//.test(message) ||
    (status === 405 && /method .* not allowed/i.test(message))
  );
}
