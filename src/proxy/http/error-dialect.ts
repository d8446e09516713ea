// How the gateway's own errors are worded, by the endpoint asked: OpenAI's shape on the OpenAI
// routes, Anthropic's on the Messages routes, so a client never reads another dialect's error body.
// One small interface; the writer (openai-error.ts's sendError) takes the dialect, the handlers
// pick it once per request with `errorDialectFor(path)`. The same dialect ends a stream that broke
// after the client had bytes with the terminal error event its clients read (`streamError`).

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
  /**
   * The terminal event of a stream that broke after the client had bytes (`message`: why), as this
   * API's clients read it: SSE events (`sse`), or one NDJSON line (`ndjson`, Ollama's native streams).
   */
  streamError(message: string, framing: StreamFraming): string;
}

/** How a streamed answer is framed: server-sent events, or one JSON object a line. */
export type StreamFraming = 'sse' | 'ndjson';

/** The code a broken stream's OpenAI-shaped error carries. */
export const STREAM_BROKEN_CODE = 'upstream_stream_broken';

/** OpenAI's error object for a stream broken off (the shape llama.cpp and vLLM send inside a stream too). */
function openaiStreamError(message: string): string {
  return JSON.stringify({ error: { message, type: 'server_error', param: null, code: STREAM_BROKEN_CODE } });
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
  // `data: {"error":{…}}` (llama.cpp's own, vLLM's; the openai SDK raises an APIError on it), never followed by [DONE].
  streamError: (message, framing) =>
    framing === 'sse' ? `data: ${openaiStreamError(message)}\n\n` : `${openaiStreamError(message)}\n`,
};

/**
 * The Responses API (OpenAI's errors otherwise): a broken stream ends with `response.failed` (its
 * response `failed`, with `error` — what Codex reads) and then an `error` event (what the openai SDK
 * raises an APIError on). The gateway does not read the node's events: the response carries no id,
 * and neither event a `sequence_number`.
 */
export const OPENAI_RESPONSES_ERRORS: ErrorDialect = {
  ...OPENAI_ERRORS,
  streamError: (message, framing) => {
    if (framing !== 'sse') return OPENAI_ERRORS.streamError(message, framing);
    const failed = JSON.stringify({
      type: 'response.failed',
      response: { object: 'response', status: 'failed', error: { code: 'server_error', message } },
    });
    const error = JSON.stringify({ type: 'error', code: STREAM_BROKEN_CODE, message, param: null });
    return `event: response.failed\ndata: ${failed}\n\nevent: error\ndata: ${error}\n\n`;
  },
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
  // As Anthropic's API ends a stream that failed (`overloaded_error` there): the SDK's stream raises on it.
  streamError: (message, framing) => {
    const body = JSON.stringify({ type: 'error', error: { type: 'api_error', message } });
    return framing === 'sse' ? `event: error\ndata: ${body}\n\n` : `${body}\n`;
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
  // Ollama's own mid-stream failure: one `{"error": "..."}` line (the ollama clients throw on it).
  streamError: (message, framing) =>
    framing === 'ndjson' ? `${JSON.stringify({ error: message })}\n` : `data: ${JSON.stringify({ error: message })}\n\n`,
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

/** The Responses API's endpoint: OpenAI's errors, its own stream events. */
const RESPONSES_PATH = '/v1/responses';

export function errorDialectFor(pathname: string): ErrorDialect {
  // An inference endpoint's traits were resolved once; any other path is judged by the predicates.
  const traits = TRAITS_BY_PATH[pathname];
  if (traits?.ollama ?? isOllamaPath(pathname)) return OLLAMA_ERRORS;
  if (traits?.anthropic ?? isAnthropicPath(pathname)) return ANTHROPIC_ERRORS;
  return pathname === RESPONSES_PATH ? OPENAI_RESPONSES_ERRORS : OPENAI_ERRORS;
}
