// One bound on the answer bytes the gateway holds in memory across all requests at once. Holding
// a whole JSON answer until it parses costs up to the per-answer bound per request, for as long as
// the client takes to read it; without a shared bound, many slow readers add up to any amount.

/** The bytes one answer holds; `take` grows it, `release` returns all of it (once). */
export interface HeldReservation {
  /** Reserves `bytes` more; false (and nothing reserved) when the shared budget cannot cover them. */
  take(bytes: number): boolean;
  release(): void;
}

export class HeldBytesBudget {
  readonly #limit: () => number;
  #held = 0;

  /** `limit` is read at each reservation, so a reload applies to the next bytes held. */
  constructor(limit: () => number) {
    this.#limit = limit;
  }

  /** Bytes currently reserved by all answers. */
  held(): number {
    return this.#held;
  }

  open(): HeldReservation {
    let mine = 0;
    let released = false;
    return {
      take: (bytes) => {
        if (released || this.#held + bytes > this.#limit()) return false;
        this.#held += bytes;
        mine += bytes;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#held -= mine;
        mine = 0;
      },
    };
  }
}
