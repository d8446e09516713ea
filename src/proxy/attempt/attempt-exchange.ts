// One attempt's exchange with a node, as the answering strategies (inspect-refusal, hold_json in
// held-answer.ts, stream-through) share it: the node's answer as the client will get it (its
// status, the client's copy of its headers, its body as a feed of chunks), the client side they
// write it to, and the attempt's lifetime.
//
// The body feed: chunks pushed by a producer (undici's dispatch handler, or a decoder) to whichever
// reader is attached. No Readable per request: the producer calls the reader straight, and the
// reader's pause reaches the producer (the socket) at once. Chunks that arrive while no reader is
// attached (between the head and the strategy's choice, or after a held read stopped) wait in a
// queue, bounded by pausing the producer.
//
// The lifetime (AttemptExchange), whichever strategy answers the client: the abort that stops the
// node's work (the client leaving, or the total timeout), and the share of the held-bytes budget
// the attempt's held answer occupies until the client has been sent it. A whole answer whose head
// has come is already generated: a client leaving then lets it be read, for a bounded time, so that
// what the node says it used is what is charged. A streamed answer may have a first-token deadline
// (first-token-deadline.ts): past it, the call is aborted and the attempt fails over.

import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { appended } from '#src/core/appended.ts';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { AbortListener, AbortSource } from './abort-source.ts';
import { firstTokenTimeoutError, type FirstTokenDeadline } from './first-token-deadline.ts';

// ---- the answer and the client side ------------------------------------------------------------

export interface UpstreamAnswer {
  readonly status: number;
  /**
   * The client's copy of the node's headers: hop-by-hop ones stripped, encoding dropped once decoded.
   * Built once per attempt and finished in place when the head is sent (clientHead), never copied.
   */
  readonly headers: Record<string, string | string[]>;
  /** The node's body, decoded when it came compressed. */
  readonly body: BodyFeed;
}

export interface ClientSide {
  readonly res: ServerResponse;
  readonly exchange: AttemptExchange;
  /** Added to whatever the node sent (the answering node's name, the request id). */
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** When the request arrived, for the time to the first byte. */
  readonly startedMs: number;
  /** When the request was sent to the node (monotonic ms), for the node's speed (stream-timing.ts, decodeSample). */
  readonly sentMs: number;
}

/**
 * The head the client gets: the node's headers without its length (the gateway states its own, or
 * sends chunked), plus the gateway's own. Finishes `answer.headers` in place: one head per answer.
 */
export function clientHead(
  answer: UpstreamAnswer,
  client: ClientSide,
  contentLength?: number,
): Record<string, string | string[]> {
  const headers = answer.headers;
  if (contentLength === undefined) delete headers['content-length'];
  else headers['content-length'] = String(contentLength);
  // A Vary the gateway already set (CORS: `Origin`) is kept next to the node's own.
  const ours = client.res.getHeader('vary');
  if (ours !== undefined && headers['vary'] !== undefined) headers['vary'] = `${String(ours)}, ${String(headers['vary'])}`;
  // A tenant's own rate-limit headers (set by the gateway before the attempt) win over a node's:
  // the client is limited by its tenant here, not by whatever the node's API key may do there.
  if (client.res.hasHeader('x-ratelimit-limit-requests') || client.res.hasHeader('x-ratelimit-limit-tokens')) {
    for (const name of Object.keys(headers)) if (name.startsWith('x-ratelimit-')) delete headers[name];
  }
  return Object.assign(headers, client.extraResponseHeaders);
}

// ---- the body feed ---------------------------------------------------------------------------

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

// ---- the attempt's lifetime ----------------------------------------------------------------------

/** The bytes one answer holds; `take` grows it, `release` returns all of it (once). */
export interface HeldReservation {
  /** Reserves `bytes` more; false (and nothing reserved) when the shared budget cannot cover them. */
  take(bytes: number): boolean;
  release(): void;
}

/** Where an attempt's reservation is opened: the held-bytes budget shared by all requests (held-answer.ts). */
export interface HeldBudget {
  open(): HeldReservation;
}

export class AttemptExchange implements AbortSource {
  /** Bound on the whole exchange, streaming included; 0 = none. */
  readonly totalTimeoutMs: number;
  /** The attempt's share of the held-bytes budget. */
  readonly reservation: HeldReservation;
  readonly #res: ServerResponse;
  readonly #controller = new AbortController();
  readonly #timer: Timer | undefined;
  /** routing.load_timeout for an attempt that loads its model: cancelled when the answer's head comes. */
  readonly #headersTimer: Timer | undefined;
  #headersTimedOut = false;
  readonly #onClose: () => void;
  /** The attempt's call, told of the abort straight (abort-source.ts). */
  #listener: AbortListener | undefined;
  #timedOut = false;
  #heldBytesWritten = false;
  /** The attempt ended (close): the response's close only releases the held bytes now. */
  #ended = false;
  readonly #clock: Clock;
  /** The client's response closed before the answer was sent. */
  #clientClosed = false;
  /** Set once a whole answer is being read: how long it may still be read after the client left. */
  #graceMs: number | undefined;
  #graceTimer: Timer | undefined;
  /** When the abort came (monotonic ms): how long the node had the request (answer-usage.ts, estimatedWork). */
  #abortedAtMs: number | undefined;
  /** The first-token deadline, until the first token came (or the answer is not a stream). */
  #firstToken: FirstTokenDeadline | undefined;
  #firstTokenTimer: Timer | undefined;
  #firstTokenTimedOut = false;

  constructor(
    res: ServerResponse,
    clock: Clock,
    totalTimeoutMs: number,
    heldBudget: HeldBudget,
    headersTimeoutMs?: number,
    firstToken?: FirstTokenDeadline,
  ) {
    this.#res = res;
    this.#clock = clock;
    this.totalTimeoutMs = totalTimeoutMs;
    // The response's close (not the request's: that fires once the body is read) means the client left.
    this.#onClose = () => {
      // Closed after the attempt ended, its held bytes handed to the response: they are sent, or never will be.
      if (this.#ended) {
        this.reservation.release();
        return;
      }
      if (res.writableFinished) return;
      this.#clientClosed = true;
      if (this.#graceMs === undefined) this.abort(CLIENT_CLOSED);
      else this.#graceTimer ??= clock.setTimeout(() => this.abort(CLIENT_CLOSED), this.#graceMs);
    };
    res.on('close', this.#onClose);
    // A plain timer, cancelled when the attempt ends: AbortSignal.timeout() would keep a timer (an
    // hour by default) and its weak references alive per request until GC and finalisation catch up.
    this.#timer =
      totalTimeoutMs > 0
        ? clock.setTimeout(() => {
            this.#timedOut = true;
            this.abort(new Error(`upstream exchange exceeded ${totalTimeoutMs}ms`));
          }, totalTimeoutMs)
        : undefined;
    this.#headersTimer =
      headersTimeoutMs === undefined
        ? undefined
        : clock.setTimeout(() => {
            this.#headersTimedOut = true;
            this.abort(new Error(`no answer head within ${headersTimeoutMs}ms`));
          }, headersTimeoutMs);
    this.#firstToken = firstToken;
    if (firstToken !== undefined && !firstToken.fromHead) this.#startFirstTokenTimer(firstToken);
    this.reservation = heldBudget.open();
  }

  #startFirstTokenTimer(deadline: FirstTokenDeadline): void {
    this.#firstTokenTimer = this.#clock.setTimeout(() => {
      this.#firstTokenTimedOut = true;
      this.abort(new Error(firstTokenTimeoutError(deadline)));
    }, deadline.timeoutMs);
  }

  /**
   * A whole answer's head came (the node has generated it): should the client leave, its body is
   * still read, for at most `graceMs`, to learn what it used; then the call is cut.
   */
  readingWholeAnswer(graceMs: number): void {
    this.#graceMs = graceMs;
  }

  /** The answer's head arrived: the load deadline no longer applies (a first-token deadline kept for the head starts). */
  headersArrived(): void {
    this.#headersTimer?.cancel();
    const deadline = this.#firstToken;
    if (deadline?.fromHead === true && this.#firstTokenTimer === undefined && !this.#ended) this.#startFirstTokenTimer(deadline);
  }

  /** Whether a first-token deadline is running: the stream is held until its first token (first-token-gate.ts). */
  awaitingFirstToken(): boolean {
    return this.#firstToken !== undefined && !this.#firstTokenTimedOut;
  }

  /** The first token came, or the answer is no stream to wait on: the deadline no longer applies. */
  firstTokenCame(): void {
    this.#firstToken = undefined;
    this.#firstTokenTimer?.cancel();
  }

  /** Aborted because no first token came within the deadline: why, in the attempt's words; undefined = not so. */
  firstTokenTimeout(): string | undefined {
    const deadline = this.#firstToken;
    return this.#firstTokenTimedOut && deadline !== undefined ? firstTokenTimeoutError(deadline) : undefined;
  }

  /** Aborted because a loading model gave no answer head in time. */
  loadTimedOut(): boolean {
    return this.#headersTimedOut;
  }

  /** Aborts the upstream request when the client leaves or the total timeout passes. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  timedOut(): boolean {
    return this.#timedOut;
  }

  /** Aborted, and not by the timeout: the client went away. */
  clientLeft(): boolean {
    return (
      this.#clientClosed ||
      (this.#controller.signal.aborted && !this.#timedOut && !this.#headersTimedOut && !this.#firstTokenTimedOut)
    );
  }

  abort(reason: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#abortedAtMs = this.#clock.monotonicMs();
    this.#controller.abort(reason);
    this.#listener?.handleEvent();
  }

  /** When the attempt was aborted (monotonic ms); undefined = not aborted. */
  get abortedAtMs(): number | undefined {
    return this.#abortedAtMs;
  }

  onAbort(listener: AbortListener | undefined): void {
    this.#listener = listener;
  }

  /** Held bytes were handed to the response: they stay reserved until it is sent, not merely written. */
  heldBytesWritten(): void {
    this.#heldBytesWritten = true;
  }

  /** Ends the attempt: no more aborts, and the reservation released (or once the response is sent). */
  close(): void {
    this.#ended = true;
    this.#timer?.cancel();
    this.#headersTimer?.cancel();
    this.#graceTimer?.cancel();
    this.#firstTokenTimer?.cancel();
    // Held bytes still being sent: the close listener, kept, releases them (no second listener per answer).
    if (this.#heldBytesWritten && !this.#res.closed) return;
    this.#res.off('close', this.#onClose);
    this.reservation.release();
  }
}

/** Why the node's call is cut when the client left. */
const CLIENT_CLOSED = new Error('client closed the connection');
