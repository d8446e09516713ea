// The queue of every model with requests waiting (fair-queue.ts orders each one). Plain
// bookkeeping: who waits, in which order; the scheduler decides when the head may try again and
// what happens to it. A model's queue exists only while someone waits in it.

import type { TenantPriority } from '#src/core/tenant-class.ts';
import { FairQueue, type ModelQueueReport, type QueueTicket } from './fair-queue.ts';

export class ModelQueues<T> {
  readonly #queues = new Map<string, FairQueue<T>>();
  /** The models with someone waiting (read as `open.size` on every admission and lease return: no call). */
  readonly open: ReadonlyMap<string, unknown> = this.#queues;

  depth(model: string): number {
    return this.#queues.get(model)?.size ?? 0;
  }

  depths(): Record<string, number> {
    return Object.fromEntries([...this.#queues].map(([model, queue]) => [model, queue.size]));
  }

  /** Models with someone waiting, in the order their queues were opened. */
  models(): string[] {
    return [...this.#queues.keys()];
  }

  /** Whether the head of any model's queue passes `test` (no array built: asked on every lease return). */
  someHead(test: (item: T) => boolean): boolean {
    for (const queue of this.#queues.values()) {
      const head = queue.head();
      if (head !== undefined && test(head)) return true;
    }
    return false;
  }

  /** The request the model's queue serves next. */
  head(model: string): T | undefined {
    return this.#queues.get(model)?.head();
  }

  push(model: string, item: T, ticket: QueueTicket): void {
    const queue = this.#queues.get(model) ?? new FairQueue<T>();
    queue.push(item, ticket);
    this.#queues.set(model, queue);
  }

  /** The head got its turn; returns whether it was there. */
  served(model: string, item: T, nowMs: number): boolean {
    return this.#leave(model, (queue) => queue.served(item, nowMs));
  }

  /** Removes `item` unserved wherever it stands; returns whether it was there. */
  remove(model: string, item: T, nowMs: number): boolean {
    return this.#leave(model, (queue) => queue.remove(item, nowMs));
  }

  /** Raises the model's requests whose aging time has come. */
  age(model: string, nowMs: number): void {
    this.#queues.get(model)?.age(nowMs);
  }

  /** The request a newcomer of `priority` displaces from the model's full queue (still queued), if any is lower. */
  victimFor(model: string, priority: TenantPriority): T | undefined {
    return this.#queues.get(model)?.victimFor(priority);
  }

  /** Who has waited longest for `model`. */
  oldest(model: string): T | undefined {
    return this.#queues.get(model)?.oldest();
  }

  /** Whether anyone waiting for `model` matches. */
  some(model: string, match: (item: T) => boolean): boolean {
    return this.#queues.get(model)?.some(match) ?? false;
  }

  /** Every model's waiting requests by class and tenant. */
  report(): Record<string, ModelQueueReport> {
    return Object.fromEntries([...this.#queues].map(([model, queue]) => [model, queue.report()]));
  }

  #leave(model: string, take: (queue: FairQueue<T>) => boolean): boolean {
    const queue = this.#queues.get(model);
    if (queue === undefined || !take(queue)) return false;
    if (queue.size === 0) this.#queues.delete(model);
    return true;
  }
}
