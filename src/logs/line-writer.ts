// The request log's one writer: lines are queued and written in batches by one loop, so a request
// never waits on the disk. The queue is bounded in lines: while the output stalls, lines beyond it
// are dropped and counted (gateway_request_log_lines_total{outcome="dropped"}), never held without
// bound. A file output rotates by size and reopens on demand (SIGHUP) between two writes, so no
// queued line is lost to either.

/** Where the batches go: standard output, or a file (request-log-file.ts). */
export interface LineOutput {
  /** Writes the text whole (resolves once it is handed to the OS). */
  write(text: string): Promise<void>;
  /** Bytes already in the current file (0 for stdout). */
  size(): number;
  /** Whether the next `bytes` would take the current file past its bound: rotate first. */
  full(bytes: number): boolean;
  rotate(): Promise<void>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export interface LineFigures {
  readonly written: number;
  readonly dropped: number;
  /** Lines queued now. */
  readonly queued: number;
}

/** Bytes written per batch at most: a rotation is judged per batch, and a big queue goes in steps. */
const BATCH_BYTES = 64 * 1024;

export class LineWriter {
  readonly #output: LineOutput;
  readonly #maxQueued: number;
  readonly #onError: (error: unknown) => void;
  #queue: string[] = [];
  #written = 0;
  #dropped = 0;
  #running: Promise<void> | undefined;
  #reopenAsked = false;
  #reopenWaiters: (() => void)[] = [];
  #failing = false;
  #closed = false;

  constructor(output: LineOutput, maxQueued: number, onError: (error: unknown) => void) {
    this.#output = output;
    this.#maxQueued = maxQueued;
    this.#onError = onError;
  }

  /** Queues one newline-terminated line; over the bound (or once closed) it is dropped and counted. */
  write(line: string): void {
    if (this.#closed || this.#queue.length >= this.#maxQueued) {
      this.#dropped += 1;
      return;
    }
    this.#queue.push(line);
    this.#run();
  }

  /** Closes and opens the file again between two writes (logrotate moved it away): resolves once reopened. */
  reopen(): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#reopenWaiters.push(resolve);
    this.#reopenAsked = true;
    this.#run();
    return promise;
  }

  /** Resolves once every line queued so far is written (or dropped). */
  async flushed(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Writes what is queued, then closes the output; later lines are dropped. */
  async close(): Promise<void> {
    await this.flushed();
    this.#closed = true;
    await this.#output.close();
  }

  figures(): LineFigures {
    return { written: this.#written, dropped: this.#dropped, queued: this.#queue.length };
  }

  #run(): void {
    if (this.#running !== undefined) return;
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
    });
  }

  async #loop(): Promise<void> {
    // Yield first: the lines of one tick go in one batch.
    await Promise.resolve();
    while (this.#queue.length > 0 || this.#reopenAsked) {
      if (this.#reopenAsked) await this.#reopenNow();
      if (this.#queue.length === 0) continue;
      const { text, lines } = this.#takeBatch();
      try {
        if (this.#output.size() > 0 && this.#output.full(Buffer.byteLength(text))) await this.#output.rotate();
        await this.#output.write(text);
        this.#written += lines;
        this.#failing = false;
      } catch (error) {
        this.#dropped += lines;
        // Told once per failing spell, not once per batch.
        if (!this.#failing) this.#onError(error);
        this.#failing = true;
      }
    }
  }

  async #reopenNow(): Promise<void> {
    this.#reopenAsked = false;
    const waiters = this.#reopenWaiters.splice(0);
    try {
      await this.#output.reopen();
    } catch (error) {
      this.#onError(error);
    }
    for (const resolve of waiters) resolve();
  }

  /** The next lines up to BATCH_BYTES (at least one line). */
  #takeBatch(): { text: string; lines: number } {
    let bytes = 0;
    let count = 0;
    while (count < this.#queue.length) {
      const next = (this.#queue[count] ?? '').length;
      if (count > 0 && bytes + next > BATCH_BYTES) break;
      bytes += next;
      count += 1;
    }
    const taken = this.#queue.splice(0, count);
    return { text: taken.join(''), lines: count };
  }
}
