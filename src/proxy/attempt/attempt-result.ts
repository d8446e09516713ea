// How one upstream attempt ended, as metrics and passive health see it, and the mapping from
// undici's errors to those results.

import type { UpstreamErrorMeaning } from './upstream-error.ts';

/** Why nothing usable came back from a node before anything reached the client. */
export type AttemptFailure =
  | 'http_5xx'
  /** A 3xx/4xx that is not a refusal the gateway acts on, from an upstream whose errors are not passed on (a remote site). */
  | 'http_error'
  | 'connect_error'
  | 'reset'
  | 'timeout'
  /** A request that loads its model had no answer head within routing.load_timeout. */
  | 'load_timeout'
  | 'invalid_body'
  /** The node sent `100 Continue` unasked, which undici cannot skip: retried elsewhere, not held against it. */
  | 'interim_response';

export type AttemptResult =
  | 'success'
  | AttemptFailure
  | 'stream_error'
  | 'client_abort'
  /** A refusal the node explained (the outcome's `refusal` field carries what it said). */
  | UpstreamErrorMeaning['kind'];

export function classify(error: unknown): { result: AttemptFailure; error: string } {
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
  // The decoders' codes (zlib's Z_…, brotli's ERR__ERROR_…, zstd's ZSTD_error_…): the node's compressed body does not decode.
  if (code.startsWith('Z_') || code.startsWith('ERR__ERROR_') || code.startsWith('ZSTD_error_'))
    return { result: 'invalid_body', error: `the node's compressed body does not decode: ${text}` };
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'EAI_AGAIN'
  ) {
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
