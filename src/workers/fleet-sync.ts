// The owner's side of the workers' fleet mirror: what it last pushed, and the next update when the
// fleet as the request path reads it has changed since (the registry's views are a new array on
// every change, so identity is the test).

import type { ViewsUpdate } from './protocol.ts';

export class FleetSync {
  readonly #read: () => ViewsUpdate;
  #last: ViewsUpdate;

  constructor(read: () => ViewsUpdate) {
    this.#read = read;
    this.#last = read();
  }

  /** The fleet last handed out (what a worker starting now begins with). */
  current(): ViewsUpdate {
    return this.#last;
  }

  /** The fleet now, if it differs from the last one handed out; undefined when nothing changed. */
  next(): ViewsUpdate | undefined {
    const next = this.#read();
    const last = this.#last;
    if (next.views === last.views && next.connectionLimit === last.connectionLimit) return undefined;
    this.#last = next;
    return next;
  }
}
