// Decoding a node's compressed answer. The gateway asks nodes for `identity`; a node (or a proxy in
// front of it) that compresses anyway gets its body decoded, so that the gateway can inspect it and
// the client gets plain bytes: a client never receives a coding it did not ask for. Every coding
// undici knows is decoded (gzip, x-gzip, deflate, br, zstd), layered ones too; one the gateway cannot
// read never gets here (response-policy.ts fails the attempt, naming it). The decoder keeps
// backpressure (its full buffer pauses the node's socket, a paused reader pauses the decoder), so a
// decompression bomb is bounded like any other body: held up to the held-answer bounds, otherwise
// pumped chunk by chunk.

import { Buffer } from 'node:buffer';
import type { Transform } from 'node:stream';
import {
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
  createZstdDecompress,
} from 'node:zlib';
import { BodyFeed, type BodySink } from './attempt-exchange.ts';
import type { BodyCoding, ContentCoding } from './response-policy.ts';

/**
 * zstd's window (the memory a decoder allocates) is the sender's to choose, up to 2 GiB; HTTP's
 * zstd coding limits it to 8 MiB (RFC 9659), so a node cannot make each answer cost more.
 */
const ZSTD_WINDOW_LOG_MAX = 23;

/** Bytes a decoder needs to see before it is chosen: deflate's first two tell zlib-wrapped from raw. */
const SNIFF_BYTES = 2;

/** The decoded body, or `body` itself for identity. A zlib error reaches the reader as the body's failure. */
export function decodedBody(body: BodyFeed, coding: BodyCoding): BodyFeed {
  if (coding.kind !== 'encoded') return body;
  // `content-encoding: a, b` means a was applied first: b is undone first.
  return coding.codings.reduceRight<BodyFeed>((feed, layer) => new DecodedFeed(feed, layer), body);
}

/** The decoder for one coding, given the body's first bytes (fewer only when the body is shorter). */
export function decoderFor(coding: ContentCoding, head: Buffer): Transform {
  switch (coding) {
    case 'gzip':
      return createGunzip();
    case 'br':
      return createBrotliDecompress();
    case 'zstd':
      return createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } });
    case 'deflate':
      // HTTP's deflate is zlib-wrapped (RFC 9110), but servers sending raw deflate are common.
      return isZlibHeader(head) ? createInflate() : createInflateRaw();
  }
}

/** RFC 1950: CM = 8 (deflate), a window of at most 32 KiB, and the check bits make CMF·FLG a multiple of 31. */
export function isZlibHeader(head: Buffer): boolean {
  if (head.length < 2) return false;
  const cmf = head[0] ?? 0;
  const flg = head[1] ?? 0;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

class DecodedFeed extends BodyFeed implements BodySink {
  readonly #encoded: BodyFeed;
  readonly #coding: ContentCoding;
  /** Chosen once the first bytes are in; until then they wait in `#head`. */
  #decoder: Transform | undefined;
  #head: Buffer[] = [];
  #paused = false;

  constructor(encoded: BodyFeed, coding: ContentCoding) {
    super();
    this.#encoded = encoded;
    this.#coding = coding;
    encoded.attach(this);
  }

  #start(): Transform {
    const head = Buffer.concat(this.#head);
    this.#head = [];
    const decoder = decoderFor(this.#coding, head);
    this.#decoder = decoder;
    decoder.on('data', (chunk: Buffer) => this.pushChunk(chunk));
    decoder.on('end', () => this.pushEnd());
    decoder.on('error', (error: Error) => {
      this.#encoded.detach();
      this.#encoded.destroy(error);
      this.pushError(error);
    });
    decoder.on('drain', () => this.#encoded.resume());
    if (this.#paused) decoder.pause();
    if (head.length > 0 && !decoder.write(head)) this.#encoded.pause();
    return decoder;
  }

  /** Encoded bytes from the node, into the decoder. */
  onData(chunk: Buffer): void {
    const decoder = this.#decoder;
    if (decoder !== undefined) {
      if (!decoder.write(chunk)) this.#encoded.pause();
      return;
    }
    this.#head.push(chunk);
    if (this.#head.reduce((sum, part) => sum + part.length, 0) >= SNIFF_BYTES) this.#start();
  }

  onEnd(): void {
    (this.#decoder ?? this.#start()).end();
  }

  onError(error: Error): void {
    this.#decoder?.destroy();
    this.pushError(error);
  }

  override pause(): void {
    this.#paused = true;
    this.#decoder?.pause();
  }

  override resume(): void {
    this.#paused = false;
    this.#decoder?.resume();
  }

  override destroy(reason: Error): void {
    this.#encoded.detach();
    this.#encoded.destroy(reason);
    this.#decoder?.destroy();
  }
}
