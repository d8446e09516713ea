// The owner's side of the workers' fleet mirror: what it last pushed, and what to push when the
// fleet as the request path reads it has changed since. The registry's views are a new array on
// every change, so identity is their test; the router rooms (a few entries, one per limited
// router) are compared by value, since lease counts and switches change them without a new view,
// and cross alone then (the views are the large part).

import type { NodeView } from '#src/nodes/index.ts';
import type { RouterRoom } from '#src/routing/index.ts';
import type { OwnerMessage, ViewsUpdate } from './protocol.ts';

/** Where the fleet update is read from: the registry, the config in force, the scheduler. */
export interface FleetSource {
  views(): readonly NodeView[];
  connectionLimit(): number | undefined;
  rooms(): readonly RouterRoom[];
}

export class FleetSync {
  readonly #source: FleetSource;
  #last: ViewsUpdate;
  #rooms: string;

  constructor(source: FleetSource) {
    this.#source = source;
    this.#last = this.#read();
    this.#rooms = JSON.stringify(this.#last.rooms);
  }

  /** The fleet last handed out (what a worker starting now begins with). */
  current(): ViewsUpdate {
    return this.#last;
  }

  /** What changed since the last push: the whole fleet, the rooms alone, or nothing. */
  next(): OwnerMessage | undefined {
    const next = this.#read();
    const last = this.#last;
    const rooms = JSON.stringify(next.rooms);
    const viewsChanged = next.views !== last.views || next.connectionLimit !== last.connectionLimit;
    if (!viewsChanged && rooms === this.#rooms) return undefined;
    this.#last = next;
    this.#rooms = rooms;
    return viewsChanged ? { t: 'fleet', fleet: next } : { t: 'rooms', rooms: next.rooms };
  }

  #read(): ViewsUpdate {
    const source = this.#source;
    return { views: source.views(), connectionLimit: source.connectionLimit(), rooms: source.rooms() };
  }
}
