// A node's error answer → OpenAI's error body `{error: {message, type, param, code}}`, whatever
// shape the node used: OpenAI's own, llama.cpp's (numeric `code`), vLLM's flat `{object: "error",
// message, type, code}`, Ollama's `{error: "…"}`, a framework's `{detail: …}`, or nothing. A prompt
// longer than the model's context gets `code: "context_length_exceeded"` (what Codex and the SDKs
// recognise) when the node did not say so in a string code.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject } from '#src/translate/translation.ts';

/** OpenAI's error type for an HTTP status. */
function typeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

const CONTEXT_OVERFLOW = /context length|context window|context size|maximum context|exceeds? the available context/i;

function detailText(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const texts = detail.flatMap((entry) => (isRecord(entry) && typeof entry['msg'] === 'string' ? [entry['msg']] : []));
    return texts.length > 0 ? texts.join('; ') : undefined;
  }
  return undefined;
}

export function errorBody(status: number, nodeBody: unknown): JsonObject {
  const outer = isRecord(nodeBody) ? nodeBody : {};
  const inner = isRecord(outer['error']) ? outer['error'] : outer;
  const message =
    (typeof inner['message'] === 'string' && inner['message'] !== '' ? inner['message'] : undefined) ??
    (typeof outer['error'] === 'string' && outer['error'] !== '' ? outer['error'] : undefined) ??
    detailText(outer['detail']) ??
    (typeof nodeBody === 'string' && nodeBody !== '' ? nodeBody : undefined) ??
    `the node answered HTTP ${status}`;
  const nodeType = inner['type'];
  // vLLM's types are Python exception names (BadRequestError): OpenAI's clients read snake_case types.
  const type = typeof nodeType === 'string' && /^[a-z_]+$/.test(nodeType) ? nodeType : typeForStatus(status);
  const stringCode = typeof inner['code'] === 'string' ? inner['code'] : null;
  const code = stringCode ?? (CONTEXT_OVERFLOW.test(message) ? 'context_length_exceeded' : null);
  const param = typeof inner['param'] === 'string' ? inner['param'] : null;
  return { error: { message, type, param, code } };
}
