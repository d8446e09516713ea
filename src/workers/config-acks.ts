// The owner's record of which workers have applied a pushed config (`config-applied`). A reload
// waits for it before the owner's ledger takes the new limits: a worker that still believes a
// tenant unlimited admits its requests without asking (the ledger only counts them), so the
// limits apply once no worker can hold that belief any more — every worker asks from then on,
// and what it admitted before reached the ledger first (one port, in order). A worker that ends is
// not waited for; one that does not answer within the bound is not waited for either (logged).

import type { Clock } from '#src/core/clock.ts';

interface Wait<L> {
  readonly generation: number;
  readonly pending: Set<L>;
  readonly done: () => void;
}

export class ConfigAcks<L> {
  readonly #clock: Clock;
  readonly #waits = new Set<Wait<L>>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Resolves once every one of `links` applied `generation` (or a later one), ended, or `boundMs` passed (then `late` names those still pending). */
  expect(generation: number, links: readonly L[], boundMs: number, late: (pending: readonly L[]) => void): Promise<void> {
    if (links.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        if (!this.#waits.has(wait)) return;
        this.#waits.delete(wait);
        late([...wait.pending]);
        resolve();
      }, boundMs);
      const wait: Wait<L> = {
        generation,
        pending: new Set(links),
        done: () => {
          timer.cancel();
          resolve();
        },
      };
      this.#waits.add(wait);
    });
  }

  /** `link` applied config `generation`. */
  applied(link: L, generation: number): void {
    for (const wait of this.#waits) if (wait.generation <= generation) this.#drop(wait, link);
  }

  /** `link` ended: nothing more to wait for from it. */
  gone(link: L): void {
    for (const wait of this.#waits) this.#drop(wait, link);
  }

  #drop(wait: Wait<L>, link: L): void {
    wait.pending.delete(link);
    if (wait.pending.size > 0) return;
    this.#waits.delete(wait);
    wait.done();
  }
}
