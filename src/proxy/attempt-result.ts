// How one upstream attempt ended, as metrics and passive health see it, and the mapping from
// undici's errors to those results.

export type AttemptResult =
  | 'success'
  | 'http_5xx'
  | 'connect_error'
  | 'reset'
  | 'timeout'
  | 'stream_error'
  | 'invalid_body'
  /** The node sent `100 Continue` unasked, which undici cannot skip: retried elsewhere, not held against it. */
  | 'interim_response'
  | 'client_abort'
  | 'context_overflow'
  | 'model_not_found';

export function classify(error: unknown): { result: AttemptResult; error: string } {
  const code = (error as { code?: string } | undefined)?.code ?? '';
  const text = describeError(error);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return { result: 'timeout', error: text };
  }
  // undici rejects an unasked-for `100 Continue` (other 1xx it skips) as a "bad response" and drops
  // the socket; the node is alive and may answer the next request well.
  if (code === 'UND_ERR_SOCKET' && error instanceof Error && error.message === 'bad response') {
    return { result: 'interim_response', error: `${text} (an interim 1xx answer, or bytes before any request)` };
  }
  // zlib's codes: the node's compressed body does not decode.
  if (code.startsWith('Z_')) return { result: 'invalid_body', error: `the node's compressed body does not decode: ${text}` };
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EAI_AGAIN') {
    return { result: 'connect_error', error: text };
  }
  return { result: 'reset', error: text };
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
