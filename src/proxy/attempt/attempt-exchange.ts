// The lifetime of one upstream attempt, whichever strategy answers the client: the abort that
// stops the node's work (the client leaving, or the total timeout), and the share of the held-bytes
// budget the attempt's held answer occupies until the client has been sent it. A whole answer whose
// head has come is already generated: a client leaving then lets it be read, for a bounded time,
// so that what the node says it used is what is charged. A streamed answer may have a first-token
// deadline (first-token-deadline.ts): past it, the call is aborted and the attempt fails over.

import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { AbortListener, AbortSource } from './abort-source.ts';
import { firstTokenTimeoutError, type FirstTokenDeadline } from './first-token-deadline.ts';
import type { HeldBytesBudget, HeldReservation } from './held-budget.ts';

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
    heldBudget: HeldBytesBudget,
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
