// Anthropic's error shape, `{"type":"error","error":{"type","message"}}`, with the type its API
// gives each status. One table for the gateway's own errors on the Messages routes
// (proxy/http/error-dialect.ts) and for a node's error answer translated from Chat Completions.

import { isRecord } from '#src/core/is-record.ts';

/**
 * Anthropic's error types by status (its API's own table): 400 invalid_request_error, 401
 * authentication_error, 403 permission_error, 404 not_found_error, 413 request_too_large, 429
 * rate_limit_error, 503/529 overloaded_error, any other 5xx api_error.
 */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function anthropicError(status: number, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

/** Longest node error message carried (a node may echo the whole prompt). */
const MAX_MESSAGE_CHARS = 2000;

/** What a Chat Completions node's error body says: OpenAI's `error.message`, a bare `error`, FastAPI's `detail`, or the text. */
export function nodeErrorMessage(status: number, body: unknown): string {
  const said = messageIn(body);
  return (said ?? `the node answered ${status}`).slice(0, MAX_MESSAGE_CHARS);
}

function messageIn(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() === '' ? undefined : body.trim();
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  if (typeof body.message === 'string') return body.message;
  if (typeof body.detail === 'string') return body.detail;
  if (Array.isArray(body.detail)) return JSON.stringify(body.detail);
  return undefined;
}
