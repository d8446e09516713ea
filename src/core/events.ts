// A tiny typed event bus: producers (registry, proxy) publish; metrics and logs subscribe.
// Listeners run synchronously and must not throw or block; a throwing listener is isolated.
//
// Three ways to listen, so that an event every request emits costs a request only what must happen
// at once (passive health, a log line for a failure):
// - `on`: runs at every emit.
// - `onUnless`: runs at every emit except those whose payload has one of `values` in `field` (the
//   bus compares, the listener is not called): a listener that cares about failures only.
// - `deferred`: for a surface that shows what it builds from the payloads (counts, histograms, the
//   last requests). Each emit stores the payload (and the time, when a clock is given) in the
//   listener's own fixed journal; the listener runs later, for every stored payload in order, when
//   the journal is full or when a reader asks (`flush()`, before it reads what the listener built).
//   What the surface shows is exactly what it would show had it run at each emit.

import type { Clock } from './clock.ts';

export type Listener<T> = (payload: T) => void;

/** Payloads a deferred listener's journal keeps before it runs for them. */
export const DEFERRED_CAPACITY = 256;

interface Entry {
  readonly listener: Listener<never>;
  /** `onUnless`: the payload field compared, and the values for which the listener is not called. */
  readonly field: PropertyKey | undefined;
  readonly skip: ReadonlySet<unknown> | undefined;
}

class Journal {
  readonly payloads: unknown[];
  readonly times: Float64Array;
  count = 0;
  readonly listener: (payload: never, at: number) => void;
  readonly clock: Pick<Clock, 'now'> | undefined;

  constructor(listener: (payload: never, at: number) => void, clock: Pick<Clock, 'now'> | undefined, capacity: number) {
    this.listener = listener;
    this.clock = clock;
    this.payloads = new Array<unknown>(capacity).fill(undefined);
    this.times = new Float64Array(capacity);
  }
}

export class EventBus<Events extends object> {
  // Arrays replaced on every (un)subscription, never changed in place: an emit walks them by index
  // (no iterator allocated) and a listener that (un)subscribes during an emit changes the next one.
  readonly #listeners = new Map<keyof Events, readonly Entry[]>();
  readonly #journals = new Map<keyof Events, readonly Journal[]>();
  readonly #onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void = () => {}) {
    this.#onListenerError = onListenerError;
  }

  on<K extends keyof Events>(name: K, listener: Listener<Events[K]>): () => void {
    return this.#add(name, { listener: listener as Listener<never>, field: undefined, skip: undefined });
  }

  /** Like `on`, but not called for a payload whose `field` holds one of `values`. */
  onUnless<K extends keyof Events, F extends keyof Events[K]>(
    name: K,
    field: F,
    values: ReadonlySet<Events[K][F]>,
    listener: Listener<Events[K]>,
  ): () => void {
    return this.#add(name, { listener: listener as Listener<never>, field, skip: values as ReadonlySet<unknown> });
  }

  /**
   * A listener run later for every payload in order (see the header), with the epoch ms `clock` read
   * at the emit (0 without a clock). Unsubscribing runs it for the payloads still kept first.
   */
  deferred<K extends keyof Events>(
    name: K,
    listener: (payload: Events[K], at: number) => void,
    clock?: Pick<Clock, 'now'>,
    capacity = DEFERRED_CAPACITY,
  ): () => void {
    const journal = new Journal(listener as (payload: never, at: number) => void, clock, capacity);
    this.#journals.set(name, [...(this.#journals.get(name) ?? []), journal]);
    return () => {
      this.#drain(journal);
      this.#journals.set(
        name,
        (this.#journals.get(name) ?? []).filter((j) => j !== journal),
      );
    };
  }

  /** Runs every deferred listener for the payloads its journal holds: call before reading what they built. */
  flush(): void {
    for (const journals of this.#journals.values()) for (const journal of journals) this.#drain(journal);
  }

  emit<K extends keyof Events>(name: K, payload: Events[K]): void {
    const entries = this.#listeners.get(name);
    if (entries !== undefined) {
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i] as Entry;
        if (entry.skip !== undefined && entry.skip.has((payload as Record<PropertyKey, unknown>)[entry.field as PropertyKey]))
          continue;
        try {
          (entry.listener as Listener<Events[K]>)(payload);
        } catch (error) {
          this.#onListenerError(error);
        }
      }
    }
    const journals = this.#journals.get(name);
    if (journals === undefined) return;
    for (let i = 0; i < journals.length; i++) {
      const journal = journals[i] as Journal;
      const n = journal.count;
      journal.payloads[n] = payload;
      journal.times[n] = journal.clock === undefined ? 0 : journal.clock.now();
      journal.count = n + 1;
      if (n + 1 === journal.payloads.length) this.#drain(journal);
    }
  }

  #add(name: keyof Events, entry: Entry): () => void {
    this.#listeners.set(name, [...(this.#listeners.get(name) ?? []), entry]);
    return () => {
      this.#listeners.set(
        name,
        (this.#listeners.get(name) ?? []).filter((e) => e !== entry),
      );
    };
  }

  /** The journal's payloads, in order, to its listener; the journal is empty after (even if the listener emits). */
  #drain(journal: Journal): void {
    const count = journal.count;
    if (count === 0) return;
    // Copied out first: a listener that emits the same event writes the journal again (once per drain).
    const payloads = journal.payloads.slice(0, count);
    const times = journal.times.slice(0, count);
    journal.payloads.fill(undefined, 0, count);
    journal.count = 0;
    for (let i = 0; i < count; i++) {
      try {
        journal.listener(payloads[i] as never, times[i] ?? 0);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }
}
