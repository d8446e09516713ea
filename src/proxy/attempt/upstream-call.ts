// One request to a node on undici's dispatch API (the v7+ handler: onRequestStart, onResponseStart,
// onResponseData, onResponseEnd, onResponseError). Instead of `Pool.request`, which wraps every
// answer in a Readable and a promise chain, the handler tells the attempt the head (a callback, no
// promise: the attempt runs on from undici's own call) and then
// pushes the body's chunks straight to the strategy reading them (the body feed: attempt-exchange.ts); the reader's pause
// pauses the parser on the node's socket. The attempt's abort signal (client gone, total timeout,
// load timeout) aborts the request wherever it is: waiting in the connection gate (the interceptor in
// upstream-pools.ts, which reads the signal from the dispatch options), waiting for its socket
// (queued-abort.ts), or mid-answer.

import type { Buffer } from 'node:buffer';
import type { Dispatcher } from 'undici';
import { errors } from '#src/core/undici-parts.ts';
import type { AbortSource } from './abort-source.ts';
import { BodyFeed } from './attempt-exchange.ts';
import { QUEUED_ABORT, type QueuedAbortHook } from './queued-abort.ts';

export interface UpstreamHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What is sent: the gateway's POST, with its headers built once per attempt. */
export interface UpstreamRequestLine {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

/** What is told how the head went, once: it came (its body follows through the call), or none came and why. */
export interface HeadListener {
  onHead(status: number, headers: UpstreamHead['headers']): void;
  onNoHead(error: Error): void;
}

/** undici's own dispatch options plus the signal the connection gate reads (upstream-pools.ts). */
type GatedDispatchOptions = Dispatcher.DispatchOptions & { readonly signal: AbortSignal };

export class UpstreamCall extends BodyFeed implements Dispatcher.DispatchHandler {
  readonly #abort: AbortSource;
  readonly #signal: AbortSignal;
  /** Told the head, or why none came. */
  readonly #listener: HeadListener;
  #controller: Dispatcher.DispatchController | undefined;
  /** Takes the request out of undici's queue while it waits for a connection. */
  #cancelQueued: ((reason: Error) => void) | undefined;
  #headSettled = false;
  #finished = false;

  constructor(abort: AbortSource, listener: HeadListener) {
    super();
    this.#listener = listener;
    this.#abort = abort;
    this.#signal = abort.signal;
  }

  /** Sends the request; the head and the body come back through this handler. */
  send(pool: Dispatcher, request: UpstreamRequestLine): void {
    const signal = this.#signal;
    if (signal.aborted) {
      this.onResponseError(undefined, abortReason(signal));
      return;
    }
    this.#abort.onAbort(this);
    const options: GatedDispatchOptions = {
      path: request.path,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal,
    };
    if (QUEUED_ABORT !== undefined) {
      const hook: QueuedAbortHook = (cancel) => this.#queued(cancel);
      (options as unknown as Record<symbol, QueuedAbortHook>)[QUEUED_ABORT] = hook;
    }
    pool.dispatch(options, this);
  }

  /** The attempt's signal fired: abort the request wherever it is. */
  handleEvent(): void {
    const reason = abortReason(this.#signal);
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else this.#cancelQueued?.(reason);
  }

  #queued(cancel: (reason: Error) => void): void {
    if (this.#signal.aborted) cancel(abortReason(this.#signal));
    else this.#cancelQueued = cancel;
  }

  override pause(): void {
    this.#controller?.pause();
  }

  override resume(): void {
    this.#controller?.resume();
  }

  override destroy(reason: Error): void {
    if (this.#finished) return;
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.#cancelQueued = undefined;
    if (this.#signal.aborted) controller.abort(abortReason(this.#signal));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: UpstreamHead['headers']): void {
    // An interim answer (103 Early Hints) precedes the real one, as undici's request API skips it.
    if (status < 200) return;
    this.#headSettled = true;
    this.#listener.onHead(status, headers);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.pushChunk(chunk);
  }

  onResponseEnd(): void {
    this.#finish();
    this.pushEnd();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.#finish();
    if (this.#headSettled) this.pushError(error);
    else {
      this.#headSettled = true;
      this.#listener.onNoHead(error);
    }
  }

  #finish(): void {
    this.#finished = true;
    this.#abort.onAbort(undefined);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError();
}
