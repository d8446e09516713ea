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
