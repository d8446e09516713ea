// The one place a GatewayError becomes an HTTP answer: OpenAI's error shape
// {"error":{"message","type","param","code"}} plus any extra detail fields, or the endpoint's own
// dialect (error-dialect.ts: Anthropic's on the Messages routes).

import type { ServerResponse } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';
import { OPENAI_ERRORS, type ErrorDialect } from './error-dialect.ts';

export function errorBody(error: GatewayError, dialect: ErrorDialect = OPENAI_ERRORS): string {
  return dialect.body(error);
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError('GW_UPSTREAM_UNREACHABLE', 'internal gateway error', {
    status: 500,
    openaiType: 'server_error',
    cause: error,
  });
}

/** Writes the error unless headers already went out (then the caller must end the stream itself). */
export function sendError(
  res: ServerResponse,
  error: GatewayError,
  extraHeaders: Readonly<Record<string, string>> = {},
  dialect: ErrorDialect = OPENAI_ERRORS,
): void {
  if (res.headersSent || res.destroyed) return;
  const body = errorBody(error, dialect);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...extraHeaders,
  };
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  if (error.final) headers['x-should-retry'] = 'false';
  res.writeHead(error.status, headers);
  res.end(body);
}
