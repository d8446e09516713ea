// Messages to one thread, sent as one batch per turn of the event loop. Every postMessage wakes
// the other thread (a system call each side, costly in this VM): at concurrency, an admit, a
// release and a request's events from many requests share one wake-up instead of one each.

export class Outbox<T> {
  readonly #post: (batch: readonly T[]) => void;
  #pending: T[] = [];

  constructor(post: (batch: readonly T[]) => void) {
    this.#post = post;
  }

  send(message: T): void {
    this.#pending.push(message);
    if (this.#pending.length === 1) setImmediate(this.#flush);
  }

  /** Sends what is pending now (before the thread ends, or where the order with another channel matters). */
  readonly flush = (): void => {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#post(batch);
  };

  readonly #flush = (): void => this.flush();
}
