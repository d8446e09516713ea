// One polling exchange (a health probe, a model listing) on a dispatcher's handler API (undici's
// v7+ `dispatch`: onRequestStart, onResponseStart, onResponseData, onResponseEnd, onResponseError),
// with its answer body bounded in bytes. The polls run thousands of exchanges a second in a large
// fleet; undici's `request()` wraps every answer in a Readable stream, an async iterator over it and
// an abort-signal wrapper, all of which wait for the answer and so outlive a scavenge (issue 28: the
// old generation grew with them). Here one handler object per exchange: the chunks are gathered as
// they arrive, and an answer past the bound is cut off (its connection closed) instead of drained.
// Never throws: every failure is an outcome. The time bound is the caller's, through `signal`.

import { Buffer } from 'node:buffer';

/** The dispatcher's handle on a started request (undici's DispatchController has it). */
export interface ExchangeController {
  abort(reason: Error): void;
}

export type ExchangeHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** The handler this file gives the dispatcher (the shape of undici's DispatchHandler it uses). */
export interface ExchangeHandler {
  onRequestStart(controller: ExchangeController, context: unknown): void;
  onResponseStart(controller: ExchangeController, statusCode: number, headers: ExchangeHeaders, statusMessage?: string): void;
  onResponseData(controller: ExchangeController, chunk: Buffer): void;
  onResponseEnd(controller: ExchangeController, trailers: unknown): void;
  onResponseError(controller: ExchangeController | undefined, error: Error): void;
}

export interface ExchangeRequest {
  readonly origin: string;
  readonly path: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly headers?: Record<string, string> | undefined;
  readonly body?: string | undefined;
  /** undici's own timers, a backstop behind the caller's signal. */
  readonly headersTimeout?: number;
  readonly bodyTimeout?: number;
}

/** What sends an exchange: undici's Agent, Pool and Client have it. */
export interface ExchangeDispatcher {
  dispatch(options: ExchangeRequest, handler: ExchangeHandler): boolean;
}

export interface ExchangeLimits {
  /** Bytes of a 2xx answer's body read before it is cut off. */
  readonly maxBytes: number;
  /** The bound for any other answer (its body only explains the status); default `maxBytes`. */
  readonly maxErrorBytes?: number;
  /** Whether the body is only bounded, not kept (the outcome's `bytes` is then empty). */
  readonly discard?: boolean;
  /** Aborts the exchange wherever it is (the caller's time bound, a removed node). */
  readonly signal?: AbortSignal;
}

export type ExchangeOutcome =
  /** The whole answer, within its bound. */
  | { readonly kind: 'answer'; readonly status: number; readonly headers: ExchangeHeaders; readonly bytes: Buffer }
  /** The body is longer than its bound (declared or read): not read further, its connection closed. */
  | { readonly kind: 'too-large'; readonly status: number; readonly limit: number }
  /** No answer (refused, reset, aborted), or its body broke off; `status` when the head had come. */
  | { readonly kind: 'failed'; readonly status: number | undefined; readonly error: Error };

const EMPTY = Buffer.alloc(0);

export function boundedExchange(
  dispatcher: ExchangeDispatcher,
  request: ExchangeRequest,
  limits: ExchangeLimits,
): Promise<ExchangeOutcome> {
  const exchange = new BoundedExchange(limits);
  exchange.send(dispatcher, request);
  return exchange.outcome;
}

class BoundedExchange implements ExchangeHandler {
  readonly outcome: Promise<ExchangeOutcome>;
  readonly #limits: ExchangeLimits;
  readonly #settle: (outcome: ExchangeOutcome) => void;
  #controller: ExchangeController | undefined;
  #abortReason: Error | undefined;
  #status: number | undefined;
  #headers: ExchangeHeaders | undefined;
  #limit = 0;
  #chunks: Buffer[] = [];
  #total = 0;
  #tooLarge = false;
  #settled = false;

  constructor(limits: ExchangeLimits) {
    this.#limits = limits;
    const { promise, resolve } = Promise.withResolvers<ExchangeOutcome>();
    this.outcome = promise;
    this.#settle = resolve;
  }

  send(dispatcher: ExchangeDispatcher, request: ExchangeRequest): void {
    const signal = this.#limits.signal;
    if (signal?.aborted) {
      this.#finish({ kind: 'failed', status: undefined, error: reasonOf(signal) });
      return;
    }
    signal?.addEventListener('abort', this, { once: true });
    try {
      dispatcher.dispatch(request, this);
    } catch (error) {
      this.#finish({ kind: 'failed', status: undefined, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  /** The signal's abort (an object listener: no closure per exchange). */
  handleEvent(): void {
    const reason = reasonOf(this.#limits.signal);
    this.#abortReason = reason;
    // Not started yet (waiting for its connection): aborted the moment it starts.
    this.#controller?.abort(reason);
  }

  onRequestStart(controller: ExchangeController): void {
    this.#controller = controller;
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
  }

  onResponseStart(controller: ExchangeController, statusCode: number, headers: ExchangeHeaders): void {
    // An interim answer (103 Early Hints) precedes the real one, as undici's request API skips it.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
    const success = statusCode >= 200 && statusCode < 300;
    this.#limit = success ? this.#limits.maxBytes : (this.#limits.maxErrorBytes ?? this.#limits.maxBytes);
    const declared = declaredLength(headers);
    if (declared !== undefined && declared > this.#limit) this.#cutOff(controller);
  }

  onResponseData(controller: ExchangeController, chunk: Buffer): void {
    if (this.#tooLarge) return;
    this.#total += chunk.length;
    if (this.#total > this.#limit) this.#cutOff(controller);
    else if (this.#limits.discard !== true) this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#tooLarge) return;
    const chunks = this.#chunks;
    const bytes = chunks.length === 0 ? EMPTY : chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#total);
    this.#finish({ kind: 'answer', status: this.#status ?? 0, headers: this.#headers ?? {}, bytes });
  }

  onResponseError(_controller: ExchangeController | undefined, error: Error): void {
    if (this.#tooLarge && this.#status !== undefined)
      this.#finish({ kind: 'too-large', status: this.#status, limit: this.#limit });
    else this.#finish({ kind: 'failed', status: this.#status, error });
  }

  #cutOff(controller: ExchangeController): void {
    this.#tooLarge = true;
    this.#chunks = [];
    const status = this.#status ?? 0;
    // Settled first: the abort closes the connection, and its error is then not the outcome.
    this.#finish({ kind: 'too-large', status, limit: this.#limit });
    controller.abort(new Error(`response body exceeds the limit of ${this.#limit} bytes`));
  }

  #finish(outcome: ExchangeOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#limits.signal?.removeEventListener('abort', this);
    this.#settle(outcome);
  }
}

function reasonOf(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}

function declaredLength(headers: ExchangeHeaders): number | undefined {
  const raw = headers['content-length'];
  const length = typeof raw === 'string' ? Number(raw) : Number.NaN;
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}
