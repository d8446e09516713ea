// Decoding a node's compressed answer. The gateway asks nodes for `identity`; a node (or a proxy in
// front of it) that compresses anyway gets its body decoded, so that the gateway can inspect it and
// the client gets plain bytes. The decoder keeps backpressure (its full buffer pauses the node's
// socket, a paused reader pauses the decoder), so a decompression bomb is bounded like any other
// body: held up to the held-answer bounds, otherwise pumped chunk by chunk.

import type { Buffer } from 'node:buffer';
import { createBrotliDecompress, createGunzip, createInflate, type BrotliDecompress, type Gunzip, type Inflate } from 'node:zlib';
import { BodyFeed, type BodySink } from './body-feed.ts';
import type { BodyCoding } from './response-policy.ts';

/** The decoded body, or `body` itself for identity and unknown codings. A zlib error reaches the reader as the body's failure. */
export function decodedBody(body: BodyFeed, coding: BodyCoding): BodyFeed {
  if (coding === 'identity' || coding === 'unknown') return body;
  const decoder = coding === 'gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : createBrotliDecompress();
  return new DecodedFeed(body, decoder);
}

class DecodedFeed extends BodyFeed implements BodySink {
  readonly #encoded: BodyFeed;
  readonly #decoder: Gunzip | Inflate | BrotliDecompress;

  constructor(encoded: BodyFeed, decoder: Gunzip | Inflate | BrotliDecompress) {
    super();
    this.#encoded = encoded;
    this.#decoder = decoder;
    decoder.on('data', (chunk: Buffer) => this.pushChunk(chunk));
    decoder.on('end', () => this.pushEnd());
    decoder.on('error', (error: Error) => {
      encoded.detach();
      encoded.destroy(error);
      this.pushError(error);
    });
    decoder.on('drain', () => encoded.resume());
    encoded.attach(this);
  }

  /** Encoded bytes from the node, into the decoder. */
  onData(chunk: Buffer): void {
    if (!this.#decoder.write(chunk)) this.#encoded.pause();
  }

  onEnd(): void {
    this.#decoder.end();
  }

  onError(error: Error): void {
    this.#decoder.destroy();
    this.pushError(error);
  }

  override pause(): void {
    this.#decoder.pause();
  }

  override resume(): void {
    this.#decoder.resume();
  }

  override destroy(reason: Error): void {
    this.#encoded.detach();
    this.#encoded.destroy(reason);
    this.#decoder.destroy();
  }
}
