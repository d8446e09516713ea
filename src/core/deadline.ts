// One time bound for an exchange, joined with an outer signal (the loop's, or the request's). The
// polling loops run thousands of exchanges a second in a large fleet: `AbortSignal.timeout()` +
// `AbortSignal.any()` allocate a timer signal, a composite signal and WeakRef-tracked dependents per
// exchange, which outlive it until a collection. Here one controller and one timer, both released
// by `done()` the moment the exchange ends.

export interface Deadline {
  /** Aborts when the time is up or the outer signal aborts. */
  readonly signal: AbortSignal;
  /** Whether it was the time that ran out (not the outer signal). */
  readonly timedOut: boolean;
  /** The exchange is over: clears the timer and lets go of the outer signal. Idempotent. */
  done(): void;
}

class ExchangeDeadline implements Deadline {
  readonly #controller = new AbortController();
  readonly #outer: AbortSignal | undefined;
  readonly #timer: ReturnType<typeof setTimeout>;
  #timedOut = false;

  constructor(timeoutMs: number, outer: AbortSignal | undefined) {
    this.#outer = outer;
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException(`timed out after ${timeoutMs}ms`, 'TimeoutError'));
    }, timeoutMs);
    // A pending poll never keeps the process alive on its own.
    this.#timer.unref();
    if (outer === undefined) return;
    if (outer.aborted) this.#controller.abort(outer.reason);
    else outer.addEventListener('abort', this, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** The outer signal's abort (an object listener: no closure per exchange). */
  handleEvent(): void {
    this.#controller.abort(this.#outer?.reason);
  }

  done(): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener('abort', this);
  }
}

export function deadline(timeoutMs: number, outer?: AbortSignal): Deadline {
  return new ExchangeDeadline(timeoutMs, outer);
}
