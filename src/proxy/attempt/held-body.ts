// Reading (part of) an upstream body into memory before deciding what to do with it: a whole JSON
// answer held until it parses, or an error body read to recognise it. Always bounded.

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';
import type { BodyFeed, BodySink } from './body-feed.ts';
import type { HeldReservation } from './held-budget.ts';

export type HeldBody =
  | { readonly kind: 'complete'; readonly bytes: Buffer }
  /** Past a bound: `head` was read, the rest is still in `body` (paused, no reader attached). */
  | { readonly kind: 'too_big'; readonly head: Buffer }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Reads a body up to `maxBytes`, each chunk reserved from the shared budget, without consuming
 * more; past either bound the body stays usable (paused) for the caller to stream on.
 */
export function holdBody(body: BodyFeed, maxBytes: number, reservation: HeldReservation): Promise<HeldBody> {
  return new Promise((onHeld) => readHeld(body, maxBytes, reservation, { onHeld }));
}

/** What is told the end of a held read, once. */
export interface HeldListener {
  onHeld(held: HeldBody): void;
}

/**
 * The same read, its end told to `listener` (once) straight from the body's producer: for a caller
 * driven by the producer's callbacks (forward.ts), with no promise between.
 */
export function readHeld(body: BodyFeed, maxBytes: number, reservation: HeldReservation, listener: HeldListener): void {
  body.attach(new HeldRead(body, maxBytes, reservation, listener));
}

class HeldRead implements BodySink {
  readonly #body: BodyFeed;
  readonly #maxBytes: number;
  readonly #reservation: HeldReservation;
  /** Most answers are one chunk: the list is made with it (core/appended.ts). */
  #chunks: Buffer[] | undefined;
  #total = 0;
  #settled = false;
  readonly #listener: HeldListener;

  constructor(body: BodyFeed, maxBytes: number, reservation: HeldReservation, listener: HeldListener) {
    this.#listener = listener;
    this.#body = body;
    this.#maxBytes = maxBytes;
    this.#reservation = reservation;
  }

  onData(chunk: Buffer): void {
    if (this.#settled) return;
    const chunks = appended(this.#chunks, chunk);
    this.#chunks = chunks;
    this.#total += chunk.length;
    if (this.#total > this.#maxBytes || !this.#reservation.take(chunk.length)) {
      this.#body.detach();
      this.#body.pause();
      this.#settle({ kind: 'too_big', head: Buffer.concat(chunks, this.#total) });
    }
  }

  onEnd(): void {
    const chunks = this.#chunks ?? [];
    this.#settle({ kind: 'complete', bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#total) });
  }

  onError(error: Error): void {
    this.#settle({ kind: 'failed', error });
  }

  #settle(held: HeldBody): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#listener.onHeld(held);
  }
}

/** The body parsed, or NOT_JSON: parsed once, and what the answer states is read from the result. */
export function parsedJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

export const NOT_JSON: unique symbol = Symbol('not JSON');
