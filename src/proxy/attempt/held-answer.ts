// Holding a node's answer in memory before anything of it reaches the client, always bounded: the
// one budget on the bytes held across all requests, the bounded read of a body into memory (a whole
// JSON answer held until it parses, or an error body read to recognise it), what a held JSON answer
// means (the hold_json strategy), and the two ends of holding — sending the answer whole with its
// exact length, and what a body that broke off while held means for the attempt.
//
// The held-bytes budget: holding a whole JSON answer until it parses costs up to the per-answer
// bound per request, for as long as the client takes to read it; without a shared bound, many slow
// readers add up to any amount.
//
// The hold_json strategy, for a whole (non-SSE) 2xx JSON answer: hold it until it is complete and
// parses, so a node that answers garbage or breaks off mid-body can still be failed over. Such
// answers arrive all at once after generation, so holding them costs no latency. One bigger than
// the per-answer bound, or than what the shared budget has left, streams through unchecked. The
// attempt (forward.ts) reads the body (readHeld) and asks here what the held body means
// (heldJsonOutcome).

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';
import type { AnswerRewrite } from './answer-rewrite.ts';
import type { AnswerUsage } from './answer-usage.ts';
import { classify } from './attempt-result.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { streamThrough } from './stream-through.ts';
import { wholeAnswerUsage } from './usage-reader.ts';
import {
  clientHead,
  type AttemptExchange,
  type BodyFeed,
  type BodySink,
  type ClientSide,
  type HeldReservation,
  type UpstreamAnswer,
} from './attempt-exchange.ts';

// ---- the held-bytes budget ---------------------------------------------------------------------

export class HeldBytesBudget {
  #limit: number;
  #held = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A reload's new limit: it applies to the next bytes held (bytes already held stay held). */
  setLimit(limit: number): void {
    this.#limit = limit;
  }

  /** Bytes currently reserved by all answers. */
  held(): number {
    return this.#held;
  }

  open(): HeldReservation {
    return new Reservation(this);
  }

  /** For a reservation: `bytes` more held, if the limit allows. */
  reserve(bytes: number): boolean {
    if (this.#held + bytes > this.#limit) return false;
    this.#held += bytes;
    return true;
  }

  /** For a reservation: `bytes` it held are free again. */
  unreserve(bytes: number): void {
    this.#held -= bytes;
  }
}

/** One answer's reservation: one object, its methods shared (no closures per answer). */
class Reservation implements HeldReservation {
  readonly #budget: HeldBytesBudget;
  #mine = 0;
  #released = false;

  constructor(budget: HeldBytesBudget) {
    this.#budget = budget;
  }

  take(bytes: number): boolean {
    if (this.#released || !this.#budget.reserve(bytes)) return false;
    this.#mine += bytes;
    return true;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.unreserve(this.#mine);
    this.#mine = 0;
  }
}

// ---- reading a body into memory ---------------------------------------------------------------

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

// ---- the hold_json strategy: what a held JSON body means ----------------------------------------

/**
 * What the held body means: delivered whole, streamed on past a bound (a promise), or a failure to
 * fail over from. `rewrite`: the client gets the answer in another API (answer-rewrite.ts), which
 * only a whole answer can be put in.
 */
export function heldJsonOutcome(
  answer: UpstreamAnswer,
  client: ClientSide,
  held: HeldBody,
  rewrite?: AnswerRewrite,
): AttemptOutcome | Promise<AttemptOutcome> {
  switch (held.kind) {
    case 'failed':
      return heldBodyBrokeOff(answer.status, held.error, client.exchange);
    case 'too_big':
      // A client that left while it was read has nothing to be streamed to: the call is cut.
      if (client.exchange.clientLeft()) {
        client.exchange.abort(new Error('client closed the connection'));
        return { kind: 'client_gone', status: answer.status };
      }
      if (rewrite !== undefined) {
        client.exchange.abort(new Error('answer too big to translate'));
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a JSON body larger than the gateway holds, which it cannot translate`,
          status: answer.status,
        };
      }
      return streamThrough(answer, client, { eventStream: false, head: held.head });
    case 'complete': {
      const parsed = parsedJson(held.bytes);
      if (parsed === NOT_JSON) {
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a body that is not valid JSON`,
          status: answer.status,
        };
      }
      if (rewrite === undefined) return deliverHeld(answer, held.bytes, client, wholeAnswerUsage(parsed));
      const translated = Buffer.from(rewrite.json(parsed), 'utf8');
      answer.headers['content-type'] = 'application/json';
      return deliverHeld(answer, translated, client, wholeAnswerUsage(parsed));
    }
  }
}

// ---- the two ends of holding ---------------------------------------------------------------------

/**
 * `usage`: what a 2xx answer stated it used (read from its parsed body by the caller). A client that
 * left while the whole answer was held is charged what the node says it did.
 */
export function deliverHeld(answer: UpstreamAnswer, bytes: Buffer, client: ClientSide, usage?: AnswerUsage): AttemptOutcome {
  const { res } = client;
  if (res.destroyed) return { kind: 'client_gone', status: answer.status, usage };
  res.writeHead(answer.status, clientHead(answer, client, bytes.length));
  client.exchange.heldBytesWritten();
  res.end(bytes);
  const now = client.clock.monotonicMs();
  // A whole answer comes once generated: its tokens over the time since sending (prompt included: errs low).
  const decode =
    answer.status === 200 && usage?.counted === 'usage' && usage.completionTokens !== undefined
      ? { tokens: usage.completionTokens, decodeMs: now - client.sentMs }
      : undefined;
  return { kind: 'delivered', status: answer.status, firstByteMs: now - client.startedMs, usage, decode };
}

/** Nothing reached the client yet, so a body that broke off can still be failed over. */
export function heldBodyBrokeOff(status: number, error: unknown, exchange: AttemptExchange): AttemptOutcome {
  if (exchange.clientLeft()) return { kind: 'client_gone', status };
  if (exchange.timedOut())
    return { kind: 'failed', result: 'timeout', error: `no whole answer within ${exchange.totalTimeoutMs}ms`, status };
  const cause = classify(error);
  return { kind: 'failed', result: cause.result, error: `the node's ${status} answer broke off: ${cause.error}`, status };
}
