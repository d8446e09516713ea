// The leader leases other features ask the cluster for, by name (cluster/leader-lease.ts is the
// one lease): the mesh's publication ("mesh": one replica of a site publishes its record) and the
// batch runner ("batch": one replica runs the jobs of the shared batch directory). A feature asks
// before the cluster starts and is given a view — whether this replica holds the lease now, and a
// word on every change —; the cluster holds each asked lease from its join to its stop.

/** A leader lease as the feature that asked for it sees it. */
export interface HeldLease {
  /** Whether this replica holds the lease now (false until the store's first answer). */
  held(): boolean;
  /** Told on every change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export interface LeaseAsk {
  readonly name: string;
  /** Whether this replica leads while the store cannot be reached (leader-lease.ts). */
  readonly leadsWhileUnreachable: boolean;
  /** What holding it means, for the log on every change. */
  readonly holding: string;
  readonly notHolding: string;
}

interface Asked {
  readonly ask: LeaseAsk;
  held: boolean | undefined;
  readonly listeners: Set<() => void>;
}

export class AskedLeases {
  readonly #asked = new Map<string, Asked>();

  /** The lease `ask.name` (asked once; a second ask gets the same view). */
  ask(ask: LeaseAsk): HeldLease {
    let asked = this.#asked.get(ask.name);
    if (asked === undefined) {
      asked = { ask, held: undefined, listeners: new Set() };
      this.#asked.set(ask.name, asked);
    }
    const entry = asked;
    return {
      held: () => entry.held === true,
      onChange: (listener) => {
        entry.listeners.add(listener);
        return () => entry.listeners.delete(listener);
      },
    };
  }

  asks(): readonly LeaseAsk[] {
    return [...this.#asked.values()].map((a) => a.ask);
  }

  /** Whether this replica holds `name` (undefined = not asked for, or no answer yet). */
  holding(name: string): boolean | undefined {
    return this.#asked.get(name)?.held;
  }

  asked(name: string): boolean {
    return this.#asked.has(name);
  }

  /** The lease's holder changed: the listeners are told. */
  set(name: string, held: boolean): void {
    const asked = this.#asked.get(name);
    if (asked === undefined || asked.held === held) return;
    asked.held = held;
    for (const listener of [...asked.listeners]) listener();
  }
}
