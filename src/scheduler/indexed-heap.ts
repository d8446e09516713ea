// A binary min-heap that also removes any item it holds in O(log n) (it knows each item's place):
// what a queue needs whose members may leave from anywhere (timeouts, aborts) while the order of
// the rest is read at its top.

export class IndexedHeap<T> {
  readonly #before: (a: T, b: T) => boolean;
  readonly #items: T[] = [];
  readonly #index = new Map<T, number>();

  /** `before(a, b)`: whether `a` comes out before `b` (a strict order; ties must be broken by the caller). */
  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  has(item: T): boolean {
    return this.#index.has(item);
  }

  push(item: T): void {
    if (this.#index.has(item)) return;
    this.#items.push(item);
    this.#index.set(item, this.#items.length - 1);
    this.#up(this.#items.length - 1);
  }

  /** Removes `item` wherever it stands; returns whether it was there. */
  remove(item: T): boolean {
    const at = this.#index.get(item);
    if (at === undefined) return false;
    this.#index.delete(item);
    const last = this.#items.pop();
    if (last === undefined || at === this.#items.length) return true;
    this.#items[at] = last;
    this.#index.set(last, at);
    this.#up(at);
    this.#down(this.#index.get(last) ?? at);
    return true;
  }

  values(): IterableIterator<T> {
    return this.#items.values();
  }

  #up(start: number): void {
    let at = start;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.#less(at, parent)) return;
      this.#swap(at, parent);
      at = parent;
    }
  }

  #down(start: number): void {
    let at = start;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let least = at;
      if (left < this.#items.length && this.#less(left, least)) least = left;
      if (right < this.#items.length && this.#less(right, least)) least = right;
      if (least === at) return;
      this.#swap(at, least);
      at = least;
    }
  }

  #less(i: number, j: number): boolean {
    const a = this.#items[i];
    const b = this.#items[j];
    return a !== undefined && b !== undefined && this.#before(a, b);
  }

  #swap(i: number, j: number): void {
    const a = this.#items[i];
    const b = this.#items[j];
    if (a === undefined || b === undefined) return;
    this.#items[i] = b;
    this.#items[j] = a;
    this.#index.set(b, i);
    this.#index.set(a, j);
  }
}
