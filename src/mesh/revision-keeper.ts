// Keeps the highest accepted revisions in the state file: read once at start, written at most
// once per FLUSH_MS after a change (one write in flight at a time) and once more at stop. A crash
// loses at most the last FLUSH_MS of raises; a record older than freshness + max_clock_skew is
// refused by age anyway (stale_record), so a replay window never reopens beyond that.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { RevisionStore } from './revision-state-file.ts';
import type { HeldRevisions } from './revision-state.ts';

const FLUSH_MS = 1_000;

export class RevisionKeeper {
  readonly #store: RevisionStore;
  readonly #clock: Clock;
  readonly #current: () => HeldRevisions;
  readonly #failed: (problem: string) => void;
  #timer: Timer | undefined;
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;

  constructor(store: RevisionStore, clock: Clock, current: () => HeldRevisions, failed: (problem: string) => void) {
    this.#store = store;
    this.#clock = clock;
    this.#current = current;
    this.#failed = failed;
  }

  /** The held revisions; a bad file is reported and read as empty. */
  async read(): Promise<HeldRevisions> {
    const { revisions, problem } = await this.#store
      .read()
      .catch((error: unknown) => ({ revisions: new Map(), problem: String(error) }));
    if (problem !== undefined) this.#failed(`${problem}; starting with no held revisions (replays are then judged by age alone)`);
    return revisions;
  }

  /** A higher revision was accepted: written within FLUSH_MS. */
  changed(): void {
    this.#dirty = true;
    this.#timer ??= this.#clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#write();
    }, FLUSH_MS);
  }

  /** Writes what is pending now (at stop). */
  async flush(): Promise<void> {
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#write();
  }

  #write(): Promise<void> {
    this.#writing = this.#writing.then(async () => {
      if (!this.#dirty) return;
      this.#dirty = false;
      await this.#store
        .write(this.#current())
        .catch((error: unknown) => this.#failed(error instanceof Error ? error.message : String(error)));
    });
    return this.#writing;
  }
}
