// Decoding a node's compressed answer. The gateway asks nodes for `identity`; a node (or a proxy in
// front of it) that compresses anyway gets its body decoded, so that the gateway can inspect it and
// the client gets plain bytes. The decoded stream keeps backpressure, so a decompression bomb is
// bounded like any other body: held up to the held-answer bounds, otherwise pumped chunk by chunk.

import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { BodyCoding } from './response-policy.ts';

/**
 * The decoded body, or `body` itself for identity and unknown codings. An error on either side
 * destroys both, and reaches the reader as an 'error' on the returned stream.
 */
export function decodedBody(body: Readable, coding: BodyCoding): Readable {
  if (coding === 'identity' || coding === 'unknown') return body;
  const decoder = coding === 'gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : createBrotliDecompress();
  // The reader sees the failure as the decoder's 'error'; this callback only completes pipeline's contract.
  pipeline(body, decoder, () => {});
  return decoder;
}
