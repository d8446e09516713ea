// Replicas sharing one batch directory ([batch] shared_dir with [cluster]): the runner runs only
// while this replica holds the runner lease the cluster gives (through the feature list: batch
// never imports cluster). On taking it, the runner starts as after a restart — the lines the last
// holder left `sent` (it died, or lost the store, before their answers were kept) wait again,
// marked retried —; on losing it, it sends nothing more and lets its lines in flight finish (their
// answers are kept only where the line is still `sent`: never twice). Each turn waits for the one
// before, so a lease lost and taken again never starts the runner over its own lines in flight.
// Docs: docs/batch.md, "Replicas".

/** The runner lease as the batch feature sees it (the cluster's leader lease "batch"). */
export interface RunnerLease {
  /** Whether this replica holds the lease now. */
  held(): boolean;
  /** Told on every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** What follows the lease: the runner's start and stop. */
export interface Runs {
  start(): void;
  stop(): Promise<void>;
}

export class RunnerTurns {
  readonly #lease: RunnerLease;
  readonly #runs: Runs;
  readonly #failed: (error: unknown) => void;
  #running = false;
  #turn: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | undefined;

  /** `failed`: a turn's start or stop threw (logged; the next change of the lease tries again). */
  constructor(lease: RunnerLease, runs: Runs, failed: (error: unknown) => void) {
    this.#lease = lease;
    this.#runs = runs;
    this.#failed = failed;
  }

  /** Follows the lease from now on (starts the runner at once when it is held). */
  start(): void {
    this.#unsubscribe = this.#lease.onChange(() => this.#follow());
    this.#follow();
  }

  /** Whether this replica runs the jobs now. */
  running(): boolean {
    return this.#running;
  }

  /** Stops following; the runner stops (after any turn under way). */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#turn = this.#turn.then(() => this.#set(false));
    await this.#turn;
  }

  #follow(): void {
    if (this.#unsubscribe === undefined) return;
    const held = this.#lease.held();
    this.#turn = this.#turn.then(() => this.#set(held && this.#unsubscribe !== undefined));
  }

  async #set(run: boolean): Promise<void> {
    if (run === this.#running) return;
    this.#running = run;
    try {
      if (run) this.#runs.start();
      else await this.#runs.stop();
    } catch (error) {
      this.#failed(error);
    }
  }
}
