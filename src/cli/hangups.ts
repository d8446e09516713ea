// SIGHUP delivery for commands. A SIGHUP's default action ends the process, so the CLI catches it
// from its very first line (bin/switchyard.js) and hands it here; one that arrives before the
// command listens (while the sources load, or while the gateway starts) is kept, not lost.

export interface Hangups {
  /**
   * Calls `listener` on every SIGHUP from now on, and once at subscription when SIGHUPs arrived
   * before anyone listened (several of them count as one: each asks for the same reload).
   */
  subscribe(listener: () => void): () => void;
}

export class HangupRelay implements Hangups {
  #pending: boolean;
  readonly #listeners = new Set<() => void>();

  constructor(arrivedBeforeStart: number) {
    this.#pending = arrivedBeforeStart > 0;
  }

  notify(): void {
    if (this.#listeners.size === 0) {
      this.#pending = true;
      return;
    }
    for (const listener of this.#listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    if (this.#pending) {
      this.#pending = false;
      listener();
    }
    return () => {
      this.#listeners.delete(listener);
    };
  }
}
