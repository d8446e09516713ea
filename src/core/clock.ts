// The only way code reads time or schedules it: loops take a Clock, pure functions take `now`.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Monotonic milliseconds, for measuring durations. */
  monotonicMs(): number;
  setTimeout(fn: () => void, ms: number): Timer;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonicMs: () => performance.now(),
  setTimeout(fn: () => void, ms: number): Timer {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return new SystemTimer(handle);
  },
});

/** A timer of the system clock: one object, its cancel a method (no closure per timer: requests set them). */
class SystemTimer implements Timer {
  readonly #handle: NodeJS.Timeout;

  constructor(handle: NodeJS.Timeout) {
    this.#handle = handle;
  }

  cancel(): void {
    clearTimeout(this.#handle);
  }
}

/** Resolves after `ms` on the given clock, or rejects when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A clock for tests: time moves only when `advance` is called, and timers due by then fire in order.
 */
export class ManualClock implements Clock {
  #now: number;
  #timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  #seq = 0;

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  monotonicMs(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const entry = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(entry);
    return {
      cancel: () => {
        entry.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in due order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      due.cancelled = true;
      this.#now = due.at;
      due.fn();
    }
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    this.#now = target;
  }

  pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }
}
