// A FIFO per model of requests waiting for their turn. Plain bookkeeping: who waits, in which
// order; the scheduler decides when the head may try again and what happens to it.

export class ModelQueues<T> {
  readonly #queues = new Map<string, T[]>();

  depth(model: string): number {
    return this.#queues.get(model)?.length ?? 0;
  }

  depths(): Record<string, number> {
    return Object.fromEntries([...this.#queues].map(([model, waiting]) => [model, waiting.length]));
  }

  /** Models with someone waiting, in the order their queues were opened. */
  models(): string[] {
    return [...this.#queues.keys()];
  }

  head(model: string): T | undefined {
    return this.#queues.get(model)?.[0];
  }

  push(model: string, item: T): void {
    const queue = this.#queues.get(model) ?? [];
    queue.push(item);
    this.#queues.set(model, queue);
  }

  /** Removes `item` wherever it stands; returns whether it was there. */
  remove(model: string, item: T): boolean {
    const queue = this.#queues.get(model);
    const index = queue?.indexOf(item) ?? -1;
    if (queue === undefined || index < 0) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.#queues.delete(model);
    return true;
  }
}
