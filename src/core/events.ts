// A tiny typed event bus: producers (registry, proxy) publish; metrics and logs subscribe.
// Listeners run synchronously and must not throw or block; a throwing listener is isolated.

export type Listener<T> = (payload: T) => void;

export class EventBus<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<Listener<never>>>();
  readonly #onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void = () => {}) {
    this.#onListenerError = onListenerError;
  }

  on<K extends keyof Events>(name: K, listener: Listener<Events[K]>): () => void {
    let set = this.#listeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  emit<K extends keyof Events>(name: K, payload: Events[K]): void {
    const set = this.#listeners.get(name);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }
}
