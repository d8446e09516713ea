// The owner's side of the workers' fleet mirror: what it last pushed, and what to push when the
// fleet as the request path reads it has changed since. The registry's views are a new array on
// every change, and each node's view a new object only when that node changed, so identity is
// their test: while the nodes stay the same (names, order, connection limit), only the views that
// changed cross, at their index — a learned figure on one node of a thousand sends one view, not
// the fleet to every worker (each push is cloned once per worker and rebuilt in each) — and when
// nothing but its learned figures moved, only those figures cross (protocol.ts LearnedChange). A node
// added, removed or moved sends the whole fleet. The router rooms (a few entries, one per limited
// router) are compared by value, since lease counts and switches change them without a new view,
// and cross alone then.

import { sameBesidesLearned, type NodeView } from '#src/nodes/index.ts';
import type { RouterRoom } from '#src/routing/index.ts';
import type { ChangedView, LearnedChange, OwnerMessage, ViewsUpdate } from './protocol.ts';

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

  /** What changed since the last push: the whole fleet, the changed views, the rooms alone, or nothing. */
  next(): OwnerMessage | undefined {
    const next = this.#read();
    const last = this.#last;
    const rooms = JSON.stringify(next.rooms);
    const viewsChanged = next.views !== last.views || next.connectionLimit !== last.connectionLimit;
    if (!viewsChanged && rooms === this.#rooms) return undefined;
    this.#last = next;
    this.#rooms = rooms;
    if (!viewsChanged) return { t: 'rooms', rooms: next.rooms };
    const changed = next.connectionLimit === last.connectionLimit ? changedViews(last.views, next.views) : undefined;
    return changed === undefined ? { t: 'fleet', fleet: next } : { t: 'views', changed, rooms: next.rooms };
  }

  #read(): ViewsUpdate {
    const source = this.#source;
    return { views: source.views(), connectionLimit: source.connectionLimit(), rooms: source.rooms() };
  }
}

/** Pure: the views of `next` that are not those of `last` at their index; undefined when the nodes themselves differ. */
export function changedViews(last: readonly NodeView[], next: readonly NodeView[]): ChangedView[] | undefined {
  if (last.length !== next.length) return undefined;
  const changed: ChangedView[] = [];
  for (let i = 0; i < next.length; i += 1) {
    const before = last[i];
    const now = next[i];
    if (before === undefined || now === undefined || before.spec.name !== now.spec.name) return undefined;
    if (before !== now) changed.push([i, sameBesidesLearned(before, now) ? learnedOf(now) : now]);
  }
  return changed;
}

/** Pure: a view's learned figures, for a worker whose view of the node differs in nothing else. */
function learnedOf(view: NodeView): LearnedChange {
  return {
    node: view.spec.name,
    ...(view.tokenRatios === undefined ? {} : { tokenRatios: view.tokenRatios }),
    ...(view.decodeRates === undefined ? {} : { decodeRates: view.decodeRates }),
  };
}
