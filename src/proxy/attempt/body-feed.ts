// A node's answer body as the strategies read it: chunks pushed by a producer (undici's dispatch
// handler, or a decoder) to whichever reader is attached. No Readable per request: the producer
// calls the reader straight, and the reader's pause reaches the producer (the socket) at once.
// Chunks that arrive while no reader is attached (between the head and the strategy's choice, or
// after a held read stopped) wait in a queue, bounded by pausing the producer.

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';

/** What reads the body: called for each chunk, then once for the end or the failure. */
export interface BodySink {
  onData(chunk: Buffer): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** Bytes queued with no reader before the producer is paused (a small JSON answer never gets there). */
const QUEUE_PAUSE_BYTES = 64 * 1024;

export abstract class BodyFeed {
  #sink: BodySink | undefined;
  #queue: Buffer[] | undefined;
  #queuedBytes = 0;
  #ended = false;
  #error: Error | undefined;
  #pausedByQueue = false;

  /** Stops the producer (backpressure); chunks already under way may still arrive. */
  abstract pause(): void;
  abstract resume(): void;
  /** Stops the producer for good: the node's work is dropped. */
  abstract destroy(reason: Error): void;

  /** Hands the body to `sink`: first what waited, then the end or failure if they came already. */
  attach(sink: BodySink): void {
    this.#sink = sink;
    const queue = this.#queue;
    if (queue !== undefined) {
      while (queue.length > 0 && this.#sink === sink) {
        const chunk = queue.shift() as Buffer;
        this.#queuedBytes -= chunk.length;
        sink.onData(chunk);
      }
      if (queue.length > 0) return;
    }
    if (this.#sink !== sink) return;
    if (this.#pausedByQueue) {
      this.#pausedByQueue = false;
      this.resume();
    }
    if (this.#error !== undefined) this.#settle(sink, this.#error);
    else if (this.#ended) this.#settle(sink, undefined);
  }

  /** The reader stops reading; what comes next waits for the next one. */
  detach(): void {
    this.#sink = undefined;
  }

  protected pushChunk(chunk: Buffer): void {
    const sink = this.#sink;
    if (sink !== undefined) {
      sink.onData(chunk);
      return;
    }
    // Most often the whole answer is one chunk that came before its reader: a list of one (core/appended.ts).
    this.#queue = appended(this.#queue, chunk);
    this.#queuedBytes += chunk.length;
    if (this.#queuedBytes > QUEUE_PAUSE_BYTES && !this.#pausedByQueue) {
      this.#pausedByQueue = true;
      this.pause();
    }
  }

  protected pushEnd(): void {
    this.#ended = true;
    const sink = this.#sink;
    if (sink !== undefined && this.#drained()) this.#settle(sink, undefined);
  }

  protected pushError(error: Error): void {
    if (this.#ended || this.#error !== undefined) return;
    this.#error = error;
    const sink = this.#sink;
    if (sink !== undefined && this.#drained()) this.#settle(sink, error);
  }

  #drained(): boolean {
    return this.#queue === undefined || this.#queue.length === 0;
  }

  #settle(sink: BodySink, error: Error | undefined): void {
    this.#sink = undefined;
    if (error === undefined) sink.onEnd();
    else sink.onError(error);
  }
}
