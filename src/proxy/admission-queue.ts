// A bounded FIFO per model of requests waiting for a slot or context budget. Only the head of a
// model's queue is woken (when a lease of that model returns, or capacity may have changed), so
// requests are served in arrival order; each waits at most until its own deadline.

import type { Clock, Timer } from '#src/core/clock.ts';

export type WaitOutcome = 'woken' | 'timeout' | 'aborted';

export interface QueueTicket {
  /** Resolves when this ticket is woken at the head, its deadline passes, or the signal aborts. */
  wait(): Promise<WaitOutcome>;
  /** Leaves the queue (after admission or giving up); idempotent. */
  leave(): void;
  readonly enteredAtMs: number;
}

interface Waiter {
  readonly deadlineMs: number;
  readonly enteredAtMs: number;
  resolve: ((outcome: WaitOutcome) => void) | undefined;
  /** A wake that came while the waiter was not waiting (between two tries) is kept, not lost. */
  pendingWake: boolean;
  timer: Timer | undefined;
}

export class AdmissionQueue {
  readonly #clock: Clock;
  readonly #queues = new Map<string, Waiter[]>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  depth(model: string): number {
    return this.#queues.get(model)?.length ?? 0;
  }

  depths(): Record<string, number> {
    return Object.fromEntries([...this.#queues].map(([model, waiters]) => [model, waiters.length]));
  }

  enter(model: string, timeoutMs: number, signal: AbortSignal): QueueTicket {
    const now = this.#clock.monotonicMs();
    const waiter: Waiter = { deadlineMs: now + timeoutMs, enteredAtMs: now, resolve: undefined, pendingWake: false, timer: undefined };
    const queue = this.#queues.get(model) ?? [];
    queue.push(waiter);
    this.#queues.set(model, queue);
    const settle = (outcome: WaitOutcome): void => {
      const resolve = waiter.resolve;
      waiter.resolve = undefined;
      waiter.timer?.cancel();
      waiter.timer = undefined;
      resolve?.(outcome);
    };
    const onAbort = (): void => settle('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const leave = (): void => {
      signal.removeEventListener('abort', onAbort);
      settle('aborted');
      const current = this.#queues.get(model);
      if (current === undefined) return;
      const index = current.indexOf(waiter);
      if (index >= 0) current.splice(index, 1);
      if (current.length === 0) this.#queues.delete(model);
    };
    return {
      enteredAtMs: now,
      leave,
      wait: () =>
        new Promise<WaitOutcome>((resolve) => {
          if (signal.aborted) return resolve('aborted');
          const remainingMs = waiter.deadlineMs - this.#clock.monotonicMs();
          if (remainingMs <= 0) return resolve('timeout');
          if (waiter.pendingWake) {
            waiter.pendingWake = false;
            return resolve('woken');
          }
          waiter.resolve = resolve;
          waiter.timer = this.#clock.setTimeout(() => settle('timeout'), remainingMs);
        }),
    };
  }

  /** Wakes the head waiter of `model`, if any. */
  wake(model: string): void {
    const head = this.#queues.get(model)?.[0];
    if (head === undefined) return;
    if (head.resolve === undefined) {
      head.pendingWake = true;
      return;
    }
    const resolve = head.resolve;
    head.resolve = undefined;
    head.timer?.cancel();
    resolve('woken');
  }

  /** Wakes the head of every model's queue (capacity or health changed somewhere). */
  wakeAll(): void {
    for (const model of this.#queues.keys()) this.wake(model);
  }
}
