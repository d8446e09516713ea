// Work that must run one at a time, in the order it was asked for (reloads: SIGHUP and the admin API
// may race). A failed run does not stop the ones after it.

export class OneAtATime {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(work);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}
