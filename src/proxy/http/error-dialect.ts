// How the gateway's own errors are worded, by the endpoint asked: OpenAI's shape on the OpenAI
// routes, Anthropic's on the Messages routes, so a client never reads another dialect's error body.
// One small interface; the writer (openai-error.ts's sendError) takes the dialect, the handlers
// pick it once per request with `errorDialectFor(path)`.

import type { GatewayError } from '#src/core/errors.ts';
import { TRAITS_BY_PATH, isAnthropicPath, isOllamaPath } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import { anthropicErrorType } from '#src/translate/messages/error-shape.ts';

export interface ErrorDialect {
  readonly name: 'openai-errors' | 'anthropic-errors' | 'ollama-errors';
  /** The JSON body of `error`'s answer. */
  body(error: GatewayError): string;
  /**
   * A node's own error body (a 400/404 the gateway passes on), in this dialect's shape, keeping its
   * status and message; undefined = pass it on as it is (already this dialect's, or OpenAI's own routes).
   */
  passedOn(status: number, text: string): string | undefined;
}

export const OPENAI_ERRORS: ErrorDialect = {
  name: 'openai-errors',
  body: (error) =>
    JSON.stringify({
      error: {
        message: error.message,
        type: error.openaiType,
        param: error.param,
        code: error.openaiCode,
        ...error.details,
      },
    }),
  passedOn: () => undefined,
};

/** Anthropic's error types by status: one table, with Anthropic's error shape (translate/messages/error-shape.ts). */
export { anthropicErrorType };

/** `{"type":"error","error":{"type","message",…}}`; the gateway's stable code and details ride along inside `error`. */
export const ANTHROPIC_ERRORS: ErrorDialect = {
  name: 'anthropic-errors',
  body: (error) =>
    JSON.stringify({
      type: 'error',
      error: {
        type: anthropicErrorType(error.status),
        message: error.message,
        ...(error.openaiCode === null ? {} : { code: error.openaiCode }),
        ...error.details,
      },
    }),
  passedOn: (status, text) => {
    const said = nodeMessage(text);
    return said === undefined
      ? undefined
      : JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message: said } });
  },
};

/**
 * What a node's error body says, to be worded in Anthropic's shape: undefined when it already is
 * Anthropic's (`{"type":"error","error":{"type":…}}`, as vLLM and Ollama answer on these routes).
 */
function nodeMessage(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 2000);
  }
  if (!isRecord(body)) return text.trim().slice(0, 2000);
  const error = body.error;
  if (body.type === 'error' && isRecord(error) && typeof error.type === 'string') return undefined;
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  if (typeof error === 'string') return error;
  if (typeof body.message === 'string') return body.message;
  if (typeof body.detail === 'string') return body.detail;
  return text.trim().slice(0, 2000);
}

/**
 * Ollama's native API: `{"error": "..."}` (server/routes.go writes `gin.H{"error": msg}`), with the
 * status kept. A model no node serves is worded as Ollama words it, `model 'x' not found`; the
 * gateway's stable code and details ride along next to `error` (the `ollama` clients read `error` only).
 */
export const OLLAMA_ERRORS: ErrorDialect = {
  name: 'ollama-errors',
  body: (error) =>
    JSON.stringify({
      error:
        error.openaiCode === 'model_not_found' && error.model !== undefined ? `model '${error.model}' not found` : error.message,
      ...(error.openaiCode === null ? {} : { code: error.openaiCode }),
      ...error.details,
    }),
  passedOn: (_status, text) => {
    const said = ollamaMessage(text);
    return said === undefined ? undefined : JSON.stringify({ error: said });
  },
};

/** What a node's error body says, to be worded in Ollama's shape: undefined when it already is (`{"error": "..."}`). */
function ollamaMessage(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 2000);
  }
  if (isRecord(body) && typeof body.error === 'string') return undefined;
  if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
  if (isRecord(body) && typeof body.detail === 'string') return body.detail;
  return text.trim().slice(0, 2000);
}

export function errorDialectFor(pathname: string): ErrorDialect {
  // An inference endpoint's traits were resolved once; any other path is judged by the predicates.
  const traits = TRAITS_BY_PATH[pathname];
  if (traits?.ollama ?? isOllamaPath(pathname)) return OLLAMA_ERRORS;
  return (traits?.anthropic ?? isAnthropicPath(pathname)) ? ANTHROPIC_ERRORS : OPENAI_ERRORS;
}
