// How many requests the gateway's listeners are answering right now, counted across all of them:
// the drain on shutdown waits for it to reach zero, and /admin/runtime shows it.

import type { ServerResponse } from 'node:http';

export class ActiveRequests {
  #count = 0;

  /** Counts `res` until it closes (finished, or the client left). */
  track(res: ServerResponse): void {
    this.#count += 1;
    // `on`, not `once`: a response closes once, and `once` wraps each listener per request.
    res.on('close', () => {
      this.#count -= 1;
    });
  }

  count(): number {
    return this.#count;
  }
}
