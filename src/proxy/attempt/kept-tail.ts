// The last bytes of an answer, kept while it passes (where the servers state usage): copied into
// one buffer of the watch's own, never kept as the chunks themselves. A chunk is a view of the
// socket read it came in, which may hold many more events (a relay that fell behind reads up to
// 64 KiB at once): keeping the views would keep each of those reads for the rest of the stream.

import { Buffer } from 'node:buffer';

/** The smallest buffer allocated; it doubles up to twice the kept size. */
const FIRST_CAPACITY = 256;

export class KeptTail {
  readonly #size: number;
  #bytes: Buffer = Buffer.alloc(0);
  #length = 0;

  /** Keeps the last `size` bytes (at most twice that allocated, so a move of ≤ `size` bytes is amortised). */
  constructor(size: number) {
    this.#size = size;
  }

  push(chunk: Buffer): void {
    const size = this.#size;
    if (chunk.length >= size) {
      this.#ensure(size);
      chunk.copy(this.#bytes, 0, chunk.length - size);
      this.#length = size;
      return;
    }
    const needed = this.#length + chunk.length;
    if (needed > this.#bytes.length) {
      if (needed <= 2 * size) this.#ensure(Math.min(2 * size, Math.max(FIRST_CAPACITY, 2 * needed)));
      else {
        // Full: move the last bytes still needed to the front, then the chunk goes after them.
        const keep = Math.min(this.#length, size - chunk.length);
        this.#bytes.copy(this.#bytes, 0, this.#length - keep, this.#length);
        this.#length = keep;
      }
    }
    chunk.copy(this.#bytes, this.#length);
    this.#length += chunk.length;
  }

  /** The last `size` bytes that passed (fewer when fewer did); a view, valid until the next push. */
  bytes(): Buffer {
    return this.#bytes.subarray(Math.max(0, this.#length - this.#size), this.#length);
  }

  #ensure(capacity: number): void {
    if (this.#bytes.length >= capacity) return;
    const grown = Buffer.allocUnsafeSlow(capacity);
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
}
